/**
 * Kernel benchmark cases: for every kernel, at one batch shape, the configuration its `bind` takes,
 * the CPU reference doing the same work, and the analytic bytes and FLOPs it must move.
 *
 * Inputs come from the real task (search env, its grammar and row tables via buildShape) with
 * tokens drawn under the grammar and parameters of order 1, so every row does full work (no row
 * has a zero gradient, which would let logitGrad skip it).
 *
 * Bytes are the *compulsory* traffic: every input element the kernel needs read once, every output
 * element written once (4 bytes each; u32 tokens, f32 values). Re-reads that caches serve are not
 * counted, so "effective bandwidth" = bytes / time is comparable with a plain copy of the same bytes.
 * Notation: R rows, V vocabulary, K context, D embedding, H hidden, P parameters, N trajectories,
 * Tp policy rows per trajectory.
 */
import { adamCpu, type AdamConfig, GRAD_NORM_BLOCK, GRAD_NORM_BLOCK_HARDWARE, GRAD_NORM_WORKGROUP_SIZE, gradNormBlocks, gradNormCpu, gradNormKernel } from '../../kernels/optimizer/adam';
import { ADVANTAGE_DEFAULTS, advantageCpu, groupLayout, packTrajIn, packTurnIn } from '../../kernels/advantage/advantage';
import { CONFIG_SELECTORS } from '../../kernels/selectors';
import { criticChunks, criticUpdateCpu, criticUpdateKernel, gaeCpu } from '../../kernels/advantage/critic';
import { essScaleCpu } from '../../kernels/optimizer/essScale';
import { updateHealthCpu } from '../../kernels/stats/finiteCheck';
import { negOutShareCpu } from '../../kernels/stats/negOutShare';
import { MISMATCH_WORDS, mismatchStatsCpu } from '../../kernels/stats/mismatchStats';
import { infoGainCpu } from '../../kernels/advantage/infoGain';
import { embedProjectCpu, firstLayerGradCpu, forwardCpu, givenProjTable, headGradCpu, hiddenDaCpu, paramLayout, slotGradCpu, type MlpDims } from '../../kernels/model/mlp';
import { HEAD_CHUNK_ROWS, HEAD_GRAD_BLOCK, headGradKernel, SLOT_CHUNK_ROWS, slotGradKernel, slotTableWords, FIRST_LAYER_EMB_PER_GROUP } from '../../kernels/model/mlpKernels';
import { logitGradCpu } from '../../kernels/softmax/logitGrad';
import { PPO_ROW_WORDS, ppoLossCpu } from '../../kernels/loss/ppoLoss';
import { rowChunks } from '../../kernels/reduce';
import { sampleCpu } from '../../kernels/softmax/sample';
import { seqRatioCpu } from '../../kernels/loss/seqRatio';
import { STATS_COMBINE_WORKGROUPS, STATS_MAX_HIST_COPIES, STATS_WORDS, STATS_WORKGROUP_SIZE, statsChunks, statsCpu, statsKernel } from '../../kernels/stats/stats';
import { tokenBaselineCpu } from '../../kernels/advantage/tokenBaseline';
import { tokenStatsCpu } from '../../kernels/softmax/tokenStats';
import { packTrajStats, trajStatsCpu, type TrajStats } from '../../kernels/stats/trajStats';
import { SUBGROUP_ROWS_PER_GROUP, SUBGROUP_WORKGROUP_SIZE } from '../../kernels/softmax/rowSubgroup';
import {
  WHITEN_WORKGROUP_SIZE,
  whitenBlocks,
  whitenCpu,
  whitenKernel,
} from '../../kernels/advantage/whiten';
import type { RunShape } from '../../workers/core/backend';
import { defaultConfig, withFieldText, type RunConfig } from '../../workers/core/config';
import { createEnv } from '../../workers/core/envs';
import { createRng } from '../../workers/core/rng';
import { buildShape } from '../../workers/core/trainer';

/** The loss options of the kernel cases: the token-level clipped surrogate with a KL term. */
const LOSS = { clipLow: 0.2, clipHigh: 0.2, dualClip: 3, klCoef: 0.01 };

/** One kernel at one size. */
export interface KernelCase {
  label: string;
  /** Work items in words: "R=1152 rows", "P=9795 params". */
  size: string;
  bytes: number;
  flops: number;
  /** The argument of the kernel's bind(). */
  config: unknown;
  /** Buffers of this kernel that differ from the shared pool (by binding name). */
  buffers: Record<string, Float32Array | Uint32Array | Int32Array | { words: number }>;
  /** The CPU reference doing the same work. */
  cpu: () => void;
}

