// Declarations shared by the two passes of the per-update statistics (stats.wgsl, then
// statsCombine.wgsl; host side: statsKernel in stats.ts), joined after each pass's own source: the
// uniform, the per-chunk record pass 1 writes and pass 2 reads, the u32 counters' slots, and the
// two fixed-order workgroup trees both passes use (so both sum in an order fixed by the sizes alone).

struct Stats {
  numTraj: u32,
  tp: u32,
  trajPerChunk: u32,
  chunks: u32,
  minibatches: u32,
  advLo: f32,
  advScale: f32,
  ratioLo: f32,
  ratioScale: f32,
  spreadBins: u32,   // pass 2: histogram bins in workgroups of their own (StatsConfig.spreadBins)
}

// HIST_BINS in workers/metrics.ts (statsKernel refuses any other value).
const HIST_BINS: u32 = 24u;

// Counters (StatsChunk.counts), u32 so that any order of adding them gives the same result.
const C_TOKENS: u32 = 0u;   // masked rows
const C_ZERO: u32 = 1u;     // masked rows with |adv| <= ADV_ZERO_TOL
const C_LOW: u32 = 2u;      // masked rows clipped below (PpoRow.clip == -1)
const C_HIGH: u32 = 3u;     // masked rows clipped above (+1)
const C_EQUAL: u32 = 4u;    // groups whose rewards are all equal (counted at the group's first row)
const C_GROUPS: u32 = 5u;   // groups (live first rows)
const C_LIVE: u32 = 6u;     // trajectories with turns
const C_COUNT: u32 = 7u;

// One chunk's partial results, partials[c]: STATS_CHUNK_WORDS (67) 4-byte words in stats.ts.
struct StatsChunk {
  counts: array<u32, C_COUNT>,
  advSum: f32,
  advMean: f32,     // advSum / max(tokens, 1): the center advM2 is taken about
  advM2: f32,       // sum over masked rows of (adv - advMean)^2
  ratioSum: f32,
  ratioMin: f32,    // F32_MAX without masked rows
  ratioMax: f32,    // -F32_MAX without masked rows
  entropySum: f32,
  klSum: f32,
  lossSum: f32,     // over all rows, masked or not
  lamMax: f32,      // max sequence log-ratio of the live trajectories (-F32_MAX: none)
  s1: f32,          // sum exp(lam - lamMax)
  s2: f32,          // sum exp(2 (lam - lamMax))
  advHist: array<u32, HIST_BINS>,
  ratioHist: array<u32, HIST_BINS>,
}

var<workgroup> treeA: array<vec4f, workgroupSize>;
var<workgroup> treeB: array<vec4f, workgroupSize>;
var<workgroup> treeU: array<vec4u, workgroupSize>;

// The first tree's operands per thread: sums (adv, ratio, entropy, kl), (loss sum, ratio min,
// ratio max, lam max), and u32 counters (pass 1: masked rows, adv ~ 0, clipped low, high).
struct Acc {
  sums: vec4f,
  ext: vec4f,
  counts: vec4u,
}

fn combineExt(x: vec4f, y: vec4f) -> vec4f {
  return vec4f(x.x + y.x, min(x.y, y.y), max(x.z, y.z), max(x.w, y.w));
}

// Every thread passes its own operands and gets the workgroup's result. Call in uniform control
// flow. Counters go through a tree too: a workgroup atomic that every thread adds to waits for
// all of them one by one on a GPU.
fn reduceAcc(lid: u32, a: Acc) -> Acc {
  treeA[lid] = a.sums;
  treeB[lid] = a.ext;
  treeU[lid] = a.counts;
  workgroupBarrier();
  for (var s = workgroupSize / 2u; s > 0u; s >>= 1u) {
    if (lid < s) {
      treeA[lid] += treeA[lid + s];
      treeB[lid] = combineExt(treeB[lid], treeB[lid + s]);
      treeU[lid] += treeU[lid + s];
    }
    workgroupBarrier();
  }
  let total = Acc(treeA[0], treeB[0], treeU[0]);
  workgroupBarrier();
  return total;
}

// The second tree's operands: sums (adv M2, ESS s1, s2, unused) and u32 counters (pass 1: live
// trajectories, groups, groups of equal rewards, unused).
struct Spread {
  sums: vec4f,
  counts: vec4u,
}

fn reduceSpread(lid: u32, x: Spread) -> Spread {
  treeA[lid] = x.sums;
  treeU[lid] = x.counts;
  workgroupBarrier();
  for (var s = workgroupSize / 2u; s > 0u; s >>= 1u) {
    if (lid < s) {
      treeA[lid] += treeA[lid + s];
      treeU[lid] += treeU[lid + s];
    }
    workgroupBarrier();
  }
  let total = Spread(treeA[0], treeU[0]);
  workgroupBarrier();
  return total;
}
