/**
 * Seeded inputs for the self-test cases: MLP parameters, token sequences and grammars for the
 * forward and backward kernels; masked-logit rows (ordinary, ±1e4, one dominant token, one allowed
 * token, all equal) for the row-softmax kernels; rollout batches in variable groups with padding
 * trajectories for the advantage stage (trajStats, advantage, tokenBaseline); log-prob rows and
 * trajectories for seqRatio and ppoLoss. The GPU tests import their fixtures from here (and their
 * buffer helpers from harness.ts), so a self-test case and the test it came from see the same numbers.
 */
import { createRng, type Rng } from '../rng';
import { groupLayout, packTrajIn, packTurnIn, type AdvantageInputs, type AdvantageShape } from '../advantage/advantage';
import { MASKED_LOGIT, paramLayout, type MlpDims } from '../model/mlp';
import { packTrajStats, type TrajStatsInput } from '../stats/trajStats';

export interface MlpCase {
  dims: MlpDims;
  params: Float32Array;
  /** [N, L] tokens. */
  seq: Int32Array;
  L: number;
  /** [rows] flat positions, never at a sequence start (every row has a previous token). */
  rowPos: Uint32Array;
  /** [V * V] 0/1, every row allowing at least one token. */
  grammar: Uint8Array;
}

/** Parameters of order 1 everywhere (W2 included), so the sums the kernels do are not tiny. */
export function randomParams(dims: MlpDims, rng: Rng, scale = 0.5): Float32Array {
  const p = new Float32Array(paramLayout(dims).size);
  for (let i = 0; i < p.length; i++) p[i] = rng.normal() * scale;
  return p;
}

export function randomGrammar(V: number, rng: Rng, density = 0.6): Uint8Array {
  const g = new Uint8Array(V * V);
  for (let prev = 0; prev < V; prev++) {
    for (let t = 0; t < V; t++) g[prev * V + t] = rng.next() < density ? 1 : 0;
    g[prev * V + rng.int(V)] = 1;
  }
  return g;
}

/**
 * `pastVocab`: that many sequence positions get tokens V .. V + 2, which no task writes and which
 * the first layer reads as PAD (mlp.ts vocabToken). Only context positions are chosen: never a
 * row's own token or its previous one (the grammar row), which index by token id unguarded.
 */
export function makeMlpCase(dims: MlpDims, rows: number, rng: Rng, o: { N?: number; L?: number; pastVocab?: number } = {}): MlpCase {
  const L = o.L ?? 7;
  const N = o.N ?? Math.max(1, Math.ceil(rows / (L - 1)));
  const grammar = randomGrammar(dims.V, rng);
  const seq = new Int32Array(N * L);
  for (let i = 0; i < seq.length; i++) seq[i] = rng.int(dims.V);
  const rowPos = new Uint32Array(rows);
  for (let r = 0; r < rows; r++) {
    const n = rng.int(N);
    rowPos[r] = n * L + 1 + rng.int(L - 1);
    // The sampled token must be one the grammar allows after its previous token.
    const prev = seq[rowPos[r]! - 1]!;
    const allowed: number[] = [];
    for (let t = 0; t < dims.V; t++) if (grammar[prev * dims.V + t]) allowed.push(t);
    seq[rowPos[r]!] = allowed[rng.int(allowed.length)]!;
  }
  // Rewriting a sampled token changes the previous token of the next position; fix those rows up.
  for (let r = 0; r < rows; r++) {
    const prev = seq[rowPos[r]! - 1]!;
    if (!grammar[prev * dims.V + seq[rowPos[r]!]!]) grammar[prev * dims.V + seq[rowPos[r]!]!] = 1;
  }
  const params = randomParams(dims, rng);
  // Drawn last, so that cases without them keep the numbers they always had.
  if (o.pastVocab) placePastVocab(seq, rowPos, o.pastVocab, dims.V, rng);
  return { dims, params, seq, L, rowPos, grammar };
}

function placePastVocab(seq: Int32Array, rowPos: Uint32Array, count: number, V: number, rng: Rng): void {
  const taken = new Set<number>();
  for (const p of rowPos) taken.add(p).add(p - 1);
  const free = [...seq.keys()].filter((i) => !taken.has(i));
  for (let n = 0; n < count && free.length > 0; n++) {
    const [i] = free.splice(rng.int(free.length), 1);
    seq[i!] = V + rng.int(3);
  }
}