/** Formula of the compulsory bytes and FLOPs per kernel (printed under the kernel table). */
export const KERNEL_COST_FORMULAS: Record<string, string> = {
  embedProject: 'bytes 4[VD + KDH + KVH] (embeddings, W1 in; the [K, V, H] table out), once per parameter set; flops 2VKDH',
  forward: 'bytes 4[H + HV + V + KVH + R(K+2) + V^2 + R(H+V)] (b1, W2, b2, the table, context+previous tokens, grammar, h and z out); flops R(KH + 2HV)',
  sample: 'bytes 4[R V + 3R] (logits, rowPos in; token to seq and to the readback); flops ~3RV',
  tokenStats: 'bytes 4[R V + 5R] (logits, rowPos, token in; logp, entropy, sum p^2 out); flops ~6RV',
  gae: 'bytes 4[4R + 4N + 2R] (critic values via state keys, mask, trajectory rows in; advantages and returns out); flops ~6R',
  criticUpdate: 'bytes 4[3R + 2C] (keys, mask, returns in; C = 4096 table entries read and written; the 2SC-word (sum, count) scratch of S = min(256, ceil(R/256)) row chunks is zeroed and read on top); flops ~2R + 2SC (each row added into its chunk\'s table, then each entry adds the S chunk tables in order)',
  infoGain: 'bytes 4[NT + 4N + 4NT] (answer log-probs, trajectory rows in; turn rows out), one answer token; flops ~4NT',
  trajStats: 'bytes 4[5R + 4N] (mask, logp old and rollout, entropy, sum p^2 in; 4 words per trajectory out); flops ~8R',
  advantage: 'bytes 4[4N + 2R] (trajectory rows, mask in; advantages out), GRPO estimator; flops ~4R',
  tokenBaseline: 'bytes 4[4N + 7R] (pass 1: mask, logp old, sum p^2 in, W by position out; pass 2: trajectory rows, mask, W in, advantages out); flops ~4RG (each row reads its group\'s W at its position)',
  whiten: 'bytes 4[3R] (mask, adv in; adv out; the block moments and the row pass each read mask and adv: 5R moved); flops ~12R (a Welford step per masked row, then 2 subtractions and a division)',
  essScale: 'bytes 4[4N + 2] (trajectory statistics in; ESS and lr factor out); flops ~6N',
  seqRatio: 'bytes 4[4R + N] (mask, logp, old, adv in; one log-ratio per trajectory out), GSPO mode; flops ~4R',
  ppoLoss: 'bytes 4[5R + R + 4R] (logp, old, ref, adv, weight in; dlogp and 4-word loss rows out); flops ~30R',
  logitGrad: 'bytes 4[2RV + 3R] (logits, rowPos, token, dlogp in; dz out); flops ~5RV',
  headGrad: 'bytes 4[RH + RV + (H+1)V] (h, dz in; dW2, db2 out); flops 2RHV + RV',
  hiddenGrad: 'bytes 4[HV + 2RH + RV] (W2, h, dz in; da out); flops 2RHV',
  slotGrad: 'bytes 4[R(K+1) + RH + KVH] (rowPos + context tokens, da in; the slot sums G out); flops RKH',
  firstLayerGrad: 'bytes 4[2(VD + KDH) + KVH + H] (embeddings, W1, G in; dEmb, dW1, db1 out), whatever R; flops 4VKDH + VH. firstLayerGradSubgroup also reads W2 | b2 once and writes one gradient-norm block sum per workgroup (the gradient norm\'s first pass), not counted',
  gradNorm: 'bytes 4[P + 1]; flops 2P',
  adam: 'bytes 4[4P + 1 + 3P] (params, grads, m, v, norm in; params, m, v out); flops ~15P',
  optimizerStep: 'gradNorm\'s and adam\'s: bytes 4[8P + 2]; flops ~17P',
  stats: 'bytes 4[9R + N + S] (mask, adv, logp, old, entropy, 4-word loss rows, rewards in; S stat words out); flops ~20R',
  finiteCheck: 'bytes 4[R + 2R + P + 1] (bits read: logp, the loss and ratio words of the loss rows, the parameters; one flag word); flops 3R + P',
  negOutShare: 'bytes 4[5R + 1] (mask, adv, logp, old, dlogp in; the share out); flops ~6R',
  mismatchStats: 'bytes 4[3R + W] (mask, old, rollout log-probs in; W metric words out); flops ~30R',
  copy: 'bytes = the same byte count as the kernel it is compared with: half read, half written, as vec4<f32>',
};

/** Compulsory bytes and FLOPs of every kernel for R rows, N trajectories, P parameters (see the formulas above). */
export function kernelCosts(dims: MlpDims, R: number, N: number, T = 3): Record<string, { bytes: number; flops: number }> {
  const { V, K, D, H } = dims;
  const P = paramLayout(dims).size;
  const KVH = slotTableWords(dims);
  return {
    embedProject: { bytes: 4 * (V * D + K * D * H + KVH), flops: 2 * V * K * D * H },
    forward: { bytes: 4 * (H + H * V + V + KVH + R * (K + 2) + V * V + R * (H + V)), flops: R * (K * H + 2 * H * V) },
    sample: { bytes: 4 * (R * V + 3 * R), flops: 3 * R * V },
    tokenStats: { bytes: 4 * (R * V + 5 * R), flops: 6 * R * V },
    gae: { bytes: 4 * (4 * R + 4 * N + 2 * R), flops: 6 * R },
    criticUpdate: { bytes: 4 * (3 * R + 2 * 4096), flops: 2 * R + 2 * 4096 * criticChunks(R, 4096).chunks },
    infoGain: { bytes: 4 * (N * T + 4 * N + 4 * N * T), flops: 4 * N * T },
    trajStats: { bytes: 4 * (5 * R + 4 * N), flops: 8 * R },
    advantage: { bytes: 4 * (4 * N + 2 * R), flops: 4 * R },
    tokenBaseline: { bytes: 4 * (4 * N + 7 * R), flops: 4 * R * 8 },
    whiten: { bytes: 4 * 3 * R, flops: 12 * R },
    essScale: { bytes: 4 * (4 * N + 2), flops: 6 * N },
    seqRatio: { bytes: 4 * (4 * R + N), flops: 4 * R },
    ppoLoss: { bytes: 4 * (5 * R + R + PPO_ROW_WORDS * R), flops: 30 * R },
    logitGrad: { bytes: 4 * (2 * R * V + 3 * R), flops: 5 * R * V },
    headGrad: { bytes: 4 * (R * H + R * V + (H + 1) * V), flops: 2 * R * H * V + R * V },
    hiddenGrad: { bytes: 4 * (H * V + 2 * R * H + R * V), flops: 2 * R * H * V },
    slotGrad: { bytes: 4 * (R * (K + 1) + R * H + KVH), flops: R * K * H },
    firstLayerGrad: { bytes: 4 * (2 * (V * D + K * D * H) + KVH + H), flops: 4 * V * K * D * H + V * H },
    gradNorm: { bytes: 4 * (P + 1), flops: 2 * P },
    adam: { bytes: 4 * (7 * P + 1), flops: 15 * P },
    optimizerStep: { bytes: 4 * (8 * P + 2), flops: 17 * P },
    stats: { bytes: 4 * (9 * R + N + STATS_WORDS), flops: 20 * R },
    finiteCheck: { bytes: 4 * (3 * R + P + 1), flops: 3 * R + P },
    negOutShare: { bytes: 4 * (5 * R + 1), flops: 6 * R },
    mismatchStats: { bytes: 4 * (3 * R + MISMATCH_WORDS), flops: 30 * R },
  };
}

/**
 * FLOPs of one training iteration at the shape of `cfg` by the formulas above: the rollout's
 * forward passes (one embedProject per turn, N rows per action slot per turn, all turns) and the
 * update's kernels (old and reference embedProject + forward + tokenStats over all rows, then per
 * optimizer step the whole chain; the row kernels over one minibatch, the model-sized ones whole).
 */
