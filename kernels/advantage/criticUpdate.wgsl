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

struct CriticUpdate {
  tableSize: u32,
  numRows: u32,
  rowsPerChunk: u32,
  chunks: u32,
  lr: f32,
}

@group(0) @binding(0) var<uniform> u: CriticUpdate;

@group(0) @binding(1) var<storage, read> stateKey: array<u32>;           // [numRows]
@group(0) @binding(2) var<storage, read> mask: array<f32>;               // [numRows]
@group(0) @binding(3) var<storage, read> ret: array<f32>;                // [numRows]
@group(0) @binding(4) var<storage, read_write> partials: array<vec2f>;   // [chunks, tableSize] (sum, count)
@group(0) @binding(5) var<storage, read_write> critic: array<f32>;       // [tableSize]

override workgroupSize: u32 = 64;

@compute @workgroup_size(workgroupSize)
fn criticChunks(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let c = flatWorkgroup(wid, nwg);
  if (c >= u.chunks) {
    return;
  }
  let table = c * u.tableSize;
  // The scratch holds anything (another run's chunks, another kernel's data): clear it.
  for (var k = lid; k < u.tableSize; k += workgroupSize) {
    partials[table + k] = vec2f(0.0);
  }
  storageBarrier();
  if (lid != 0u) {
    return;
  }
  let r0 = c * u.rowsPerChunk;
  let r1 = min(r0 + u.rowsPerChunk, u.numRows);
  for (var r = r0; r < r1; r++) {
    let k = stateKey[r];
    // A key outside the table would land in the next chunk's: skipped, as no entry matches it.
    if (mask[r] != 0.0 && k < u.tableSize) {
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
  if (k >= u.tableSize) {
    return;
  }
  var acc = vec2f(0.0);
  for (var c = 0u; c < u.chunks; c++) {
    acc += partials[c * u.tableSize + k];
  }
  if (acc.y > 0.0) {
    let v = critic[k];
    critic[k] = v + u.lr * (acc.x / acc.y - v);
  }
}
