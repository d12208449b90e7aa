// Per-iteration statistics in one workgroup (reference: statsCpu in stats.ts). Each thread walks a
// strided slice of rows in order, then fixed trees in workgroup memory combine the partial sums, so
// results are the same on every run; counts and histograms use u32 workgroup atomics (exact).
// Output: out[STAT_*] scalars, then advHist[histBins], then ratioHist[histBins] (as f32 counts).

struct Stats {
  numRows: u32,
  numTraj: u32,
  tp: u32,
  minibatches: u32,
  advLo: f32,
  advScale: f32,
  ratioLo: f32,
  ratioScale: f32,
}

@group(0) @binding(0) var<uniform> u: Stats;
@group(0) @binding(1) var<storage, read> mask: array<f32>;          // [numRows] 0/1
@group(0) @binding(2) var<storage, read> adv: array<f32>;           // [numRows]
@group(0) @binding(3) var<storage, read> logp: array<f32>;          // [numRows]
@group(0) @binding(4) var<storage, read> logpOld: array<f32>;       // [numRows]
@group(0) @binding(5) var<storage, read> entropy: array<f32>;       // [numRows]
@group(0) @binding(6) var<storage, read> ppo: array<PpoRow>;        // [numRows] (ppoLoss.wgsl)
@group(0) @binding(7) var<storage, read> traj: array<TrajIn>;      // [numTraj]
@group(0) @binding(8) var<storage, read_write> out: array<f32>;     // [STAT_COUNT + 2 * histBins]

override workgroupSize: u32 = 256;
override histBins: u32 = 24;

// Output slots: the order of STATS_FIELDS in stats.ts.
const STAT_TOKENS: u32 = 0u;
const STAT_ADV_MEAN: u32 = 1u;
const STAT_ADV_STD: u32 = 2u;
const STAT_ADV_ZERO_FRAC: u32 = 3u;
const STAT_RATIO_MEAN: u32 = 4u;
const STAT_RATIO_MIN: u32 = 5u;
const STAT_RATIO_MAX: u32 = 6u;
const STAT_CLIP_FRAC_LOW: u32 = 7u;
const STAT_CLIP_FRAC_HIGH: u32 = 8u;
const STAT_ENTROPY: u32 = 9u;
const STAT_KL_REF: u32 = 10u;
const STAT_LOSS: u32 = 11u;
const STAT_GROUPS_ALL_EQUAL_FRAC: u32 = 12u;
const STAT_ESS: u32 = 13u;
const STAT_COUNT: u32 = 14u;

var<workgroup> red: array<f32, workgroupSize>;
var<workgroup> advHist: array<atomic<u32>, histBins>;
var<workgroup> ratioHist: array<atomic<u32>, histBins>;
var<workgroup> counts: array<atomic<u32>, 7>;   // tokens, adv == 0, clip low, clip high, equal groups, groups, live trajectories

fn clampLogRatio(i: u32) -> f32 {
  return clamp(logp[i] - logpOld[i], -20.0, 20.0);
}

// Same rounding steps as histBin in stats.ts: (x - lo) and the product are each rounded to f32.
fn histBin(x: f32, lo: f32, scale: f32) -> u32 {
  let t = floor((x - lo) * scale);
  return u32(clamp(t, 0.0, f32(histBins - 1u)));
}

fn reduceSum(lid: u32, x: f32) -> f32 {
  red[lid] = x;
  workgroupBarrier();
  for (var s = workgroupSize / 2u; s > 0u; s >>= 1u) {
    if (lid < s) {
      red[lid] += red[lid + s];
    }
    workgroupBarrier();
  }
  let total = red[0];
  workgroupBarrier();
  return total;
}

fn reduceMin(lid: u32, x: f32) -> f32 {
  red[lid] = x;
  workgroupBarrier();
  for (var s = workgroupSize / 2u; s > 0u; s >>= 1u) {
    if (lid < s) {
      red[lid] = min(red[lid], red[lid + s]);
    }
    workgroupBarrier();
  }
  let total = red[0];
  workgroupBarrier();
  return total;
}