export interface LogitCase {
  /** [rows, V] masked logits. */
  z: Float32Array;
  V: number;
  /** Sequence holding the sampled token of row r at rowPos[r] = 2r + 1. */
  seq: Int32Array;
  rowPos: Uint32Array;
}

export type RowKind = 'normal' | 'huge' | 'dominant' | 'single' | 'flat';

/** Rows cycle through `kinds`: N(0, 2) logits, ±1e4, one dominant token, one allowed token, all equal. */
export function logitCase(rows: number, V: number, seed: number, kinds: RowKind[] = ['normal']): LogitCase {
  const rng = createRng(seed);
  const z = new Float32Array(rows * V);
  const seq = new Int32Array(2 * rows + 2);
  const rowPos = Uint32Array.from({ length: rows }, (_, r) => 2 * r + 1);
  for (let r = 0; r < rows; r++) {
    const kind = kinds[r % kinds.length]!;
    const keep = rng.int(V);
    for (let v = 0; v < V; v++) {
      let x: number;
      if (kind === 'huge') x = rng.next() < 0.5 ? 1e4 : -1e4 * rng.next();
      else if (kind === 'dominant') x = v === keep ? 60 : rng.normal();
      else if (kind === 'flat') x = 0.25;
      else x = rng.normal() * 2;
      const masked = kind === 'single' ? v !== keep : v !== keep && rng.next() < 0.3;
      z[r * V + v] = masked ? MASKED_LOGIT : x;
    }
    // The sampled token is an allowed one (sometimes the least likely, to stress logp).
    const allowed: number[] = [];
    for (let v = 0; v < V; v++) if (z[r * V + v] !== MASKED_LOGIT) allowed.push(v);
    seq[rowPos[r]!] = allowed[rng.int(allowed.length)]!;
  }
  return { z, V, seq, rowPos };
}

/** Largest |logit| among allowed tokens: f32 errors of log-sum-exp scale with it. */
export function maxAbsLogit(z: Float32Array): number {
  let m = 0;
  for (const x of z) if (x !== MASKED_LOGIT) m = Math.max(m, Math.abs(x));
  return m;
}

// ---- the advantage stage (from tests/gpu/advantage.gpu.test.ts, advantageFamily.gpu.test.ts) ----

/** A group size, or 'pad': a padding trajectory (a group of one with no turns and an empty mask). */
export type GroupSpec = number | 'pad';

export interface AdvantageBatch {
  name: string;
  inp: AdvantageInputs;
  shape: AdvantageShape;
  /** Rewards of order 1e4, log IS weights up to ±1000, g2 of order 1e3 tp, some entropies 0. */
  extreme: boolean;
}

/**
 * A batch of contiguous groups of the given sizes for advantage.wgsl. Some groups get all-equal
 * rewards (collapse) and some turn rewards are binary, so pools and anchor sets with equal values
 * occur; a few stray mask rows past a trajectory's turns test the per-turn zeros.
 */