export function iterationFlops(cfg: RunConfig): { rollout: number; update: number } {
  const shape = buildShape(cfg, createEnv(cfg));
  const R = shape.N * shape.Tp;
  const all = kernelCosts(shape.dims, R, shape.N);
  const turn = kernelCosts(shape.dims, shape.N, shape.N);
  const steps = shape.epochs * shape.minibatches.length;
  const rowKernels = ['forward', 'tokenStats', 'ppoLoss', 'logitGrad', 'headGrad', 'hiddenGrad', 'slotGrad'] as const;
  const modelKernels = ['embedProject', 'firstLayerGrad', 'gradNorm', 'adam'] as const;
  const perStep =
    rowKernels.reduce((a, k) => a + all[k]!.flops / shape.minibatches.length, 0) + modelKernels.reduce((a, k) => a + all[k]!.flops, 0);
  return {
    rollout: shape.maxTurns * (turn.embedProject!.flops + shape.actionLen * (turn.forward!.flops + turn.sample!.flops)),
    update: 2 * (all.embedProject!.flops + all.forward!.flops + all.tokenStats!.flops) + all.advantage!.flops + steps * perStep + all.stats!.flops,
  };
}

/** The run config of a kernel-bench size: the classroom default with `batch` prompts (group 8). */
export function kernelConfig(batch: number, overrides: Record<string, string> = {}): RunConfig {
  let cfg = withFieldText(defaultConfig(), 'batch', String(batch));
  for (const [k, v] of Object.entries(overrides)) cfg = withFieldText(cfg, k, v);
  return cfg;
}

export interface KernelData {
  shape: RunShape;
  dims: MlpDims;
  R: number;
  P: number;
  params: Float32Array;
  seq: Int32Array;
  rowPos: Uint32Array;
  grammar: Uint8Array;
  h: Float32Array;
  z: Float32Array;
  /** [K, V, H] embedProjectCpu's table of `params`, which the forward case reads. */
  proj: Float64Array;
  dz: Float32Array;
  da: Float32Array;
  logp: Float32Array;
  logpOld: Float32Array;
  logpRef: Float32Array;
  entropy: Float32Array;
  adv: Float32Array;
  weight: Float32Array;
  dlogp: Float32Array;
  mask: Float32Array;
  rewards: Float32Array;
  /** Groups of 8 rows, every row 3 turns (the advantage stage's per-trajectory data). */
  groupStart: Uint32Array;
  groupSize: Uint32Array;
  turns: Uint32Array;
  trajStats: TrajStats;
  grads: Float32Array;
  m: Float32Array;
  v: Float32Array;
  ppoRows: Float32Array;
  kl: Float32Array;
  clip: Int32Array;
  loss: Float32Array;
}

/** Seeded inputs for every kernel at the shape of `cfg` (all N * Tp training rows). */
export function makeKernelData(cfg: RunConfig, seed = 1): KernelData {
  const env = createEnv(cfg);
  const shape = buildShape(cfg, env);
  const { dims, N, L, Tp } = shape;
  const { V } = dims;
  const R = N * Tp;
  const P = paramLayout(dims).size;
  const rng = createRng(seed);
  const params = Float32Array.from({ length: P }, () => rng.normal() * 0.3);
  // Tokens: a chain under the grammar from each trajectory's first token.
  const seq = new Int32Array(N * L);
  const allowed: number[][] = Array.from({ length: V }, (_, prev) => {
    const a: number[] = [];
    for (let t = 0; t < V; t++) if (shape.grammar[prev * V + t]) a.push(t);
    return a;
  });
  for (let n = 0; n < N; n++) {
    seq[n * L] = 1;
    for (let p = 1; p < L; p++) {
      const a = allowed[seq[n * L + p - 1]!]!;
      seq[n * L + p] = a[rng.int(a.length)]!;
    }
  }
  const rowPos = shape.trainRowPos;
  const proj = embedProjectCpu(params, dims);
  const f = forwardCpu(params, dims, seq, L, rowPos, shape.grammar, shape.temperature, givenProjTable(proj, dims));
  const ts = tokenStatsCpu(f.z, V, seq, rowPos);
  const dlogp = Float32Array.from({ length: R }, () => 0.5 + rng.next());
  const dz = logitGradCpu(f.z, V, seq, rowPos, dlogp, shape.temperature);
  const da = hiddenDaCpu(params, dims, R, f.h, dz);
  const mask = new Float32Array(R).fill(1);
  const rewards = Float32Array.from({ length: N }, () => (rng.next() < 0.4 ? 1 : 0));
  const groups = groupLayout(Array.from({ length: N / shape.group }, () => shape.group));
  const turns = new Uint32Array(N).fill(shape.maxTurns);
  const advShape = { numTraj: N, tp: Tp, maxTurns: shape.maxTurns, actionLen: shape.actionLen, nRoles: 1 };
  const adv = advantageCpu({ reward: rewards, ...groups, turns, mask }, ADVANTAGE_DEFAULTS, advShape);
  const logpOld = Float32Array.from(ts.logp, (x) => x + 0.05 * rng.normal());
  const logpRef = Float32Array.from(ts.logp, (x) => x + 0.05 * rng.normal());
  const weight = new Float32Array(R).fill(1 / R);
  const trajStats = trajStatsCpu({ mask, logpOld, logpRollout: logpRef, entropyOld: ts.entropy, sumP2Old: ts.sumP2 }, Tp);
  const lo = ppoLossCpu(ts.logp, logpOld, logpRef, adv, weight, LOSS);
  const ppoRows = new Float32Array(R * PPO_ROW_WORDS);
  const ppoInts = new Int32Array(ppoRows.buffer);
  for (let r = 0; r < R; r++) {
    ppoRows[r * 4] = lo.loss[r]!;
    ppoRows[r * 4 + 1] = lo.ratio[r]!;
    ppoRows[r * 4 + 2] = lo.kl[r]!;
    ppoInts[r * 4 + 3] = lo.clip[r]!;
  }
  const grads = Float32Array.from({ length: P }, () => rng.normal() * 1e-2);
  return {
    shape,
    dims,
    R,
    P,
    params,
    seq,
    rowPos,
    grammar: shape.grammar,
    h: f.h,
    z: f.z,
    proj,
    dz,
    da,
    logp: ts.logp,
    logpOld,
    logpRef,
    entropy: ts.entropy,
    adv,
    weight,
    dlogp,
    mask,
    rewards,
    ...groups,
    turns,
    trajStats,
    grads,
    m: new Float32Array(P),
    v: new Float32Array(P),
    ppoRows,
    kl: lo.kl,
    clip: lo.clip,
    loss: lo.loss,
  };
}

