// Per-update statistics, pass 2 of 2 (reference: statsCpu in stats.ts; pass 1: stats.wgsl; shared
// declarations: statsChunk.wgsl). Workgroup 0 does all but the histograms: thread t combines chunks
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

@group(0) @binding(0) var<uniform> u: Stats;
@group(0) @binding(1) var<storage, read> partials: array<StatsChunk>;   // [chunks] (stats.wgsl)
@group(0) @binding(2) var<storage, read_write> out: array<f32>;         // [STAT_COUNT + 2 HIST_BINS]

override workgroupSize: u32 = 256;

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
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) lid: u32) {
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