export function advantageBatch(
  name: string,
  seed: number,
  sizes: GroupSpec[],
  o: { T: number; aL: number; tp: number; nRoles: number; extreme?: boolean },
): AdvantageBatch {
  const rng = createRng(seed);
  const G = sizes.map((s) => (s === 'pad' ? 1 : s));
  const N = G.reduce((a, b) => a + b, 0);
  const { T, aL, tp, nRoles } = o;
  const S = o.extreme ? 1e4 : 1;
  const pad = new Uint8Array(N);
  const reward = new Float32Array(N);
  let n = 0;
  sizes.forEach((s, g) => {
    const kind = rng.int(3); // 0 normal, 1 binary, 2 all equal
    const eq = S * rng.normal();
    for (let k = 0; k < G[g]!; k++, n++) {
      pad[n] = s === 'pad' ? 1 : 0;
      reward[n] = pad[n] ? 0 : kind === 0 ? S * rng.normal() : kind === 1 ? S * rng.int(2) : eq;
    }
  });
  const turns = Uint32Array.from({ length: N }, (_, m) => (pad[m] ? 0 : 1 + rng.int(T)));
  const mask = new Float32Array(N * tp);
  for (let m = 0; m < N; m++) {
    for (let j = 0; j < tp; j++) {
      // Mostly only the taken turns' rows are policy rows; a few stray rows past them test the zeros.
      const inTurns = Math.floor(j / aL) < turns[m]!;
      mask[m * tp + j] = pad[m] ? 0 : (inTurns ? rng.next() < 0.85 : rng.next() < 0.1) ? 1 : 0;
    }
  }
  const binaryTurns = rng.next() < 0.5;
  const inp: AdvantageInputs = {
    reward,
    ...groupLayout(G),
    turns,
    turnReward: Float32Array.from({ length: N * T }, () => (binaryTurns ? S * rng.int(2) : S * rng.normal())),
    turnRole: Int32Array.from({ length: N * T }, () => (rng.next() < 0.1 ? -1 : rng.int(nRoles))),
    turnKey: Uint32Array.from({ length: N * T }, () => rng.int(3)),
    roleRewards: Float32Array.from({ length: N * nRoles }, (_, k) => S * ((k % nRoles) + 1) * rng.normal() + (k % nRoles)),
    trajStats: {
      len: Float32Array.from({ length: N }, (_, m) => mask.subarray(m * tp, (m + 1) * tp).reduce((a, b) => a + b, 0)),
      entMean: Float32Array.from({ length: N }, () => (o.extreme && rng.next() < 0.3 ? 0 : 3 * rng.next())),
      logIS: Float32Array.from({ length: N }, () => (o.extreme ? (rng.next() < 0.5 ? 1000 : -1000) * rng.next() : 2 * rng.normal())),
      g2: Float32Array.from({ length: N }, () => (rng.next() < 0.15 ? 0 : (o.extreme ? 1e3 : 1) * rng.next() * tp)),
    },
    mask,
    logpOld: Float32Array.from({ length: N * tp }, () => -5 * rng.next()),
    logpRef: Float32Array.from({ length: N * tp }, () => -5 * rng.next()),
  };
  return { name, inp, shape: { numTraj: N, tp, maxTurns: T, actionLen: aL, nRoles }, extreme: !!o.extreme };
}

/** An advantageBatch's input buffers for advantage.wgsl (all but adv), made by `upload`. */
export function advantageBuffers<B>(upload: (data: Float32Array | Uint32Array | Int32Array) => B, b: AdvantageBatch) {
  const { inp, shape } = b;
  return {
    trajIn: upload(packTrajIn(inp)),
    turnIn: upload(packTurnIn(inp, shape.numTraj, shape.maxTurns)),
    roleRewards: upload(inp.roleRewards!),
    trajStats: upload(packTrajStats(inp.trajStats!)),
    mask: upload(inp.mask),
    logpOld: upload(inp.logpOld!),
    logpRef: upload(inp.logpRef!),
  };
}

/** The variable group sizes of the advantage tests at N = 67: 3 padding trajectories, groups of 1 to 16. */
export const GROUPS_67: GroupSpec[] = [5, 'pad', 3, 8, 2, 'pad', 16, 1, 4, 7, 'pad', 6, 12, 1];
/** N = 130: two padding trajectories side by side. */
export const GROUPS_130: GroupSpec[] = [9, 9, 3, 'pad', 'pad', 16, 2, 2, 11, 8, 8, 8, 5, 16, 4, 4, 6, 7];

/**
 * Per-row rollout data for trajStats / tokenBaseline: pi in [0.02, 0.9], sum pi^2 in
 * [pi^2, pi^2 + (1 - pi)^2], log IS mostly small with some beyond the ±20 clamp, and NaN in
 * masked-out rows (they must be skipped). With emptyEvery = k every k-th trajectory is empty.
 */
