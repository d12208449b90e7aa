// Per-update statistics in two passes (reference: statsCpu in stats.ts; host side: statsKernel in
// stats.ts), each an entry point of this file over the same declarations (each binds the buffers
// it uses): the uniform, the per-chunk record pass 1 writes and pass 2 reads, the u32 counters'
// slots, and the two fixed-order workgroup trees both passes use.
// Pass 1 (statsChunks). The N trajectories
// are cut into `chunks` runs of trajPerChunk <= workgroupSize whole trajectories (trajectory n holds
// rows n tp .. n tp + tp - 1); workgroup c reduces chunk c into partials[c] (struct StatsChunk):
//   counters: masked rows, |adv| <= ADV_ZERO_TOL (workers/core/metrics.ts, appended by stats.ts), clip
//     -1 and +1; live trajectories, groups starting in the chunk, and those whose rewards are all
//     equal;
//   over the masked rows: sums of adv, r = exp(clamp(l - l_old, -20, 20)), entropy and kl; min and
//     max of r; advMean_c = advSum_c / max(tokens_c, 1) and advM2_c = sum (adv - advMean_c)^2, a
//     second walk over the chunk's rows (pass 2 combines them by Chan et al.'s formula);
//   the loss sum over all rows;
//   the ESS parts of the live trajectories, lam_n = sum over n's masked rows of clamp(l - l_old):
//     lamMax_c = max lam_n, s1_c = sum exp(lam_n - lamMax_c), s2_c = sum exp(2 (lam_n - lamMax_c));
//   histogram counts of adv and of the clamped log-ratio, HIST_BINS fixed bins each.
// Thread t walks the chunk's rows t, t + workgroupSize, ... in order, four a round with all their
// loads issued first, keeping each row's masked log-ratio in workgroup memory; then thread t owns
// trajectory c trajPerChunk + t and sums its lam from there (on a GPU, that sum read from global
// memory was a chain of tp dependent round trips). Fixed trees in workgroup memory combine the
// threads' sums and counters, and histogram bins are u32 workgroup atomics (exact in any order,
// in copies that spread the threads' adds), so the record is the same bits on every run.

// Pass 2 (statsCombine). Workgroup 0 does all but the histograms: thread t combines chunks
// t, t + workgroupSize, ... in that order, then fixed trees combine the threads:
//   counters: exact u32 sums;  sums: f32 sums;  ratio min / max: min / max;
//   adv:  mean = sum_c advSum_c / max(tokens, 1),
//         M2 = sum_c [advM2_c + tokens_c (advMean_c - mean)^2]   (Chan, Golub & LeVeque 1979),
//         std = sqrt(M2 / max(tokens, 1)): every term is >= 0, no cancellation;
//   ESS:  M = max_c lamMax_c,  S1 = sum_c s1_c exp(lamMax_c - M),  S2 = sum_c s2_c exp(2 (lamMax_c - M))
//         over chunks with live trajectories, ess = exp(2 log S1 - log S2) / live (1 without any);
// and writes the out[STAT_*] scalars. The histogram bins (exact u32 sums) go to out[STAT_COUNT ..]:
// advHist[HIST_BINS], then ratioHist[HIST_BINS] (as f32 counts), added up by workgroups
// 1 .. HIST_WORKGROUPS, four each (u.spreadBins: histogramWords), or by workgroup 0 (laneWordSum).
// Masked means divide by max(tokens, 1); ratio mean, min and max are 1 without masked rows.

// HIST_BINS in workers/core/metrics.ts (statsKernel refuses any other value).
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

@group(0) @binding(0) var<uniform> u: Stats;
@group(0) @binding(1) var<storage, read> mask: array<f32>;               // [numRows] 0/1
@group(0) @binding(2) var<storage, read> adv: array<f32>;                // [numRows]
@group(0) @binding(3) var<storage, read> logp: array<f32>;               // [numRows]
@group(0) @binding(4) var<storage, read> logpOld: array<f32>;            // [numRows]
@group(0) @binding(5) var<storage, read> entropy: array<f32>;            // [numRows]
@group(0) @binding(6) var<storage, read> ppo: array<PpoRow>;             // [numRows] (ppoLoss.wgsl)
@group(0) @binding(7) var<storage, read> traj: array<TrajIn>;            // [numTraj]
@group(0) @binding(8) var<storage, read_write> partials: array<StatsChunk>; // [chunks]
@group(0) @binding(9) var<storage, read_write> out: array<f32>;          // [STAT_COUNT + 2 HIST_BINS]

override workgroupSize: u32 = 256;