/** The shared GPU buffers of a size, by binding name (kernels override some, see KernelCase.buffers). */
export function sharedBuffers(d: KernelData): KernelCase['buffers'] {
  return {
    params: d.params,
    seq: Uint32Array.from(d.seq),
    rowPos: d.rowPos,
    grammar: Uint32Array.from(d.grammar),
    h: d.h,
    z: d.z,
    proj: Float32Array.from(d.proj),
    dz: d.dz,
    da: d.da,
    logp: d.logp,
    logpOld: d.logpOld,
    logpRef: d.logpRef,
    entropy: d.entropy,
    sumP2: { words: d.R },
    adv: d.adv,
    weight: d.weight,
    dlogp: d.dlogp,
    mask: d.mask,
    trajIn: packTrajIn({ reward: d.rewards, groupStart: d.groupStart, groupSize: d.groupSize, turns: d.turns }),
    traj: packTrajIn({ reward: d.rewards, groupStart: d.groupStart, groupSize: d.groupSize, turns: d.turns }),
    turnIn: packTurnIn({}, d.shape.N, d.shape.maxTurns),
    roleRewards: new Float32Array(d.shape.N),
    trajStats: packTrajStats(d.trajStats),
    stats: packTrajStats(d.trajStats),
    logpRollout: d.logpRef,
    entropyOld: d.entropy,
    sumP2Old: d.entropy,
    seqLog: { words: d.shape.N },
    critic: Float32Array.from({ length: 4096 }, (_, k) => Math.sin(k)),
    stateKey: Uint32Array.from({ length: d.R }, (_, i) => (i * 2654435761) % 4096),
    ret: d.logp,
    lrScale: Float32Array.of(1, 1),
    grads: d.grads,
    m: d.m,
    v: d.v,
    norm: Float32Array.of(gradNormCpu(d.grads)),
    health: { words: 1 },
    ppo: d.ppoRows,
  };
}

/**
 * Cases by kernel label with their bytes and FLOPs, plus a case for each other layout of a kernel
 * (`${label}Subgroup`, `${label}Unrolled`: kernels/selectors.ts), which does the same work on the
 * same buffers.
 */
function casesByLabel(
  cases: Array<Omit<KernelCase, 'bytes' | 'flops'>>,
  cost: Record<string, { bytes: number; flops: number }>,
  layouts: Readonly<Record<string, readonly string[]>>,
): Record<string, KernelCase> {
  const all = [
    ...cases.map((c) => [c.label, c] as const),
    ...Object.entries(layouts).flatMap(([l, suffixes]) =>
      suffixes.map((suffix) => [l, { ...cases.find((c) => c.label === l)!, label: `${l}${suffix}` }] as const),
    ),
  ];
  return Object.fromEntries(all.map(([of, c]) => [c.label, { ...c, ...cost[of]! }]));
}

/** Every kernel's case at the size of `d`, keyed by kernel label. */
export function kernelCases(d: KernelData): Record<string, KernelCase> {
  const { shape, dims, R } = d;
  const { N, Tp } = shape;
  const rows = `R=${R} rows`;
  const seqCopy = Int32Array.from(d.seq);
  const cost = kernelCosts(dims, R, N, shape.maxTurns);
  const x: CaseContext = {
    rows,
    seqCopy,
    advShape: { numTraj: N, tp: Tp, maxTurns: shape.maxTurns, actionLen: shape.actionLen, nRoles: 1 },
    // PPO's critic: a 4096-entry table and a state key per row.
    critic: Float32Array.from({ length: 4096 }, (_, k) => Math.sin(k)),
    stateKeys: Uint32Array.from({ length: R }, (_, i) => (i * 2654435761) % 4096),
  };
  const cases = [...rolloutCases(d, x), ...advantageStageCases(d, x), ...lossAndGradientCases(d, x), ...checkCases(d, x)];
  // stats with the hardware variant's pass 2 (kernels/selectors.ts statsSpreadBins): same pipelines
  // and bytes, the histogram bins added up by workgroups of their own. And that layout with pass 1's
  // chunks of 512 rows, as on the H200 before chunks grew to STATS_CHUNK_ROWS: more records. And
  // the hardware variant's whole configuration now, pass 1's histograms in copies too
  // (kernels/selectors.ts statsHistCopies): same bytes, another pipeline of pass 1.
  const stats = cases.find((c) => c.label === 'stats')!;
  const spread = { ...stats, label: STATS_HARDWARE_CASE, config: { ...stats.config as object, spreadBins: true } };
  const copies = { ...stats, label: STATS_HIST_COPIES_CASE, config: { ...stats.config as object, spreadBins: true, histCopies: STATS_MAX_HIST_COPIES } };
  const chunk512 = { numTraj: N, tp: Tp, minibatches: 1, spreadBins: true, chunkRows: 512 };
  const previous = {
    ...stats, label: STATS_CHUNK512_CASE, config: chunk512,
    buffers: { ...stats.buffers, partials: { words: statsKernel.scratchWords(chunk512) } },
  };
  // advantage as the hardware variant binds it (kernels/selectors.ts advantageGroupSize): the run's group size
  // compiled in, another pipeline of the same kernel, same bytes.
  const advantage = cases.find((c) => c.label === 'advantage')!;
  const fixedGroup = { ...advantage, label: ADVANTAGE_FIXED_GROUP_CASE, config: { ...advantage.config as object, groupSize: CONFIG_SELECTORS.advantageGroupSize.pick('subgroup', { vocab: dims.V, group: shape.group }) } };
  return {
    ...casesByLabel(cases, cost, { sample: ['Subgroup', 'Unrolled'], tokenStats: ['Subgroup', 'Unrolled'], logitGrad: ['Subgroup'] }),
    [ADVANTAGE_FIXED_GROUP_CASE]: { ...fixedGroup, ...cost.advantage! },
    [STATS_HARDWARE_CASE]: { ...spread, ...cost.stats! },
    [STATS_CHUNK512_CASE]: { ...previous, ...cost.stats! },
    [STATS_HIST_COPIES_CASE]: { ...copies, ...cost.stats! },
  };
}