fn reduceMax(lid: u32, x: f32) -> f32 {
  red[lid] = x;
  workgroupBarrier();
  for (var s = workgroupSize / 2u; s > 0u; s >>= 1u) {
    if (lid < s) {
      red[lid] = max(red[lid], red[lid + s]);
    }
    workgroupBarrier();
  }
  let total = red[0];
  workgroupBarrier();
  return total;
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

@compute @workgroup_size(workgroupSize)
fn main(@builtin(local_invocation_index) lid: u32) {
  // Workgroup memory starts zeroed in WebGPU; the atomics need no explicit reset.
  var advSum = 0.0;
  var rSum = 0.0;
  var rMin = F32_MAX;
  var rMax = -F32_MAX;
  var ent = 0.0;
  var kl = 0.0;
  var loss = 0.0;
  var nTok = 0u;
  var nZero = 0u;
  var nLow = 0u;
  var nHigh = 0u;
  for (var i = lid; i < u.numRows; i += workgroupSize) {
    let row = ppo[i];
    loss += row.loss;
    if (mask[i] == 0.0) {
      continue;
    }
    nTok += 1u;
    let a = adv[i];
    advSum += a;
    nZero += select(0u, 1u, a == 0.0);
    let lr = clampLogRatio(i);
    let r = exp(lr);
    rSum += r;
    rMin = min(rMin, r);
    rMax = max(rMax, r);
    nLow += select(0u, 1u, row.clip == -1);
    nHigh += select(0u, 1u, row.clip == 1);
    ent += entropy[i];
    kl += row.kl;
    atomicAdd(&advHist[histBin(a, u.advLo, u.advScale)], 1u);
    atomicAdd(&ratioHist[histBin(lr, u.ratioLo, u.ratioScale)], 1u);
  }
  atomicAdd(&counts[0], nTok);
  atomicAdd(&counts[1], nZero);
  atomicAdd(&counts[2], nLow);
  atomicAdd(&counts[3], nHigh);

  let advTotal = reduceSum(lid, advSum);
  let rTotal = reduceSum(lid, rSum);
  let rLo = reduceMin(lid, rMin);
  let rHi = reduceMax(lid, rMax);
  let entTotal = reduceSum(lid, ent);
  let klTotal = reduceSum(lid, kl);
  let lossTotal = reduceSum(lid, loss);
  let count = atomicLoad(&counts[0]);
  let c = f32(max(count, 1u));
  let advMean = advTotal / c;

  var advVar = 0.0;
  for (var i = lid; i < u.numRows; i += workgroupSize) {
    if (mask[i] != 0.0) {
      let e = adv[i] - advMean;
      advVar += e * e;
    }
  }
  let advVarTotal = reduceSum(lid, advVar);

  var nEqual = 0u;
  var nGroups = 0u;
  var nLive = 0u;
  for (var n = lid; n < u.numTraj; n += workgroupSize) {
    let t = traj[n];
    if (t.turns == 0u) {
      continue;
    }
    nLive += 1u;
    if (t.groupStart != n) {
      continue;
    }
    nGroups += 1u;
    var same = 1u;
    for (var k = 1u; k < t.groupSize; k++) {
      if (traj[n + k].reward != t.reward) {
        same = 0u;
      }
    }
    nEqual += same;
  }
  atomicAdd(&counts[4], nEqual);
  atomicAdd(&counts[5], nGroups);
  atomicAdd(&counts[6], nLive);

  // ESS = exp(2 LSE(lam) - LSE(2 lam)) / N = exp(2 log s1 - log s2) / N with m = max lam,
  // s1 = sum exp(lam - m), s2 = sum exp(2 lam - 2 m): the large m cancels before any exp.
  var lamMax = -F32_MAX;
  for (var n = lid; n < u.numTraj; n += workgroupSize) {
    if (traj[n].turns != 0u) {
      lamMax = max(lamMax, seqLogRatio(n));
    }
  }
  let m = reduceMax(lid, lamMax);
  var s1 = 0.0;
  var s2 = 0.0;
  for (var n = lid; n < u.numTraj; n += workgroupSize) {
    if (traj[n].turns != 0u) {
      let e = seqLogRatio(n) - m;
      s1 += exp(e);
      s2 += exp(2.0 * e);
    }
  }
  let s1Total = reduceSum(lid, s1);
  let s2Total = reduceSum(lid, s2);
  workgroupBarrier();

  if (lid == 0u) {
    let has = count > 0u;
    out[STAT_TOKENS] = f32(count);
    out[STAT_ADV_MEAN] = advMean;
    out[STAT_ADV_STD] = sqrt(advVarTotal / c);
    out[STAT_ADV_ZERO_FRAC] = f32(atomicLoad(&counts[1])) / c;
    out[STAT_RATIO_MEAN] = select(1.0, rTotal / c, has);
    out[STAT_RATIO_MIN] = select(1.0, rLo, has);
    out[STAT_RATIO_MAX] = select(1.0, rHi, has);
    out[STAT_CLIP_FRAC_LOW] = f32(atomicLoad(&counts[2])) / c;
    out[STAT_CLIP_FRAC_HIGH] = f32(atomicLoad(&counts[3])) / c;
    out[STAT_ENTROPY] = entTotal / c;
    out[STAT_KL_REF] = klTotal / c;
    out[STAT_LOSS] = lossTotal / f32(max(u.minibatches, 1u));
    let groups = atomicLoad(&counts[5]);
    let live = atomicLoad(&counts[6]);
    out[STAT_GROUPS_ALL_EQUAL_FRAC] = select(0.0, f32(atomicLoad(&counts[4])) / f32(max(groups, 1u)), groups > 0u);
    out[STAT_ESS] = select(1.0, exp(2.0 * log(s1Total) - log(s2Total)) / f32(live), live > 0u);
    for (var b = 0u; b < histBins; b++) {
      out[STAT_COUNT + b] = f32(atomicLoad(&advHist[b]));
      out[STAT_COUNT + histBins + b] = f32(atomicLoad(&ratioHist[b]));
    }
  }
}