fn clampLogRatio(i: u32) -> f32 {
  return clamp(logp[i] - logpOld[i], -20.0, 20.0);
}

// Chunk rows' masked log-ratios (0 on unmasked rows) stay in workgroup memory until every thread
// has summed its trajectory's: in the arrays of the first trees (above), which reduceAcc
// only fills afterwards. WebGPU's default 16 KiB of workgroup memory has the trees and no room for
// a third array of CHUNK_ROWS words. Row k = t + j workgroupSize of the chunk, which thread t
// loads, goes to component j of treeA[t] (j < 4) or j - 4 of treeB[t]: a vec4 is written by one
// invocation only, since a write to one component of a vector may access the whole vector (WGSL
// 14.5.1), which would race with another invocation's write to another component. CHUNK_ROWS =
// 8 workgroupSize is appended by stats.ts (STATS_CHUNK_ROWS); a chunk holds more rows only when it
// is one trajectory longer than that, and rows past CHUNK_ROWS are then read again from global memory.
fn setRowLogRatio(k: u32, x: f32) {
  let t = k % workgroupSize;
  let j = k / workgroupSize;
  if (j < 4u) {
    treeA[t][j] = x;
  } else {
    treeB[t][j - 4u] = x;
  }
}

fn rowLogRatio(k: u32) -> f32 {
  let t = k % workgroupSize;
  let j = k / workgroupSize;
  if (j < 4u) {
    return treeA[t][j];
  }
  return treeB[t][j - 4u];
}

// Histogram bins: u32 workgroup atomics (exact in any order), in histCopies copies that the
// threads take turns at (thread t adds to copy t % histCopies) and that are added up at the end
// (StatsConfig.histCopies in stats.ts: 16 in the hardware variant, 1 elsewhere). Neighbouring rows
// are one trajectory's, with one advantage, and most log-ratios fall in two or three bins, so with
// one copy the lanes of a subgroup mostly add to the same word, one after another; with 16 at most
// 2 of 32 lanes share a word. A copy takes HIST_STRIDE words, an odd number, so one bin's copies
// lie in different banks. Workgroup memory starts zeroed; with 16 copies and the trees it comes to
// 15.1 KiB of WebGPU's 16 KiB minimum (stats.gpu.test.ts runs that layout). The default is the
// thread variant's, so the up-front compilation check gives its pipeline (stats.ts specialize): on
// SwiftShader, which compiles stats for 1.5-1.8 s, a second one was a second wait.
override histCopies: u32 = 1u;
const HIST_STRIDE: u32 = 25u;
var<workgroup> advHist: array<atomic<u32>, histCopies * HIST_STRIDE>;
var<workgroup> ratioHist: array<atomic<u32>, histCopies * HIST_STRIDE>;
// The first word of this thread's copy. A private variable, not a parameter of addRow: with the
// parameter SwiftShader ran the kernel 10 % slower, even with one copy.
var<private> histBase: u32;

// Same rounding steps as histBin in stats.ts: (x - lo) and the product are each rounded to f32.
fn histBin(x: f32, lo: f32, scale: f32) -> u32 {
  let t = floor((x - lo) * scale);
  return u32(clamp(t, 0.0, f32(HIST_BINS - 1u)));
}

// Sequence log-ratio of trajectory n (chunk rows from r0): sum over its masked tokens of the
// clamped log-ratio. Unmasked rows hold +0 in workgroup memory, and acc + 0 == acc (acc is never -0).
fn seqLogRatio(r0: u32, n: u32) -> f32 {
  var acc = 0.0;
  for (var j = 0u; j < u.tp; j++) {
    let i = n * u.tp + j;
    let k = i - r0;
    if (k < CHUNK_ROWS) {
      acc += rowLogRatio(k);
    } else if (mask[i] != 0.0) {
      acc += clampLogRatio(i);
    }
  }
  return acc;
}

// Live trajectory n's counters: (1 live, 1 if its group starts at n, 1 if that group's rewards
// are all equal, 0).
fn countTrajectory(n: u32) -> vec4u {
  let t = traj[n];
  if (t.groupStart != n) {
    return vec4u(1u, 0u, 0u, 0u);
  }
  var same = true;
  // `&`, not `&&`: every load is issued without waiting for the one before.
  for (var k = 1u; k < t.groupSize; k++) {
    same = same & (traj[n + k].reward == t.reward);
  }
  return vec4u(1u, 1u, select(0u, 1u, same), 0u);
}

// One row's inputs, loaded together.
struct RowIn {
  ppo: PpoRow,
  m: f32,
  a: f32,
  lr: f32,
  ent: f32,
}