/** What the cases of every family share. */
interface CaseContext {
  rows: string;
  /** sample writes tokens into seq: a copy of its own, so other kernels keep their inputs. */
  seqCopy: Int32Array;
  advShape: { numTraj: number; tp: number; maxTurns: number; actionLen: number; nRoles: number };
  critic: Float32Array;
  stateKeys: Uint32Array;
}

/** The forward pass, sampling and the token statistics. */
function rolloutCases(d: KernelData, x: CaseContext): Array<Omit<KernelCase, 'bytes' | 'flops'>> {
  const { shape, dims, R } = d;
  const V = dims.V;
  const L = shape.L;
  const T = shape.temperature;
  const { rows, seqCopy } = x;
  return [
    {
      label: 'forward',
      size: rows,
      config: { dims, seqLen: L, numRows: R, temperature: T },
      buffers: {},
      // Given the table, as the kernel is: embedProject is its own case.
      cpu: () => void forwardCpu(d.params, dims, d.seq, L, d.rowPos, d.grammar, T, givenProjTable(d.proj, dims)),
    },
    {
      label: 'sample',
      size: rows,
      config: { vocab: V, numRows: R, seed: 1, iter: 1 },
      // It writes tokens into seq: a copy of its own, so other kernels keep their inputs.
      buffers: { seq: Uint32Array.from(d.seq), sampled: { words: R } },
      cpu: () => sampleCpu(d.z, V, d.rowPos, seqCopy, 1, 1),
    },
    {
      label: 'tokenStats',
      size: rows,
      config: { vocab: V, numRows: R },
      buffers: { logp: { words: R }, entropy: { words: R } },
      cpu: () => void tokenStatsCpu(d.z, V, d.seq, d.rowPos),
    },
  ];
}

/** The advantage stage: PPO's critic, IGPO's gain, the trajectory statistics, the estimators, whitening and the ESS. */
function advantageStageCases(d: KernelData, x: CaseContext): Array<Omit<KernelCase, 'bytes' | 'flops'>> {
  const { shape, R } = d;
  const { N, Tp } = shape;
  const { rows, advShape, critic, stateKeys } = x;
  return [
    {
      label: 'gae',
      size: `N=${N}, ${rows}`,
      config: { numTraj: N, tp: Tp, gamma: 1, lambda: 1 },
      buffers: { adv: { words: R }, ret: { words: R } },
      cpu: () => void gaeCpu(critic, stateKeys, d.mask, d.rewards, Tp, { gamma: 1, lambda: 1 }),
    },
    {
      label: 'criticUpdate',
      size: `C=4096 entries, ${rows}`,
      config: { tableSize: 4096, numRows: R, lr: 0.1 },
      buffers: { critic: Float32Array.from(critic), partials: { words: criticUpdateKernel.scratchWords({ tableSize: 4096, numRows: R, lr: 0.1 }) } },
      cpu: () => void criticUpdateCpu(Float32Array.from(critic), stateKeys, d.mask, d.logp, 0.1),
    },
    {
      label: 'infoGain',
      size: `N=${N}, ${shape.maxTurns} turns`,
      config: { numTraj: N, maxTurns: shape.maxTurns, span: 1, igType: 'prob_diff' },
      buffers: { scoreLogp: d.logp.slice(0, N * shape.maxTurns) },
      cpu: () => void infoGainCpu(d.logp.slice(0, N * shape.maxTurns), 1, d.turns, d.rewards, shape.maxTurns, 'prob_diff'),
    },
    {
      label: 'trajStats',
      size: `N=${N}, ${rows}`,
      config: { numTraj: N, tp: Tp },
      buffers: { out: { words: 4 * N } },
      cpu: () => void trajStatsCpu({ mask: d.mask, logpOld: d.logpOld, logpRollout: d.logpRef, entropyOld: d.entropy, sumP2Old: d.entropy }, Tp),
    },
    {
      label: 'advantage',
      size: `N=${N}, ${rows}`,
      config: { ...advShape, ...ADVANTAGE_DEFAULTS },
      buffers: { adv: { words: R } },
      cpu: () => void advantageCpu({ reward: d.rewards, groupStart: d.groupStart, groupSize: d.groupSize, turns: d.turns, mask: d.mask }, ADVANTAGE_DEFAULTS, advShape),
    },
    {
      label: 'tokenBaseline',
      size: `N=${N}, ${rows}`,
      config: { numTraj: N, tp: Tp },
      buffers: { adv: { words: R }, wpos: { words: R } },
      cpu: () => void tokenBaselineCpu({ reward: d.rewards, groupStart: d.groupStart, groupSize: d.groupSize, mask: d.mask, logpOld: d.logpOld, sumP2Old: d.entropy }, Tp),
    },
    {
      label: 'whiten',
      size: rows,
      config: { numRows: R },
      buffers: { adv: Float32Array.from(d.adv), partials: { words: whitenKernel.scratchWords({ numRows: R }) } },
      cpu: () => void whitenCpu(d.adv, d.mask),
    },
    {
      label: 'essScale',
      size: `N=${N}`,
      config: { numTraj: N, enabled: true, rule: 'sqrt', rhoBase: 1 },
      buffers: { out: { words: 2 } },
      cpu: () => void essScaleCpu(d.trajStats, { enabled: true, rule: 'sqrt', rhoBase: 1 }),
    },
  ];
}

