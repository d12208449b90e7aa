// Per-update statistics, pass 1 of 2 (reference: statsCpu in stats.ts; pass 2: statsCombine.wgsl;
// shared declarations: statsChunk.wgsl; host side: statsKernel in stats.ts). The N trajectories
// are cut into `chunks` runs of trajPerChunk <= workgroupSize whole trajectories (trajectory n holds
// rows n tp .. n tp + tp - 1); workgroup c reduces chunk c into partials[c] (struct StatsChunk):
//   counters: masked rows, adv == 0, clip -1 and +1; live trajectories, groups starting in the
//     chunk, and those whose rewards are all equal;
//   over the masked rows: sums of adv, r = exp(clamp(l - l_old, -20, 20)), entropy and kl; min and
//     max of r; advMean_c = advSum_c / max(tokens_c, 1) and advM2_c = sum (adv - advMean_c)^2, a
//     second walk over the chunk's rows (pass 2 combines them by Chan et al.'s formula);
//   the loss sum over all rows;
//   the ESS parts of the live trajectories, lam_n = sum over n's masked rows of clamp(l - l_old):
//     lamMax_c = max lam_n, s1_c = sum exp(lam_n - lamMax_c), s2_c = sum exp(2 (lam_n - lamMax_c));
//   histogram counts of adv and of the clamped log-ratio, HIST_BINS fixed bins each.
// Thread t owns trajectory c trajPerChunk + t and walks the chunk's rows t, t + workgroupSize, ...
// in order; fixed trees in workgroup memory combine the threads, and counters and bins are u32
// workgroup atomics (exact in any order), so the record is the same bits on every run.

@group(0) @binding(0) var<uniform> u: Stats;
@group(0) @binding(1) var<storage, read> mask: array<f32>;               // [numRows] 0/1
@group(0) @binding(2) var<storage, read> adv: array<f32>;                // [numRows]
@group(0) @binding(3) var<storage, read> logp: array<f32>;               // [numRows]
@group(0) @binding(4) var<storage, read> logpOld: array<f32>;            // [numRows]
@group(0) @binding(5) var<storage, read> entropy: array<f32>;            // [numRows]
@group(0) @binding(6) var<storage, read> ppo: array<PpoRow>;             // [numRows] (ppoLoss.wgsl)
@group(0) @binding(7) var<storage, read> traj: array<TrajIn>;            // [numTraj]
@group(0) @binding(8) var<storage, read_write> partials: array<StatsChunk>; // [chunks]

override workgroupSize: u32 = 256;

fn clampLogRatio(i: u32) -> f32 {
  return clamp(logp[i] - logpOld[i], -20.0, 20.0);
}

// Same rounding steps as histBin in stats.ts: (x - lo) and the product are each rounded to f32.
fn histBin(x: f32, lo: f32, scale: f32) -> u32 {
  let t = floor((x - lo) * scale);
  return u32(clamp(t, 0.0, f32(HIST_BINS - 1u)));
}

// Sequence log-ratio of trajectory n: sum over its masked tokens of the clamped log-ratio.
fn seqLogRatio(n: u32) -> f32 {
  var acc = 0.0;
  for (var j = 0u; j < u.tp; j++) {
    let i = n * u.tp + j;
    if (mask[i] != 0.0) {
      acc += clampLogRatio(i);
    }
  }
  return acc;
}

// Counts live trajectory n, and its group if the group starts at n; returns its lam.
fn countTrajectory(n: u32) -> f32 {
  let t = traj[n];
  atomicAdd(&counts[C_LIVE], 1u);
  if (t.groupStart == n) {
    atomicAdd(&counts[C_GROUPS], 1u);
    var same = true;
    for (var k = 1u; k < t.groupSize; k++) {
      same = same && traj[n + k].reward == t.reward;
    }
    if (same) {
      atomicAdd(&counts[C_EQUAL], 1u);
    }
  }
  return seqLogRatio(n);
}

@compute @workgroup_size(workgroupSize)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  // Workgroup memory starts zeroed in WebGPU: the counters and bins need no reset.
  let c = flatWorkgroup(wid, nwg);
  let t0 = min(c * u.trajPerChunk, u.numTraj);
  let t1 = min(t0 + u.trajPerChunk, u.numTraj);
  let n = t0 + lid;
  let live = n < t1 && traj[n].turns != 0u;
  var lam = -F32_MAX;
  if (live) {
    lam = countTrajectory(n);
  }

  var acc = Acc(vec4f(0.0), vec4f(0.0, F32_MAX, -F32_MAX, lam));
  var nTok = 0u;
  var nZero = 0u;
  var nLow = 0u;
  var nHigh = 0u;
  let r1 = t1 * u.tp;
  for (var i = t0 * u.tp + lid; i < r1; i += workgroupSize) {
    let row = ppo[i];
    acc.ext.x += row.loss;
    if (mask[i] == 0.0) {
      continue;
    }
    nTok += 1u;
    let a = adv[i];
    nZero += select(0u, 1u, a == 0.0);
    let lr = clampLogRatio(i);
    let r = exp(lr);
    acc.sums += vec4f(a, r, entropy[i], row.kl);
    acc.ext.y = min(acc.ext.y, r);
    acc.ext.z = max(acc.ext.z, r);
    nLow += select(0u, 1u, row.clip == -1);
    nHigh += select(0u, 1u, row.clip == 1);
    atomicAdd(&advHist[histBin(a, u.advLo, u.advScale)], 1u);
    atomicAdd(&ratioHist[histBin(lr, u.ratioLo, u.ratioScale)], 1u);
  }
  atomicAdd(&counts[C_TOKENS], nTok);
  atomicAdd(&counts[C_ZERO], nZero);
  atomicAdd(&counts[C_LOW], nLow);
  atomicAdd(&counts[C_HIGH], nHigh);
  let total = reduceAcc(lid, acc);

  // The chunk's own mean: its squared deviations stay small however far it is from the batch mean.
  let tokens = atomicLoad(&counts[C_TOKENS]);
  let mean = total.sums.x / f32(max(tokens, 1u));
  var m2 = 0.0;
  for (var i = t0 * u.tp + lid; i < r1; i += workgroupSize) {
    if (mask[i] != 0.0) {
      let e = adv[i] - mean;
      m2 += e * e;
    }
  }
  // ESS parts about the chunk's largest lam, so no exp overflows.
  var s1 = 0.0;
  var s2 = 0.0;
  if (live) {
    let e = lam - total.ext.w;
    s1 = exp(e);
    s2 = exp(2.0 * e);
  }
  let spread = reduceSum4(lid, vec4f(m2, s1, s2, 0.0));

  if (c >= u.chunks) {
    return;
  }
  if (lid == 0u) {
    partials[c].advSum = total.sums.x;
    partials[c].advMean = mean;
    partials[c].advM2 = spread.x;
    partials[c].ratioSum = total.sums.y;
    partials[c].ratioMin = total.ext.y;
    partials[c].ratioMax = total.ext.z;
    partials[c].entropySum = total.sums.z;
    partials[c].klSum = total.sums.w;
    partials[c].lossSum = total.ext.x;
    partials[c].lamMax = total.ext.w;
    partials[c].s1 = spread.y;
    partials[c].s2 = spread.z;
  }
  if (lid < C_COUNT) {
    partials[c].counts[lid] = atomicLoad(&counts[lid]);
  }
  if (lid < HIST_BINS) {
    partials[c].advHist[lid] = atomicLoad(&advHist[lid]);
    partials[c].ratioHist[lid] = atomicLoad(&ratioHist[lid]);
  }
}