export function rolloutRows(rng: Rng, N: number, tp: number, emptyEvery = 0): TrajStatsInput {
  const R = N * tp;
  const mask = Float32Array.from({ length: R }, (_, i) => {
    const n = Math.floor(i / tp);
    return emptyEvery && n % emptyEvery === emptyEvery - 1 ? 0 : rng.next() < 0.8 ? 1 : 0;
  });
  const p = Array.from({ length: R }, () => 0.02 + 0.88 * rng.next());
  const nanIfOff = (i: number, x: number) => (mask[i] ? x : NaN);
  return {
    mask,
    logpOld: Float32Array.from(p, (x, i) => nanIfOff(i, Math.log(x))),
    logpRollout: Float32Array.from(p, (x, i) => nanIfOff(i, Math.log(x) + (rng.next() < 0.05 ? 30 * Math.sign(rng.next() - 0.5) : 0.5 * rng.normal()))),
    entropyOld: Float32Array.from({ length: R }, (_, i) => nanIfOff(i, 3 * rng.next())),
    sumP2Old: Float32Array.from(p, (x, i) => nanIfOff(i, x * x + (1 - x) ** 2 * rng.next())),
  };
}

/** rolloutRows in variable contiguous groups ('pad': an empty trajectory), with normal, binary or all-equal rewards per group. */
export function groupedRollout(seed: number, sizes: GroupSpec[], tp: number) {
  const rng = createRng(seed);
  const G = sizes.map((s) => (s === 'pad' ? 1 : s));
  const N = G.reduce((a, b) => a + b, 0);
  const r = rolloutRows(rng, N, tp);
  const reward = new Float32Array(N);
  let n = 0;
  sizes.forEach((s, g) => {
    const kind = rng.int(3); // normal, binary, all equal
    const eq = rng.normal();
    for (let k = 0; k < G[g]!; k++, n++) {
      if (s === 'pad') r.mask.fill(0, n * tp, (n + 1) * tp);
      reward[n] = kind === 0 ? rng.normal() : kind === 1 ? rng.int(2) : eq;
    }
  });
  return { ...r, reward, ...groupLayout(G), N, tp };
}

/**
 * Per-row error scale of the grouped kernels: the largest |ref| over the rows of the row's group
 * (+1e-7 so a group that is 0 in float64 may hold f32 dust). Cancellations inside a group
 * (R - mean, v - mu, R - b) lose digits relative to the group's values, not to one small result.
 */
export function groupScales(ref: ArrayLike<number>, groupSize: Uint32Array, tp: number): Float64Array {
  const s = new Float64Array(ref.length);
  for (let n = 0; n < groupSize.length; ) {
    const G = groupSize[n]!;
    let m = 0;
    for (let i = n * tp; i < (n + G) * tp; i++) m = Math.max(m, Math.abs(ref[i]!));
    s.fill(m + 1e-7, n * tp, (n + G) * tp);
    n += G;
  }
  return s;
}

// ---- sequence ratios and the policy loss (from tests/gpu/seqRatio.gpu.test.ts, ppoLoss.gpu.test.ts) ----

/** Rows per trajectory, rows per turn and turns of the seqRatio / ppoLoss trajectory inputs. */
export const RATIO_TP = 6;
export const RATIO_ACTION_LEN = 2;
export const RATIO_TURNS = 3;

export interface SeqRatioInputs {
  mask: Float32Array;
  logp: Float32Array;
  logpOld: Float32Array;
  adv: Float32Array;
}

/**
 * N trajectories of RATIO_TP rows for seqRatio: random masks (some empty, trajectory 1 always,
 * some full), logp = logpOld + N(0, spread), token advantages with zeros.
 */
export function seqRatioInputs(N: number, seed: number, spread = 0.3): SeqRatioInputs {
  const rng = createRng(seed);
  const R = N * RATIO_TP;
  const mask = new Float32Array(R);
  for (let n = 0; n < N; n++) {
    const kind = n === 1 ? 0 : rng.next(); // trajectory 1 is always empty
    for (let j = 0; j < RATIO_TP; j++) mask[n * RATIO_TP + j] = kind < 0.1 ? 0 : kind < 0.3 ? 1 : rng.next() < 0.7 ? 1 : 0;
  }
  const logpOld = Float32Array.from({ length: R }, () => -Math.abs(rng.normal()) * 3);
  const logp = Float32Array.from(logpOld, (x) => x + rng.normal() * spread);
  const adv = Float32Array.from(mask, (m) => (rng.next() < 0.1 ? 0 : m * rng.normal()));
  return { mask, logp, logpOld, adv };
}