/** The optimizer step's loss (sequence ratios, the surrogate) and backward pass. */
function lossAndGradientCases(d: KernelData, x: CaseContext): Array<Omit<KernelCase, 'bytes' | 'flops'>> {
  const { dims, R, P } = d;
  const { V, H } = dims;
  const { N, L, Tp } = d.shape;
  const T = d.shape.temperature;
  const { rows } = x;
  return [
    {
      label: 'seqRatio',
      size: `N=${N}, ${rows}`,
      config: { numRows: R, mode: 'sequence', tp: Tp },
      buffers: { out: { words: N } },
      cpu: () => void seqRatioCpu(d.mask, d.logp, d.logpOld, d.adv, { mode: 'sequence', tp: Tp }),
    },
    {
      label: 'ppoLoss',
      size: rows,
      config: { numRows: R, ...LOSS },
      buffers: { dlogp: { words: R }, out: { words: R * PPO_ROW_WORDS } },
      cpu: () => void ppoLossCpu(d.logp, d.logpOld, d.logpRef, d.adv, d.weight, LOSS),
    },
    {
      label: 'logitGrad',
      size: rows,
      config: { numRows: R, vocab: V, temperature: T },
      buffers: { dz: { words: R * V } },
      cpu: () => void logitGradCpu(d.z, V, d.seq, d.rowPos, d.dlogp, T),
    },
    {
      label: 'headGrad',
      size: rows,
      config: { numRows: R, dims },
      buffers: { grads: { words: P }, partials: { words: headGradKernel.scratchWords({ numRows: R, dims }) } },
      cpu: () => void headGradCpu(dims, R, d.h, d.dz, new Float32Array(P)),
    },
    {
      label: 'hiddenGrad',
      size: rows,
      config: { numRows: R, dims },
      buffers: { da: { words: R * H } },
      cpu: () => void hiddenDaCpu(d.params, dims, R, d.h, d.dz),
    },
    {
      label: 'slotGrad',
      size: rows,
      config: { numRows: R, dims, seqLen: L },
      // Pass 2 writes the slot sums G into the buffer bound as `grads`.
      buffers: { grads: { words: slotTableWords(dims) }, partials: { words: slotGradKernel.scratchWords({ numRows: R, dims, seqLen: L }) } },
      cpu: () => void slotGradCpu(dims, d.seq, L, d.rowPos, d.da),
    },
  ];
}

/** After the steps: the finite checks, ARLArena's diagnosis, the sampler's mismatch and the statistics. */
function checkCases(d: KernelData, x: CaseContext): Array<Omit<KernelCase, 'bytes' | 'flops'>> {
  const { R, P } = d;
  const { N, Tp } = d.shape;
  const { rows } = x;
  return [
    {
      label: 'finiteCheck',
      size: `${rows}, P=${d.P} params`,
      config: { rows: R, rowWords: PPO_ROW_WORDS, params: d.P },
      buffers: { ppo: d.ppoRows, health: { words: 1 } },
      cpu: () => void updateHealthCpu(d.logp, d.ppoRows, PPO_ROW_WORDS, d.params),
    },
    {
      label: 'negOutShare',
      size: rows,
      config: { numRows: R },
      buffers: { out: { words: 1 } },
      cpu: () => void negOutShareCpu({ mask: d.mask, adv: d.adv, logp: d.logp, logpOld: d.logpOld, dlogp: d.dlogp }),
    },
    {
      label: 'mismatchStats',
      size: `N=${N}, ${rows}`,
      config: { numTraj: N, tp: Tp },
      buffers: { out: { words: MISMATCH_WORDS } },
      cpu: () => void mismatchStatsCpu({ mask: d.mask, logpOld: d.logpOld, logpRollout: d.logpRef, Tp }),
    },
    {
      label: 'stats',
      size: `N=${N}, ${rows}`,
      config: { numTraj: N, tp: Tp, minibatches: 1 },
      buffers: { out: { words: STATS_WORDS }, partials: { words: statsKernel.scratchWords({ numTraj: N, tp: Tp, minibatches: 1 }) } },
      cpu: () =>
        void statsCpu({
          mask: d.mask, adv: d.adv, logp: d.logp, logpOld: d.logpOld, entropy: d.entropy, kl: d.kl,
          clip: d.clip, loss: d.loss, rewards: d.rewards, groupStart: d.groupStart, groupSize: d.groupSize, turns: d.turns, Tp, minibatches: 1,
        }),
    },
  ];
}

/** The kernel table's row for advantage with the group size compiled in (AdvantageConfig.groupSize). */
export const ADVANTAGE_FIXED_GROUP_CASE = 'advantageFixedGroup';
/** The kernel table's row for stats with spreadBins (bench/page/kernels.ts). */
export const STATS_HARDWARE_CASE = 'statsSpreadBins';
/** The kernel table's row for stats with spreadBins and chunks of 512 rows (StatsConfig.chunkRows). */
export const STATS_CHUNK512_CASE = 'statsChunk512';
/** The kernel table's row for stats with spreadBins and pass 1's histograms in copies (StatsConfig.histCopies). */
export const STATS_HIST_COPIES_CASE = 'statsHistCopies';

/**
 * The kernels whose work follows the model, not the batch: the per-parameter ones (gradNorm,
 * adam) and the first layer's per-parameter-set ones (embedProject, firstLayerGrad),
 * at the size of `dims`, on buffers of their own; the benchmark grows the hidden width for them
 * instead of the batch.
 */
export function paramKernelCases(dims: MlpDims, optim: RunShape['optim'], seed = 2): Record<string, KernelCase> {
  const P = paramLayout(dims).size;
  const KVH = slotTableWords(dims);
  const rng = createRng(seed);
  const params = Float32Array.from({ length: P }, () => rng.normal() * 0.3);
  const grads = Float32Array.from({ length: P }, () => rng.normal() * 1e-2);
  // Slot sums of the size a minibatch's da would give (values do not change the work).
  const G = Float64Array.from({ length: KVH }, () => rng.normal());
  const norm = gradNormCpu(grads);
  const state = { params: Float32Array.from(params), m: new Float32Array(P), v: new Float32Array(P) };
  const size = `P=${P} params (H=${dims.H})`;
  const table = `K·V·H=${KVH} table (H=${dims.H})`;
  const cost = kernelCosts(dims, 1, 1);
  const cases: Array<Omit<KernelCase, 'bytes' | 'flops'>> = [
    {
      label: 'embedProject',
      size: table,
      config: { dims },
      buffers: { params, proj: { words: KVH } },
      cpu: () => void embedProjectCpu(params, dims),
    },
    {
      label: 'firstLayerGrad',
      size: table,
      config: { dims },
      buffers: { params, G: Float32Array.from(G), grads: { words: P } },
      cpu: () => void firstLayerGradCpu(params, dims, G, new Float32Array(P)),
    },
    {
      label: 'gradNorm',
      size,
      config: { n: P },
      buffers: { grads, norm: { words: 1 }, partials: { words: gradNormKernel.scratchWords({ n: P }) } },
      cpu: () => void gradNormCpu(grads),
    },
    {
      label: 'adam',
      size,
      config: { n: P, lr: 1e-4, ...optim, step: 1 },
      // Updates params, m and v in place, on every repetition (the work does not change).
      buffers: { params: Float32Array.from(params), grads, m: new Float32Array(P), v: new Float32Array(P), norm: Float32Array.of(norm), health: { words: 1 } },
      cpu: () => void adamCpu(state.params, grads, state.m, state.v, norm, { lr: 1e-4, ...optim, step: 1 }),
    },
  ];
  // gradNorm with the hardware variant's block (kernels/selectors.ts gradNormBlock): same pipelines
  // and bytes, more and shorter blocks.
  const gradNorm = cases.find((c) => c.label === 'gradNorm')!;
  const hwConfig = { n: P, block: GRAD_NORM_BLOCK_HARDWARE };
  const hwPartials = { words: gradNormKernel.scratchWords(hwConfig) };
  const hardware = { ...gradNorm, label: GRAD_NORM_HARDWARE_CASE, config: hwConfig, buffers: { ...gradNorm.buffers, partials: hwPartials } };
  // The whole optimizer step (kernels/optimizer/adam.ts optimizerStepKernel): three dispatches with the
  // thread variant's block and with the hardware one's.
  const adam = cases.find((c) => c.label === 'adam')!;
  const step = (label: string, block: number): KernelCase => ({
    label,
    size,
    config: { ...(adam.config as AdamConfig), block },
    buffers: { ...adam.buffers, partials: { words: gradNormKernel.scratchWords({ n: P, block }) } },
    cpu: () => void adamCpu(state.params, grads, state.m, state.v, gradNormCpu(grads), { lr: 1e-4, ...optim, step: 1 }),
    ...cost.optimizerStep!,
  });
  return {
    ...casesByLabel(cases, cost, { firstLayerGrad: ['Subgroup'] }),
    [GRAD_NORM_HARDWARE_CASE]: { ...hardware, ...cost.gradNorm! },
    optimizerStep: step('optimizerStep', GRAD_NORM_BLOCK),
    [OPTIMIZER_STEP_HARDWARE_CASE]: step(OPTIMIZER_STEP_HARDWARE_CASE, GRAD_NORM_BLOCK_HARDWARE),
  };
}

