// Shared helpers, joined in front of every kernel's source by kernels/pipeline.ts (no includes).
// hashUniform gives the same bits as hashUniform in workers/core/rng.ts, so both backends sample alike.

// Logit of a token the grammar forbids: Math.fround(-1e30), bit for bit (MASKED_LOGIT in model/mlp.ts).
const MASKED_LOGIT: f32 = bitcast<f32>(0xf149f2cau);

// Largest finite f32, used as +-infinity in min/max reductions (WGSL has no infinity literal).
const F32_MAX: f32 = bitcast<f32>(0x7f7fffffu);

fn isMasked(z: f32) -> bool {
  return z <= MASKED_LOGIT;
}

// PCG-RXS-M-XS 32-bit hash (Jarzynski & Olano 2020); u32 arithmetic wraps as Math.imul does.
fn pcgHash(v: u32) -> u32 {
  let state = v * 747796405u + 2891336453u;
  let word = ((state >> ((state >> 28u) + 4u)) ^ state) * 277803737u;
  return (word >> 22u) ^ word;
}

// Uniform in [0, 1) with 24 bits: exact in f32.
fn hashUniform(seed: u32, a: u32, b: u32, c: u32) -> f32 {
  var h = pcgHash(seed ^ 0x9e3779b9u);
  h = pcgHash(h + a);
  h = pcgHash(h + b);
  h = pcgHash(h + c);
  return f32(h >> 8u) * (1.0 / 16777216.0);
}

// The logit-gradient proxy w = max(1 - 2 pi + sum_v pi_v^2, 0) of a token with log-prob logp
// (gradProxy in trajStats.ts): trajStats' g2 and OTB's W sum it.
fn gradProxy(logp: f32, sumP2: f32) -> f32 {
  return max(1.0 - 2.0 * exp(logp) + sumP2, 0.0);
}

// tanh with no exp overflow: the same formula as safeTanh in model/mlp.ts.
fn safeTanh(x: f32) -> f32 {
  let c = clamp(x, -15.0, 15.0);
  return 1.0 - 2.0 / (exp(2.0 * c) + 1.0);
}

// Flat index of a workgroup in a 2-D grid (kernels/pipeline.ts grid2d).
fn flatWorkgroup(wid: vec3u, nwg: vec3u) -> u32 {
  return wid.y * nwg.x + wid.x;
}

// Sequence index of context token k (0 = oldest) of the row predicting flat position `pos` of a
// [N, seqLen] sequence, or -1 where the context reaches before the sequence start (token PAD = 0).
fn contextIndex(pos: u32, seqLen: u32, context: u32, k: u32) -> i32 {
  let q = i32(pos % seqLen) - i32(context) + i32(k);
  if (q < 0) {
    return -1;
  }
  return i32(pos - context + k);
}

// A token id as the first layer reads it: PAD (0) for anything outside the vocabulary, so every
// row has exactly one token in every context slot (vocabToken in model/mlp.ts).
fn vocabToken(t: u32, vocab: u32) -> u32 {
  return select(0u, t, t < vocab);
}

// Row layouts shared by several kernels (their TypeScript packers: advantage.ts packTrajIn and
// packTurnIn, trajStats.ts packTrajStats, ppoLoss.ts unpackPpoRows).

// One trajectory: its reward, its group (a run of rows from groupStart), its turns (0: no trajectory).
struct TrajIn {
  reward: f32,
  groupStart: u32,
  groupSize: u32,
  turns: u32,
}

// One turn of one trajectory: its reward, the acting role (-1 none), an anchor-state key.
struct TurnIn {
  reward: f32,
  role: i32,
  key: u32,
  pad: u32,
}

// One trajectory's statistics (trajStats.wgsl).
struct TrajStats {
  len: f32,
  entMean: f32,
  logIS: f32,
  g2: f32,
}

// One row of the loss kernel's output besides dlogp (ppoLoss.wgsl).
struct PpoRow {
  loss: f32,    // weighted token loss
  ratio: f32,   // the importance ratio the row used
  kl: f32,      // KL estimate to the reference
  clip: i32,    // -1 low side, 1 high side, 0 none
}
