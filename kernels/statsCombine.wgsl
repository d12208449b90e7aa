// Per-update statistics, pass 2 of 2 (reference: statsCpu in stats.ts; pass 1: stats.wgsl; shared
// declarations: statsChunk.wgsl), one workgroup. Thread t combines chunks t, t + workgroupSize, ...
// in that order, then fixed trees combine the threads:
//   counters and histogram bins: exact u32 sums, spread over the threads word by word
//         (laneWordSum);  sums: f32 sums;  ratio min / max: min / max;
//   adv:  mean = sum_c advSum_c / max(tokens, 1),
//         M2 = sum_c [advM2_c + tokens_c (advMean_c - mean)^2]   (Chan, Golub & LeVeque 1979),
//         std = sqrt(M2 / max(tokens, 1)): every term is >= 0, no cancellation;
//   ESS:  M = max_c lamMax_c,  S1 = sum_c s1_c exp(lamMax_c - M),  S2 = sum_c s2_c exp(2 (lamMax_c - M))
//         over chunks with live trajectories, ess = exp(2 log S1 - log S2) / live (1 without any);
// and writes out[STAT_*] scalars, then advHist[HIST_BINS], then ratioHist[HIST_BINS] (as f32 counts).
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

// The u32 words of a chunk record that pass 2 adds up: the counters, then both histograms.
const COUNT_WORDS: u32 = C_COUNT + 2u * HIST_BINS;
// Threads per word lane: thread t adds word t % WORD_LANES over chunks t / WORD_LANES, + lanes, ...
const WORD_LANES: u32 = 64u;

// Each lane's sums of the counter words, [workgroupSize / WORD_LANES][WORD_LANES].
var<workgroup> wordSums: array<u32, workgroupSize>;

fn countWord(c: u32, k: u32) -> u32 {
  if (k < C_COUNT) {
    return partials[c].counts[k];
  }
  if (k < C_COUNT + HIST_BINS) {
    return partials[c].advHist[k - C_COUNT];
  }
  return partials[c].ratioHist[k - C_COUNT - HIST_BINS];
}

// This thread's share of the counter words: word lid % WORD_LANES over every lanes-th chunk, four
// loads in flight at a time. No atomics: on a GPU, every chunk adding into the same workgroup
// counters waited for all the others one by one (the pass's cost grew with the chunk count).
fn laneWordSum(lid: u32) -> u32 {
  let k = lid % WORD_LANES;
  let lanes = workgroupSize / WORD_LANES;
  var sum = 0u;
  if (k >= COUNT_WORDS) {
    return sum;
  }
  var c = lid / WORD_LANES;
  for (; c + 3u * lanes < u.chunks; c += 4u * lanes) {
    let a = countWord(c, k);
    let b = countWord(c + lanes, k);
    let d = countWord(c + 2u * lanes, k);
    let e = countWord(c + 3u * lanes, k);
    sum += a + b + d + e;
  }
  for (; c < u.chunks; c += lanes) {
    sum += countWord(c, k);
  }
  return sum;
}

// Word k's total over all chunks (after wordSums is written and a barrier).
fn wordTotal(k: u32) -> u32 {
  var sum = 0u;
  for (var q = 0u; q < workgroupSize / WORD_LANES; q++) {
    sum += wordSums[q * WORD_LANES + k];
  }
  return sum;
}

@compute @workgroup_size(workgroupSize)
fn main(@builtin(local_invocation_index) lid: u32) {
  wordSums[lid] = laneWordSum(lid);
  var acc = Acc(vec4f(0.0), vec4f(0.0, F32_MAX, -F32_MAX, -F32_MAX), vec4u(0u));
  for (var c = lid; c < u.chunks; c += workgroupSize) {
    acc.sums += vec4f(partials[c].advSum, partials[c].ratioSum, partials[c].entropySum, partials[c].klSum);
    acc.ext = combineExt(acc.ext, vec4f(partials[c].lossSum, partials[c].ratioMin, partials[c].ratioMax, partials[c].lamMax));
  }
  // Its barriers also publish wordSums.
  let total = reduceAcc(lid, acc);

  let count = wordTotal(C_TOKENS);
  let cnt = f32(max(count, 1u));
  let mean = total.sums.x / cnt;
  let lamMax = total.ext.w;
  var m2 = 0.0;
  var s1 = 0.0;
  var s2 = 0.0;
  for (var c = lid; c < u.chunks; c += workgroupSize) {
    let d = partials[c].advMean - mean;
    m2 += partials[c].advM2 + f32(partials[c].counts[C_TOKENS]) * d * d;
    if (partials[c].counts[C_LIVE] > 0u) {
      let e = partials[c].lamMax - lamMax;
      s1 += partials[c].s1 * exp(e);
      s2 += partials[c].s2 * exp(2.0 * e);
    }
  }
  let spread = reduceSpread(lid, Spread(vec4f(m2, s1, s2, 0.0), vec4u(0u))).sums;

  if (lid == 0u) {
    let has = count > 0u;
    out[STAT_TOKENS] = f32(count);
    out[STAT_ADV_MEAN] = mean;
    out[STAT_ADV_STD] = sqrt(spread.x / cnt);
    out[STAT_ADV_ZERO_FRAC] = f32(wordTotal(C_ZERO)) / cnt;
    out[STAT_RATIO_MEAN] = select(1.0, total.sums.y / cnt, has);
    out[STAT_RATIO_MIN] = select(1.0, total.ext.y, has);
    out[STAT_RATIO_MAX] = select(1.0, total.ext.z, has);
    out[STAT_CLIP_FRAC_LOW] = f32(wordTotal(C_LOW)) / cnt;
    out[STAT_CLIP_FRAC_HIGH] = f32(wordTotal(C_HIGH)) / cnt;
    out[STAT_ENTROPY] = total.sums.z / cnt;
    out[STAT_KL_REF] = total.sums.w / cnt;
    out[STAT_LOSS] = total.ext.x / f32(max(u.minibatches, 1u));
    let groups = wordTotal(C_GROUPS);
    let live = wordTotal(C_LIVE);
    out[STAT_GROUPS_ALL_EQUAL_FRAC] = select(0.0, f32(wordTotal(C_EQUAL)) / f32(max(groups, 1u)), groups > 0u);
    out[STAT_ESS] = select(1.0, exp(2.0 * log(spread.y) - log(spread.z)) / f32(live), live > 0u);
  }
  if (lid < HIST_BINS) {
    out[STAT_COUNT + lid] = f32(wordTotal(C_COUNT + lid));
    out[STAT_COUNT + HIST_BINS + lid] = f32(wordTotal(C_COUNT + HIST_BINS + lid));
  }
}