/** The kernel table's row for the three-dispatch optimizer step with GRAD_NORM_BLOCK_HARDWARE. */
export const OPTIMIZER_STEP_HARDWARE_CASE = 'optimizerStepBlock2048';

/** The kernel table's row for gradNorm with GRAD_NORM_BLOCK_HARDWARE (bench/page/kernels.ts). */
export const GRAD_NORM_HARDWARE_CASE = 'gradNormBlock2048';

/** How a kernel's work is spread: invocations that do work, and the longest serial loop in one. */
export interface LaunchShape {
  kernel: string;
  threads: number;
  /** Inner-loop iterations of one invocation (its critical path, in multiply-adds or elements). */
  serial: number;
  /** How the kernel maps work to invocations. */
  mapping: string;
}

/**
 * gradNorm's two passes for P parameters (kernels/optimizer/adam.ts): per-thread loop iterations, not
 * counting the 8 tree levels each pass adds.
 */
export function gradNormShapes(P: number): LaunchShape[] {
  const wg = GRAD_NORM_WORKGROUP_SIZE;
  return [GRAD_NORM_BLOCK, GRAD_NORM_BLOCK_HARDWARE].flatMap((block): LaunchShape[] => {
    const blocks = gradNormBlocks(P, block);
    const name = block === GRAD_NORM_BLOCK ? 'gradNorm' : GRAD_NORM_HARDWARE_CASE;
    return [
      { kernel: name, threads: blocks * wg, serial: block / wg, mapping: `workgroup per block of ${block} entries, strided (4 loads in flight), then a tree` },
      { kernel: `${name} (sum)`, threads: wg, serial: Math.ceil(blocks / wg), mapping: 'one workgroup: the block sums in order, then a tree' },
    ];
  });
}

/**
 * whiten's three dispatches for R rows (kernels/advantage/whiten.ts): per-thread loop iterations, not counting
 * the trees (8 levels in pass 1, ceil(log2 blocks) in the combine).
 */
export function whitenShapes(R: number): LaunchShape[] {
  const wg = WHITEN_WORKGROUP_SIZE;
  const { block, blocks } = whitenBlocks(R);
  return [
    { kernel: 'whiten', threads: blocks * wg, serial: block / wg, mapping: `workgroup per block of ${block} rows, strided, then a tree of Chan merges` },
    { kernel: 'whiten (combine)', threads: wg, serial: 1, mapping: 'one workgroup: a block per thread, then a tree of Chan merges' },
    { kernel: 'whiten (rows)', threads: R, serial: 1, mapping: 'thread per row' },
  ];
}

/**
 * stats' two passes for N trajectories of Tp rows in groups of `group` (kernels/stats/stats.ts): pass 1
 * walks its chunk's rows twice and, per thread, one trajectory's rows (in workgroup memory) and its
 * group's rewards; pass 2 the chunk records.
 */
export function statsShapes(N: number, Tp: number, group: number): LaunchShape[] {
  const wg = STATS_WORKGROUP_SIZE;
  const { trajPerChunk, chunks } = statsChunks(N, Tp);
  return [
    {
      kernel: 'stats', threads: chunks * wg, serial: 2 * Math.ceil((trajPerChunk * Tp) / wg) + Tp + group,
      mapping: `workgroup per chunk of ${trajPerChunk} trajectories: 2 strided passes over its rows, then a thread per trajectory sums its log-ratios from workgroup memory`,
    },
    {
      kernel: 'stats (combine)', threads: wg, serial: Math.max(2 * Math.ceil(chunks / wg), Math.ceil(chunks / (wg / 64))),
      mapping: 'one workgroup: the records\' sums and counters a chunk per thread in order, the histogram bins a word per thread (4 lanes of 64), then trees',
    },
    {
      kernel: `${STATS_HARDWARE_CASE} (combine)`, threads: STATS_COMBINE_WORKGROUPS * wg, serial: 2 * Math.ceil(chunks / wg),
      mapping: `${STATS_COMBINE_WORKGROUPS} workgroups: one adds the records\' sums and counters a chunk per thread in order, the others 4 histogram bins each; then trees`,
    },
  ];
}

/**
 * Launch shapes of the update's kernels at the shape of `cfg`, from the WGSL (workgroup sizes from
 * kernels/*.ts): hardware-independent, so it says on any machine which kernels cannot fill a real
 * GPU (a GPU needs ~10^4-10^5 invocations in flight; one long serial loop per invocation is
 * latency-bound however fast the GPU is).
 */