fn loadRow(i: u32) -> RowIn {
  return RowIn(ppo[i], mask[i], adv[i], clampLogRatio(i), entropy[i]);
}

// Row k of the chunk into the thread's sums, counters and bins (in its copy, from histBase), and
// its masked log-ratio into workgroup memory.
fn addRow(acc: ptr<function, Acc>, k: u32, x: RowIn) {
  if (k < CHUNK_ROWS) {
    setRowLogRatio(k, select(0.0, x.lr, x.m != 0.0));
  }
  (*acc).ext.x += x.ppo.loss;
  if (x.m == 0.0) {
    return;
  }
  (*acc).counts.x += 1u;
  (*acc).counts.y += select(0u, 1u, abs(x.a) <= ADV_ZERO_TOL);
  let r = exp(x.lr);
  (*acc).sums += vec4f(x.a, r, x.ent, x.ppo.kl);
  (*acc).ext.y = min((*acc).ext.y, r);
  (*acc).ext.z = max((*acc).ext.z, r);
  (*acc).counts.z += select(0u, 1u, x.ppo.clip == -1);
  (*acc).counts.w += select(0u, 1u, x.ppo.clip == 1);
  atomicAdd(&advHist[histBase + histBin(x.a, u.advLo, u.advScale)], 1u);
  atomicAdd(&ratioHist[histBase + histBin(x.lr, u.ratioLo, u.ratioScale)], 1u);
}

// (adv - mean)^2 on a masked row, else +0 (the sum it goes into is >= +0, so + 0 changes nothing).
fn devSq(m: f32, a: f32, mean: f32) -> f32 {
  let e = a - mean;
  return select(0.0, e * e, m != 0.0);
}

@compute @workgroup_size(workgroupSize)
fn statsChunks(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  // Workgroup memory starts zeroed in WebGPU: the bins need no reset.
  let c = flatWorkgroup(wid, nwg);
  let t0 = min(c * u.trajPerChunk, u.numTraj);
  let t1 = min(t0 + u.trajPerChunk, u.numTraj);
  let n = t0 + lid;
  let live = n < t1 && traj[n].turns != 0u;
  var trajCounts = vec4u(0u);
  if (live) {
    trajCounts = countTrajectory(n);
  }

  var acc = Acc(vec4f(0.0), vec4f(0.0, F32_MAX, -F32_MAX, -F32_MAX), vec4u(0u));
  let r0 = t0 * u.tp;
  let r1 = t1 * u.tp;
  let w = workgroupSize;
  histBase = (lid % histCopies) * HIST_STRIDE;
  // Four of the thread's rows a round, in the order of one at a time; a row past the chunk loads
  // the chunk's last row (any row that exists) and is skipped.
  for (var i = r0 + lid; i < r1; i += 4u * w) {
    let last = r1 - 1u;
    let x0 = loadRow(i);
    let x1 = loadRow(min(i + w, last));
    let x2 = loadRow(min(i + 2u * w, last));
    let x3 = loadRow(min(i + 3u * w, last));
    addRow(&acc, i - r0, x0);
    if (i + w < r1) {
      addRow(&acc, i + w - r0, x1);
    }
    if (i + 2u * w < r1) {
      addRow(&acc, i + 2u * w - r0, x2);
    }
    if (i + 3u * w < r1) {
      addRow(&acc, i + 3u * w - r0, x3);
    }
  }
  workgroupBarrier();
  var lam = -F32_MAX;
  if (live) {
    lam = seqLogRatio(r0, n);
  }
  // The trees below overwrite the rows' log-ratios.
  workgroupBarrier();
  acc.ext.w = lam;
  let total = reduceAcc(lid, acc);

  // The chunk's own mean: its squared deviations stay small however far it is from the batch mean.
  let tokens = total.counts.x;
  let mean = total.sums.x / f32(max(tokens, 1u));
  var m2 = 0.0;
  for (var i = r0 + lid; i < r1; i += 4u * w) {
    let last = r1 - 1u;
    let i1 = min(i + w, last);
    let i2 = min(i + 2u * w, last);
    let i3 = min(i + 3u * w, last);
    let m = vec4f(mask[i], mask[i1], mask[i2], mask[i3]);
    let a = vec4f(adv[i], adv[i1], adv[i2], adv[i3]);
    // Rows past the chunk count as unmasked.
    let inChunk = vec3<bool>(i + w < r1, i + 2u * w < r1, i + 3u * w < r1);
    let keep = vec4f(m.x, select(vec3f(0.0), m.yzw, inChunk));
    m2 += devSq(keep.x, a.x, mean);
    m2 += devSq(keep.y, a.y, mean);
    m2 += devSq(keep.z, a.z, mean);
    m2 += devSq(keep.w, a.w, mean);
  }
  // ESS parts about the chunk's largest lam, so no exp overflows.
  var s1 = 0.0;
  var s2 = 0.0;
  if (live) {
    let e = lam - total.ext.w;
    s1 = exp(e);
    s2 = exp(2.0 * e);
  }
  let spread = reduceSpread(lid, Spread(vec4f(m2, s1, s2, 0.0), trajCounts));

  if (c >= u.chunks) {
    return;
  }
  if (lid == 0u) {
    partials[c].advSum = total.sums.x;
    partials[c].advMean = mean;
    partials[c].advM2 = spread.sums.x;
    partials[c].ratioSum = total.sums.y;
    partials[c].ratioMin = total.ext.y;
    partials[c].ratioMax = total.ext.z;
    partials[c].entropySum = total.sums.z;
    partials[c].klSum = total.sums.w;
    partials[c].lossSum = total.ext.x;
    partials[c].lamMax = total.ext.w;
    partials[c].s1 = spread.sums.y;
    partials[c].s2 = spread.sums.z;
    partials[c].counts[C_TOKENS] = total.counts.x;
    partials[c].counts[C_ZERO] = total.counts.y;
    partials[c].counts[C_LOW] = total.counts.z;
    partials[c].counts[C_HIGH] = total.counts.w;
    partials[c].counts[C_LIVE] = spread.counts.x;
    partials[c].counts[C_GROUPS] = spread.counts.y;
    partials[c].counts[C_EQUAL] = spread.counts.z;
  }
  if (lid < HIST_BINS) {
    var a = 0u;
    var r = 0u;
    for (var k = 0u; k < histCopies; k++) {
      a += atomicLoad(&advHist[k * HIST_STRIDE + lid]);
      r += atomicLoad(&ratioHist[k * HIST_STRIDE + lid]);
    }
    partials[c].advHist[lid] = a;
    partials[c].ratioHist[lid] = r;
  }
}

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

