// PPO's critic: GAE from the value table (gae), then the table's update in two passes
// (criticChunks, criticApply), each an entry point of this file with its own uniform (all at
// binding 0: no entry point uses two) over shared buffer declarations (each binds the ones it
// uses; host side: kernels/advantage/critic.ts).

@group(0) @binding(0) var<uniform> uGae: Gae;
@group(0) @binding(0) var<uniform> uCritic: CriticUpdate;
@group(0) @binding(1) var<storage, read_write> critic: array<f32>;  // [tableSize]
@group(0) @binding(2) var<storage, read> stateKey: array<u32>;  // [numTraj * tp], < tableSize
@group(0) @binding(3) var<storage, read> mask: array<f32>;  // [numTraj * tp]
@group(0) @binding(4) var<storage, read> trajIn: array<TrajIn>;  // [numTraj]
@group(0) @binding(5) var<storage, read_write> adv: array<f32>;  // [numTraj * tp]
@group(0) @binding(6) var<storage, read_write> ret: array<f32>;  // [numTraj * tp]
@group(0) @binding(7) var<storage, read_write> partials: array<vec2f>;  // [chunks, tableSize] (sum, count)

override workgroupSize: u32 = 64;

// PPO's advantage with a tabular critic (reference: gaeCpu in critic.ts), one thread per
// trajectory, over its masked rows in order (docs/METHODS.md 4.1, verl compute_gae_advantage_return):
//   V_j = critic[key_j];  r_j = 0, except the last masked row: the outcome reward R_n
//   delta_j = r_j + gamma V_{next} - V_j  (V after the last row = 0)
//   A_j = delta_j + gamma lambda A_{next};  returns_j = A_j + V_j
// Masked-out rows get A = 0 and returns = 0. Batch whitening of A follows (whiten.wgsl).

// One row of the backward walk: A and returns of row i from the row after it (vNext, aNext),
// written; returns (V_i, A_i) for the row before. A masked-out row gets zeros and passes them on.
fn gaeRow(i: u32, m: f32, v: f32, r: f32, next: vec2f) -> vec2f {
  if (m == 0.0) {
    adv[i] = 0.0;
    ret[i] = 0.0;
    return next;
  }
  let delta = r + uGae.gamma * next.x - v;
  let a = delta + uGae.gamma * uGae.lambda * next.y;
  adv[i] = a;
  ret[i] = a + v;
  return vec2f(v, a);
}

// The trajectory's rows are read four at a time (masks, then state keys, then the critic's
// values: every load of a step issued before the first is used), the walk itself stays in row
// order: a thread waits out three load latencies per four rows instead of three per row, which on
// an H200 left the kernel at 15 % of a copy's bandwidth. Same arithmetic as one row at a time.
@compute @workgroup_size(workgroupSize)
fn gae(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let n = flatWorkgroup(wid, nwg) * workgroupSize + lid;
  if (n >= uGae.numTraj) {
    return;
  }
  let base = n * uGae.tp;
  var last = -1;
  var j = 0u;
  for (; j + 3u < uGae.tp; j += 4u) {
    let m = vec4f(mask[base + j], mask[base + j + 1u], mask[base + j + 2u], mask[base + j + 3u]);
    for (var k = 0u; k < 4u; k++) {
      if (m[k] != 0.0) {
        last = i32(j + k);
      }
    }
  }
  for (; j < uGae.tp; j++) {
    if (mask[base + j] != 0.0) {
      last = i32(j);
    }
  }
  // Rows after the last masked one (none of them masked) get zeros.
  for (var k = u32(last + 1); k < uGae.tp; k++) {
    adv[base + k] = 0.0;
    ret[base + k] = 0.0;
  }
  if (last < 0) {
    return;
  }
  // The last masked row takes the reward (the first row of the first step); four rows a step, i
  // down to i - 3. The reward goes in through the walk as in the one-row version: a walk that
  // started from constants let SwiftShader fold (R - V) + V to R, a few ulps from the reference.
  let reward = trajIn[n].reward;
  let li = base + u32(last);
  var next = vec2f(0.0, 0.0);
  var jj = last;
  for (; jj >= 3; jj -= 4) {
    let i = base + u32(jj);
    let m = vec4f(mask[i], mask[i - 1u], mask[i - 2u], mask[i - 3u]);
    let key = vec4u(stateKey[i], stateKey[i - 1u], stateKey[i - 2u], stateKey[i - 3u]);
    let v = vec4f(critic[key.x], critic[key.y], critic[key.z], critic[key.w]);
    next = gaeRow(i, m.x, v.x, select(0.0, reward, i == li), next);
    next = gaeRow(i - 1u, m.y, v.y, 0.0, next);
    next = gaeRow(i - 2u, m.z, v.z, 0.0, next);
    next = gaeRow(i - 3u, m.w, v.w, 0.0, next);
  }
  for (; jj >= 0; jj--) {
    let i = base + u32(jj);
    next = gaeRow(i, mask[i], critic[stateKey[i]], select(0.0, reward, i == li), next);
  }
}