export interface PpoInputs {
  logp: Float32Array;
  logpOld: Float32Array;
  logpRef: Float32Array;
  adv: Float32Array;
  weight: Float32Array;
}

/** R ppoLoss rows: logp and logpRef = logpOld + N(0, spread), advantages with zeros, weights with zeros. */
export function ppoRows(R: number, seed: number, spread = 0.4): PpoInputs {
  const rng = createRng(seed);
  const logpOld = Float32Array.from({ length: R }, () => -Math.abs(rng.normal()) * 3);
  const logp = Float32Array.from(logpOld, (x) => x + rng.normal() * spread);
  const logpRef = Float32Array.from(logpOld, (x) => x + rng.normal() * spread);
  const adv = Float32Array.from({ length: R }, () => (rng.next() < 0.1 ? 0 : rng.normal()));
  const weight = Float32Array.from({ length: R }, () => (rng.next() < 0.2 ? 0 : rng.next() / 10));
  return { logp, logpOld, logpRef, adv, weight };
}

/** N trajectories of RATIO_TP ppoLoss rows with a loss mask folded into the weights (seq-mean-token-mean); trajectory 0 empty. */
export function ppoTrajInputs(N: number, seed: number, spread = 0.3): PpoInputs & { mask: Float32Array } {
  const base = ppoRows(N * RATIO_TP, seed, spread);
  const rng = createRng(seed + 1);
  const mask = Float32Array.from({ length: N * RATIO_TP }, () => (rng.next() < 0.8 ? 1 : 0));
  mask.fill(0, 0, RATIO_TP); // trajectory 0 is empty
  for (let n = 0; n < N; n++) {
    let len = 0;
    for (let j = 0; j < RATIO_TP; j++) len += mask[n * RATIO_TP + j]!;
    for (let j = 0; j < RATIO_TP; j++) base.weight[n * RATIO_TP + j] = mask[n * RATIO_TP + j]! / (N * Math.max(len, 1));
  }
  base.adv.forEach((a, i) => (base.adv[i] = a * mask[i]!));
  return { ...base, mask };
}

/** Inputs of the sample kernel: masked logits and the positions the rows write their token to. */
export interface SampleInput {
  /** [rows, V] masked logits. */
  z: Float32Array;
  V: number;
  /** Row r samples position 3r + 1 of a sequence of 3 rows + 2 tokens (distinct positions). */
  rowPos: Uint32Array;
  seqLen: number;
}

const sampleRows = (z: Float32Array, V: number, rows: number): SampleInput => ({
  z, V, rowPos: Uint32Array.from({ length: rows }, (_, r) => 3 * r + 1), seqLen: 3 * rows + 2,
});

/** Random logits, 30 % of them masked, at least one allowed token per row. */
export function randomSampleInput(rows: number, V: number, seed: number, logitScale = 2): SampleInput {
  const rng = createRng(seed);
  const z = new Float32Array(rows * V);
  for (let r = 0; r < rows; r++) {
    for (let v = 0; v < V; v++) z[r * V + v] = rng.next() < 0.3 ? MASKED_LOGIT : rng.normal() * logitScale;
    z[r * V + rng.int(V)] = rng.normal() * logitScale;
  }
  return sampleRows(z, V, rows);
}

/**
 * 120 rows of V 12 cycling through four kinds: logits of +-1e4; one dominant token (v = r % V,
 * logit 50); one allowed token (v = 5r % V); a near-uniform row (logits ~1e-6).
 */
export function extremeSampleInput(): SampleInput {
  const V = 12;
  const rows = 4 * 30;
  const rng = createRng(77);
  const z = new Float32Array(rows * V);
  for (let r = 0; r < rows; r++) {
    const kind = r % 4;
    for (let v = 0; v < V; v++) {
      if (kind === 0) z[r * V + v] = rng.next() < 0.5 ? 1e4 : -1e4;
      else if (kind === 1) z[r * V + v] = v === r % V ? 50 : rng.normal();
      else if (kind === 2) z[r * V + v] = v === (r * 5) % V ? rng.normal() : MASKED_LOGIT;
      else z[r * V + v] = 1e-6 * rng.normal();
    }
  }
  return sampleRows(z, V, rows);
}