// Histogram words, advHist then ratioHist; with spreadBins, 4 per workgroup after the first.
const HIST_WORDS: u32 = 2u * HIST_BINS;
const HIST_WORKGROUPS: u32 = HIST_WORDS / 4u;

// Word w of chunk c's two histograms (w < HIST_BINS: advHist).
fn histWord(c: u32, w: u32) -> u32 {
  if (w < HIST_BINS) {
    return partials[c].advHist[w];
  }
  return partials[c].ratioHist[w - HIST_BINS];
}

fn histWords(c: u32, w0: u32) -> vec4u {
  return vec4u(histWord(c, w0), histWord(c, w0 + 1u), histWord(c, w0 + 2u), histWord(c, w0 + 3u));
}

// With spreadBins, workgroup 1 + j: histogram words 4j .. 4j + 3 summed over every chunk (exact
// u32 sums), thread t taking chunks t, t + workgroupSize, ... four in flight, then a tree. In one
// workgroup (laneWordSum below), 256 threads adding all 48 words of 1,171 chunks at four loads per
// round trip took a third of the kernel on an H200 (0.067 against 0.046 ms; BENCHMARKS.md).
fn histogramWords(j: u32, lid: u32) {
  let w0 = 4u * j;
  var sum = vec4u(0u);
  var c = lid;
  for (; c + 3u * workgroupSize < u.chunks; c += 4u * workgroupSize) {
    let a = histWords(c, w0);
    let b = histWords(c + workgroupSize, w0);
    let d = histWords(c + 2u * workgroupSize, w0);
    let e = histWords(c + 3u * workgroupSize, w0);
    sum += a + b + d + e;
  }
  for (; c < u.chunks; c += workgroupSize) {
    sum += histWords(c, w0);
  }
  let total = reduceSpread(lid, Spread(vec4f(0.0), sum)).counts;
  if (lid < 4u) {
    out[STAT_COUNT + w0 + lid] = f32(total[lid]);
  }
}

// Without spreadBins (software adapters, which run workgroups one after another), workgroup 0 adds
// the bins too, a word per thread: word lid % WORD_LANES over every lanes-th chunk, four loads in
// flight; wordSums holds each lane's sums, [workgroupSize / WORD_LANES][WORD_LANES].
const WORD_LANES: u32 = 64u;
var<workgroup> wordSums: array<u32, workgroupSize>;