export function launchShapes(cfg: RunConfig): { R: number; shapes: LaunchShape[] } {
  const env = createEnv(cfg);
  const shape = buildShape(cfg, env);
  const { V, K, D, H } = shape.dims;
  const R = shape.N * shape.Tp;
  const P = paramLayout(shape.dims).size;
  const wg = 64;
  const per = (n: number) => Math.ceil(n / wg);
  // The two-pass reductions (kernels/reduce.ts): pass 1 over row chunks, pass 2 over the chunks.
  const reduction = (kernel: string, outputs: number, minRows: number, threads: (chunks: number) => number, perRow: number, mapping: string, extra = 0): LaunchShape[] => {
    const { rowsPerChunk, chunks } = rowChunks(R, outputs, minRows);
    return [
      { kernel, threads: threads(chunks), serial: rowsPerChunk * perRow + extra, mapping },
      { kernel: `${kernel} (sum)`, threads: outputs, serial: chunks, mapping: 'chunkSum: thread per output, serial over the chunks in order' },
    ];
  };
  const critic = criticChunks(R, 4096);
  const shapes: LaunchShape[] = [
    { kernel: 'embedProject', threads: K * V * H, serial: D, mapping: 'thread per (context slot, token, hidden unit), once per parameter set' },
    { kernel: 'forward (hidden)', threads: R * H, serial: K, mapping: 'thread per (row, hidden unit): K table entries' },
    { kernel: 'forward (logits)', threads: R * V, serial: H, mapping: 'thread per (row, vocabulary entry): H products' },
    { kernel: 'sample', threads: R, serial: V, mapping: 'thread per row, serial over the vocabulary' },
    { kernel: 'tokenStats', threads: R, serial: 3 * V, mapping: 'thread per row, 3 serial passes over the vocabulary' },
    {
      kernel: 'advantage', threads: per(shape.N) * wg, serial: 2 * shape.group + shape.Tp,
      mapping: 'thread per trajectory, twice over its group; then the workgroup writes its rows together, masks loaded 12 rows at a time per thread, the first 12 before the group walks',
    },
    // PPO's critic (4096 entries; kernels/advantage/critic.ts): pass 1 per row chunk, pass 2 per entry.
    { kernel: 'criticUpdate', threads: critic.chunks * wg, serial: per(4096) + critic.rowsPerChunk,
      mapping: `workgroup per chunk of ${critic.rowsPerChunk} rows: zeroes the chunk's 4096-entry (sum, count) table together, then one thread adds the chunk's rows in order` },
    { kernel: 'criticUpdate (apply)', threads: 4096, serial: critic.chunks, mapping: 'thread per table entry: the chunk tables in chunk order, then the step toward the mean return' },
    ...whitenShapes(R),
    { kernel: 'ppoLoss', threads: R, serial: 1, mapping: 'thread per row' },
    { kernel: 'logitGrad', threads: R, serial: 3 * V, mapping: 'thread per row, 3 serial passes over the vocabulary' },
    // Their unrolled versions (kernels/softmax/rowUnrolled.ts): the row loaded once, then walked in registers.
    { kernel: 'sampleUnrolled', threads: R, serial: V, mapping: 'thread per row, the vocabulary compiled in: the row loaded at once, walked in registers' },
    { kernel: 'tokenStatsUnrolled', threads: R, serial: V, mapping: 'thread per row, the vocabulary compiled in: the row loaded at once, walked in registers' },
    // Their subgroup variants (kernels/softmax/rowSubgroup.ts), serial steps at 32 lanes (NVIDIA, Apple).
    ...(['sample', 'tokenStats', 'logitGrad'] as const).map((k): LaunchShape => ({
      kernel: `${k}Subgroup`,
      threads: Math.ceil(R / SUBGROUP_ROWS_PER_GROUP) * SUBGROUP_WORKGROUP_SIZE,
      serial: (SUBGROUP_ROWS_PER_GROUP / (SUBGROUP_WORKGROUP_SIZE / 32) / 4) * 3 * Math.ceil(V / 32),
      mapping: `subgroup per 4 rows at once (vec4 reductions), ${SUBGROUP_ROWS_PER_GROUP} rows per workgroup of ${SUBGROUP_WORKGROUP_SIZE}: a lane per logit`,
    })),
    ...reduction('headGrad', (H + 1) * V, HEAD_CHUNK_ROWS, (c) => c * (H + 1) * Math.ceil(V / HEAD_GRAD_BLOCK), 1,
      `thread per (row chunk, hidden unit or bias, ${HEAD_GRAD_BLOCK} vocabulary entries), serial over the chunk\'s rows`),
    { kernel: 'hiddenGrad', threads: R * H, serial: V, mapping: 'thread per (row, hidden unit), serial over the vocabulary' },
    ...reduction('slotGrad', K * V * H, SLOT_CHUNK_ROWS, (c) => c * K * H, 1,
      'thread per (row chunk, context slot, hidden unit): zeroes its V entries of the chunk\'s [K, V, H] table, then scatters the chunk\'s rows into them', V),
    { kernel: 'firstLayerGrad', threads: V * D + K * D * H + H, serial: K * H, mapping: 'thread per output of emb | W1 | b1: K·H terms for an embedding entry, V for a weight or bias' },
    // Its subgroup variant (kernels/model/firstLayerGradSubgroup.wgsl), serial steps at 32 lanes.
    { kernel: 'firstLayerGradSubgroup',
      threads: Math.ceil((V * D) / FIRST_LAYER_EMB_PER_GROUP) * SUBGROUP_WORKGROUP_SIZE + K * D * H + H,
      serial: Math.max(Math.ceil(FIRST_LAYER_EMB_PER_GROUP / (SUBGROUP_WORKGROUP_SIZE / 32)) * Math.ceil((K * H) / 32), V),
      mapping: `subgroup per embedding entry, ${FIRST_LAYER_EMB_PER_GROUP} per workgroup of ${SUBGROUP_WORKGROUP_SIZE}: lanes split its K·H terms, subgroupAdd; then thread per weight or bias (V terms)` },
    ...gradNormShapes(P),
    { kernel: 'adam', threads: P, serial: 1, mapping: 'thread per parameter' },
    ...statsShapes(shape.N, shape.Tp, shape.group),
    { kernel: 'finiteCheck', threads: 2 * R + P, serial: 1, mapping: 'thread per logp value, per loss row (its loss and ratio words), per parameter' },
  ];
  return { R, shapes };
}