// The tabular critic's update (reference: criticUpdateCpu in critic.ts) in two passes, each an entry
// point of this file over the same declarations (each binds the buffers it uses).
// Pass 1 (criticChunks): per chunk c
// of rows, the sum of the returns and the count of the masked rows whose state is entry k,
//   partials[c, k] = (sum ret[r], count)   over r in chunk c with mask[r] != 0 and stateKey[r] = k.
// One workgroup per chunk: its invocations zero the chunk's private table together, then
// invocation 0 walks the chunk's rows in order. No two chunks share a word (no atomics) and each
// sum has a fixed order, so the result is the same bits on every run. Work numRows plus the
// zeroing of chunks * tableSize entries, where scanning every row per entry was tableSize * numRows.
// Chunk c holds rows c * rowsPerChunk onwards (at most rowsPerChunk, never past numRows).
// Pass 2 (criticApply, below) then adds the chunks in order and moves the table.
//
// Layout [chunks, tableSize], chunk-major: the zeroing here (neighbouring invocations, neighbouring
// entries of one table) and pass 2's reads (a thread per entry) are both coalesced; the scatter
// goes where the states say in either layout. Entry-major would only help a one-invocation zeroing.

@compute @workgroup_size(workgroupSize)
fn criticChunks(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let c = flatWorkgroup(wid, nwg);
  if (c >= uCritic.chunks) {
    return;
  }
  let table = c * uCritic.tableSize;
  // The scratch holds anything (another run's chunks, another kernel's data): clear it.
  for (var k = lid; k < uCritic.tableSize; k += workgroupSize) {
    partials[table + k] = vec2f(0.0);
  }
  storageBarrier();
  if (lid != 0u) {
    return;
  }
  let r0 = c * uCritic.rowsPerChunk;
  let r1 = min(r0 + uCritic.rowsPerChunk, uCritic.numRows);
  for (var r = r0; r < r1; r++) {
    let k = stateKey[r];
    // A key outside the table would land in the next chunk's: skipped, as no entry matches it.
    if (mask[r] != 0.0 && k < uCritic.tableSize) {
      partials[table + k] += vec2f(ret[r], 1.0);
    }
  }
}

// Pass 2 (criticApply): one thread per table entry
// adds the chunks' (sum, count) in chunk order, then
//   critic[k] += lr (sum / count - critic[k])     if count > 0
// (a step of lr on the squared value error 1/2 (V - ret)^2 averaged over the entry's rows).
// Entries no row visits keep their value, bit for bit.

@compute @workgroup_size(workgroupSize)
fn criticApply(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let k = flatWorkgroup(wid, nwg) * workgroupSize + lid;
  if (k >= uCritic.tableSize) {
    return;
  }
  var acc = vec2f(0.0);
  for (var c = 0u; c < uCritic.chunks; c++) {
    acc += partials[c * uCritic.tableSize + k];
  }
  if (acc.y > 0.0) {
    let v = critic[k];
    critic[k] = v + uCritic.lr * (acc.x / acc.y - v);
  }
}