fn laneWordSum(lid: u32) -> u32 {
  let w = lid % WORD_LANES;
  let lanes = workgroupSize / WORD_LANES;
  var sum = 0u;
  if (w >= HIST_WORDS) {
    return sum;
  }
  var c = lid / WORD_LANES;
  for (; c + 3u * lanes < u.chunks; c += 4u * lanes) {
    let a = histWord(c, w);
    let b = histWord(c + lanes, w);
    let d = histWord(c + 2u * lanes, w);
    let e = histWord(c + 3u * lanes, w);
    sum += a + b + d + e;
  }
  for (; c < u.chunks; c += lanes) {
    sum += histWord(c, w);
  }
  return sum;
}

// Word w's total over all chunks (after wordSums is written and a barrier).
fn wordTotal(w: u32) -> u32 {
  var sum = 0u;
  for (var q = 0u; q < workgroupSize / WORD_LANES; q++) {
    sum += wordSums[q * WORD_LANES + w];
  }
  return sum;
}

@compute @workgroup_size(workgroupSize)
fn statsCombine(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) lid: u32) {
  // Uniform: every thread of a workgroup takes the same branch to the trees' barriers.
  if (wid.x > 0u) {
    histogramWords(wid.x - 1u, lid);
    return;
  }
  if (u.spreadBins == 0u) {
    wordSums[lid] = laneWordSum(lid);
  }
  var acc = Acc(vec4f(0.0), vec4f(0.0, F32_MAX, -F32_MAX, -F32_MAX), vec4u(0u));
  for (var c = lid; c < u.chunks; c += workgroupSize) {
    acc.sums += vec4f(partials[c].advSum, partials[c].ratioSum, partials[c].entropySum, partials[c].klSum);
    acc.ext = combineExt(acc.ext, vec4f(partials[c].lossSum, partials[c].ratioMin, partials[c].ratioMax, partials[c].lamMax));
    let k = partials[c].counts;
    acc.counts += vec4u(k[C_TOKENS], k[C_ZERO], k[C_LOW], k[C_HIGH]);
  }
  // Its barriers also publish wordSums.
  let total = reduceAcc(lid, acc);

  let count = total.counts.x;
  let cnt = f32(max(count, 1u));
  let mean = total.sums.x / cnt;
  let lamMax = total.ext.w;
  var m2 = 0.0;
  var s1 = 0.0;
  var s2 = 0.0;
  var trajCounts = vec4u(0u);
  for (var c = lid; c < u.chunks; c += workgroupSize) {
    let k = partials[c].counts;
    trajCounts += vec4u(k[C_EQUAL], k[C_GROUPS], k[C_LIVE], 0u);
    let d = partials[c].advMean - mean;
    m2 += partials[c].advM2 + f32(k[C_TOKENS]) * d * d;
    if (k[C_LIVE] > 0u) {
      let e = partials[c].lamMax - lamMax;
      s1 += partials[c].s1 * exp(e);
      s2 += partials[c].s2 * exp(2.0 * e);
    }
  }
  let spread = reduceSpread(lid, Spread(vec4f(m2, s1, s2, 0.0), trajCounts));

  if (lid == 0u) {
    let has = count > 0u;
    let groups = spread.counts.y;
    let live = spread.counts.z;
    out[STAT_TOKENS] = f32(count);
    out[STAT_ADV_MEAN] = mean;
    out[STAT_ADV_STD] = sqrt(spread.sums.x / cnt);
    out[STAT_ADV_ZERO_FRAC] = f32(total.counts.y) / cnt;
    out[STAT_RATIO_MEAN] = select(1.0, total.sums.y / cnt, has);
    out[STAT_RATIO_MIN] = select(1.0, total.ext.y, has);
    out[STAT_RATIO_MAX] = select(1.0, total.ext.z, has);
    out[STAT_CLIP_FRAC_LOW] = f32(total.counts.z) / cnt;
    out[STAT_CLIP_FRAC_HIGH] = f32(total.counts.w) / cnt;
    out[STAT_ENTROPY] = total.sums.z / cnt;
    out[STAT_KL_REF] = total.sums.w / cnt;
    out[STAT_LOSS] = total.ext.x / f32(max(u.minibatches, 1u));
    out[STAT_GROUPS_ALL_EQUAL_FRAC] = select(0.0, f32(spread.counts.x) / f32(max(groups, 1u)), groups > 0u);
    out[STAT_ESS] = select(1.0, exp(2.0 * log(spread.sums.y) - log(spread.sums.z)) / f32(live), live > 0u);
  }
  if (u.spreadBins == 0u && lid < HIST_WORDS) {
    out[STAT_COUNT + lid] = f32(wordTotal(lid));
  }
}
