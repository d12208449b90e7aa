/**
 * The GPU backend: the same sequence of operations as cpuBackend.ts, as WGSL kernels on buffers
 * that stay on the device. Every buffer, pipeline, uniform and bind group is made once here; a
 * call only rewrites the few uniforms that change (the sampling iteration, Adam's step and lr).
 *
 * Per rollout turn: one command buffer with the rollout policy's first-layer table (embedProject)
 * and actionLen (forward, sample) dispatch pairs, and one readback of the N * actionLen sampled
 * tokens. Per update: one command buffer with every dispatch (old/ref log-probs, advantages,
 * epochs x minibatches of forward ... Adam, statistics) and one readback of the statistics.
 * Every forward reads the shared [K, V, H] table `proj`; an embedProject dispatch remakes it
 * before each forward whose parameters differ from the ones it was last made from. No DOM APIs: it runs in a page, a worker or Node (Dawn).
 */
import { usesSeqRatio } from './plan';
import { gradNormKernel, optimizerStepKernel } from '../../kernels/optimizer/adam';
import { packTrajIn, packTurnIn } from '../../kernels/advantage/advantage';
import { criticUpdateKernel } from '../../kernels/advantage/critic';
import { paramLayout } from '../../kernels/model/mlp';
import { backwardScratchWords, forwardKernel, slotTableWords } from '../../kernels/model/mlpKernels';
import { BufferUsage, compileKernels, MapMode } from '../../kernels/pipeline';
import { KL_TYPES, PPO_ROW_WORDS, RATIO_MODES, unpackPpoRows } from '../../kernels/loss/ppoLoss';
import type { SampleConfig } from '../../kernels/softmax/sample';
import { decodeStats, STATS_WORDS, statsKernel } from '../../kernels/stats/stats';
import { tokenBaselineKernel } from '../../kernels/advantage/tokenBaseline';
import { defaultKernelVariant, type KernelVariant } from '../../kernels/selectors';
import { TRAJ_STATS_WORDS, unpackTrajStats } from '../../kernels/stats/trajStats';
import { ESS_OUT_STRIDE } from '../../kernels/optimizer/essScale';
import { whitenKernel, whitenScratchWords } from '../../kernels/advantage/whiten';
import { essOfUpdate, type Backend, type BatchTensors, type ModelState, type RunShape, type UpdateInput, type UpdateStats } from './backend';
import {
  advantageConfigFor,
  backendKernels,
  backendPipelines,
  createKernels,
  gradNormBlockFor,
  runsTokenBaseline,
  statsConfigFor,
  updateSteps,
} from './gpuKernels';
import { copyRows } from './rowCopy';

export interface GpuBackendOptions {
  /** Adapter description shown to the user. */
  label?: string;
  /**
   * The kernels that have hardware versions run them ('subgroup': logitGrad's subgroup rows, and
   * sample's and tokenStats' above 64 logits; firstLayerGrad's subgroup
   * version; gradNorm's block; stats' spread bins) or the thread ones (kernels/selectors.ts);
   * default defaultKernelVariant(device): the hardware versions on a hardware adapter that has
   * subgroups.
   */
  kernelVariant?: KernelVariant;
}

/**
 * Dispatches one sampleTurn and one update() record (for tests and benchmarks): a turn is
 * embedProject (the rollout policy's table) then actionLen x (forward (2: hidden units, then
 * logits), sample); an update is
 * (IGPO) embedProject + forward + tokenStats over the answer contexts and infoGain, then
 * embedProject + forward + tokenStats for the reference, (with stale rollouts) the rollout and
 * the old log-probs, trajStats, the advantage (OTB's in 2 dispatches: W by position, then the
 * rows; plus whitening for REINFORCE++ and PPO, 3
 * dispatches: block moments, their combination, the rows), essScale per minibatch, then per
 * optimizer step embedProject + forward (both skipped on the first step, which reuses the old
 * log-probs' h and z), tokenStats, (VCPO) trajStats and essScale of the step's own ESS, seqRatio (sequence-level ratio modes), ppoLoss, logitGrad,
 * headGrad (2 dispatches: row chunks, then their sum; kernels/reduce.ts), hiddenGrad, slotGrad
 * (2), firstLayerGrad, gradNorm (2: blocks of the gradient, then their sum) and adam, and finally
 * stats (2: chunks of trajectories, then their combination), the crash diagnosis (negOutShare: 1)
 * and the finite checks (log-probs, loss and ratio columns, parameters: 1). The same in both kernel variants.
 */
export function dispatchCounts(shape: RunShape): { sampleTurn: number; update: number } {
  const steps = updateSteps(shape);
  // The forward is two dispatches (hidden units, then logits; kernels/stages.ts).
  const F = forwardKernel.dispatches;
  // embedProject, forward, tokenStats per log-prob pass; IGPO's adds infoGain.
  const logps = (2 + F) * (2 + (shape.staleness > 0 ? 1 : 0)) + (shape.scoreContexts > 0 ? 3 + F : 0);
  // embedProject, forward, tokenStats, ppoLoss, logitGrad, headGrad (2), hiddenGrad, slotGrad (2),
  // firstLayerGrad, the optimizer step (gradNorm and adam: 3) (+ seqRatio)
  const perStep = 10 + F + optimizerStepKernel.dispatches + (usesSeqRatio(shape.loss.ratioMode) ? 1 : 0);
  // PPO: GAE replaces the advantage kernel, and the critic's update (2: row chunks, then the table) follows it.
  const critic = shape.critic ? criticUpdateKernel.dispatches : 0;
  // OTB (without a critic) replaces it with its two passes.
  const otb = runsTokenBaseline(shape) ? tokenBaselineKernel.dispatches - 1 : 0;
  // VCPO's per-trajectory gradient norms: logitGrad and hiddenGrad of the score, then trajGradNorm.
  const gradNorms = shape.adv.trueGradNorm ? 3 : 0;
  // VCPO's ESS-scaled lr: trajStats and essScale of each step's own log-probs.
  const essSteps = shape.essLr.enabled ? 2 * steps : 0;
  return {
    sampleTurn: 1 + (F + 1) * shape.actionLen,
    update: logps + 1 + gradNorms + essSteps + 1 + critic + otb + (shape.whiten ? whitenKernel.dispatches : 0) + shape.minibatches.length + perStep * steps - (steps > 0 ? 1 + F : 0) + 2 + 1 + 1,
  };
}


export function createGpuBackend(
  device: GPUDevice,
  shape: RunShape,
  initialParams: Float32Array,
  opts: GpuBackendOptions = {},
): Backend {
  const { dims, N, L, Tp, actionLen } = shape;
  const { V, H } = dims;
  const P = paramLayout(dims).size;
  const R = N * Tp;
  const steps = updateSteps(shape);
  const T = shape.maxTurns;
  const label = opts.label ?? 'WebGPU';
  const kernelVariant = opts.kernelVariant ?? defaultKernelVariant(device);
  if (initialParams.length !== P) throw new Error(`gpu backend: ${initialParams.length} parameters given, the model has ${P}`);
  if (shape.grammar.length !== V * V) throw new Error(`gpu backend: grammar has ${shape.grammar.length} entries, expected ${V * V}`);

  // Scratch of the backward reductions (kernels/reduce.ts), shared by the two, sized for the
  // largest minibatch.
  const scratchWords = backwardScratchWords(dims, L, shape.minibatches.map(([n0, n1]) => (n1 - n0) * Tp));
  // The largest buffers (per-row activations, the [K, V, H] first-layer tables, the scratch): say
  // which limit a too-large batch hits instead of a validation error.
  const largest = Math.max(4 * R * Math.max(V, H, 4), 4 * slotTableWords(dims), 4 * scratchWords);
  const limit = Math.min(device.limits.maxStorageBufferBindingSize, device.limits.maxBufferSize);
  if (largest > limit) {
    throw new Error(
      `gpu backend: a ${N} x ${Tp}-row batch needs ${(largest / 2 ** 20).toFixed(0)} MiB buffers, over this device's ` +
        `${(limit / 2 ** 20).toFixed(0)} MiB storage-buffer limit; use fewer prompts, a smaller group or fewer turns`,
    );
  }

  const owned: GPUBuffer[] = [];
  const S = BufferUsage.STORAGE | BufferUsage.COPY_SRC | BufferUsage.COPY_DST;
  const buffer = (name: string, bytes: number, usage = S): GPUBuffer => {
    const b = device.createBuffer({ label: `${name} (${label})`, size: Math.max(16, Math.ceil(bytes / 4) * 4), usage });
    owned.push(b);
    return b;
  };
  const upload = (name: string, data: Float32Array | Uint32Array): GPUBuffer => {
    const b = buffer(name, data.byteLength);
    device.queue.writeBuffer(b, 0, data);
    return b;
  };
  const f32 = (name: string, n: number) => buffer(name, 4 * n);

  // Model and optimizer state: [P] each.
  const params = upload('params', initialParams);
  const ref = upload('ref params', initialParams);
  const m = f32('adam m', P);
  const v = f32('adam v', P);
  const grads = f32('grads', P);
  const norm = f32('grad norm', 1);
  // gradNorm's per-block sums of squares: its own, as small as that, so no other kernel's scratch
  // has to outlive or make room for it.
  const normConfig = { n: P, block: gradNormBlockFor(shape, kernelVariant) };
  const normPartials = f32('grad norm partials', gradNormKernel.scratchWords(normConfig));
  // [1] u32 health bits (finiteCheck.ts HEALTH), cleared at the start of each update.
  const health = f32('health', 1);
  // Sequences and row tables.
  const shadow = new Int32Array(N * L); // what the device's seq holds, for range writes in writeTurn
  const seq = f32('seq', N * L);
  const trainRowPos = upload('train rowPos', shape.trainRowPos);
  const rolloutAll = new Uint32Array(shape.rolloutRowPos.length * N);
  shape.rolloutRowPos.forEach((rp, s) => rolloutAll.set(rp, s * N));
  const rolloutRowPos = upload('rollout rowPos', rolloutAll);
  const grammar = upload('grammar', Uint32Array.from(shape.grammar));
  // Per-row activations: the training rows, or the N rollout rows of one sampling step (R >= N).
  const h = f32('h', R * H);
  const z = f32('z', R * V);
  const dz = f32('dz', R * V);
  const da = f32('da', R * H);
  // The first layer factored through the vocabulary: the table of the parameters the next forward
  // reads (embedProject), and the backward's slot sums of da (slotGrad), [K, V, H] each.
  const proj = f32('proj', slotTableWords(dims));
  const slotSums = f32('slot sums G', slotTableWords(dims));
  // [chunks, outputs] partial sums of headGrad and slotGrad (each overwrites what it reads).
  const partials = f32('backward partials', scratchWords);
  // Per-row scalars [R].
  const logp = f32('logp', R);
  const logpOld = f32('logpOld', R);
  const logpRef = f32('logpRef', R);
  const entropy = f32('entropy', R);
  const sumP2 = f32('sumP2', R);
  // The old policy's entropy and sum p^2 (EDGE-GRPO, OTB, VCPO); the reference and rollout passes
  // write their own unused copies.
  const entropyOld = f32('entropy (old)', R);
  const sumP2Old = f32('sumP2 (old)', R);
  const scratchEntropy = f32('entropy (ref/rollout, unused)', R);
  const scratchSumP2 = f32('sumP2 (ref/rollout, unused)', R);
  const stale = shape.staleness > 0;
  const logpRollout = stale ? f32('logpRollout', R) : logpOld;
  const adv = f32('adv', R);
  const dlogp = f32('dlogp', R);
  const ppo = f32('ppo rows', R * PPO_ROW_WORDS);
  const mask = f32('mask', R);
  const weights = f32('weights', R);
  // SeeUPO: one set of aggregation weights per turn stage.
  const mode = shape.loss.ratioMode;
  const stageWeights = mode === 'turn' ? Array.from({ length: T }, (_, k) => f32(`weights turn ${k}`, R)) : [];
  // Advantage inputs: per trajectory, per turn, per role; trajectory statistics; the ESS and lr factor.
  const trajIn = f32('trajIn', 4 * N);
  const turnIn = f32('turnIn', 4 * N * T);
  const roleRewards = f32('roleRewards', N * shape.nRoles);
  const trajStats = f32('trajStats', TRAJ_STATS_WORDS * N);
  // One (ESS, lr factor) pair per minibatch at the update's start, then, with VCPO's ESS-scaled
  // lr, one per optimizer step (the step's minibatch at the step's own parameters, as the
  // reference measures it), ESS_OUT_STRIDE words apart (a binding offset's alignment).
  const MB = shape.minibatches.length;
  const essPerStep = shape.essLr.enabled;
  const ESS_SLOTS = MB + (essPerStep ? steps : 0);
  const essOut = f32('ess and lr factor per minibatch and step', ESS_OUT_STRIDE * ESS_SLOTS);
  const essAt = (i: number): GPUBufferBinding => ({ buffer: essOut, offset: 4 * ESS_OUT_STRIDE * i, size: 8 });
  // The step's log IS weights (trajStats of the step's log-probs against the rollout's).
  const trajStatsStep = essPerStep ? f32('trajStats (optimizer step)', TRAJ_STATS_WORDS * N) : null;
  const segs = mode === 'turn' || mode === 'step' ? T : 1;
  const seqLog = f32('seqLog', N * segs);
  const statsOut = f32('stats', STATS_WORDS);
  const negOutOut = f32('neg_out_grad_share', 1);
  const statsConfig = statsConfigFor(shape, kernelVariant);
  // stats' per-chunk records (pass 1 to pass 2), its own for the same reason as normPartials.
  const statsPartials = f32('stats partials', statsKernel.scratchWords(statsConfig));
  // whiten's per-block moments, then its mean and sd (<= 257 vec4f), its own like the two above.
  const whitenPartials = f32('whiten partials', whitenScratchWords(R));
  // PPO: the critic table, each row's state, the GAE returns.
  const CRITIC = shape.critic?.size ?? 0;
  const criticTable = f32('critic table', CRITIC);
  const stateKey = f32('state keys', shape.critic ? R : 1);
  const returns = f32('returns', shape.critic ? R : 1);
  // The critic update's per-chunk (sum, count) tables, its own (at most 8 MiB at 4096 entries).
  const criticConfig = { tableSize: CRITIC, numRows: R, lr: shape.critic?.lr ?? 0 };
  const criticPartials = f32('critic partials', shape.critic ? criticUpdateKernel.scratchWords(criticConfig) : 1);
  // Stale rollouts: the last staleness + 1 parameter versions, and the one rollouts read.
  const history = stale ? Array.from({ length: shape.staleness + 1 }, (_, i) => upload(`params history ${i}`, initialParams)) : [];
  const rollParams = stale ? upload('rollout params', initialParams) : params;
  let updates = 0;
  // IGPO: teacher-forced answer contexts, scored with the rollout policy (h and z are reused: M <= R rows).
  const M = shape.scoreContexts;
  const scoreRowsN = M * shape.scoreSpan;
  const scoreSeq = M ? f32('score seq', M * L) : null;
  const scoreRows = M ? f32('score rows', scoreRowsN) : null;
  const scoreLogp = M ? f32('score logp', scoreRowsN) : null;
  const scoreScratch = M ? [f32('score entropy', scoreRowsN), f32('score sumP2', scoreRowsN)] : null;
  const sampled = f32('sampled', N * actionLen);
  // Readback staging (MAP_READ), one per kind of read so they never overlap.
  const READ = BufferUsage.MAP_READ | BufferUsage.COPY_DST;
  const sampledRead = buffer('sampled readback', 4 * N * actionLen, READ);
  // One mapAsync per step: statistics, the gradient norm, the health word, (ESS, lr factor) per
  // minibatch, ARLArena's diagnosis, then (on snapshot updates) params, ref, m, v.
  const NEG_OUT_WORD = STATS_WORDS + 2 + 2 * ESS_SLOTS;
  const STATS_READ_WORDS = NEG_OUT_WORD + 1;
  const statsRead = buffer('stats readback', 4 * STATS_READ_WORDS, READ);
  const snapshotRead = buffer('stats + snapshot readback', 4 * (STATS_READ_WORDS + 4 * P + CRITIC), READ);
  // PPO: the critic table as the update found it, so the dump can show each row's value.
  const criticBefore = shape.critic ? f32('critic table (before the update)', CRITIC) : null;
  type BatchPart = [keyof BatchTensors | 'ppo' | 'turnIn' | 'trajStats' | 'stateKey' | 'criticBefore', GPUBuffer, number];
  const batchParts: BatchPart[] = [
    ['turnIn', turnIn, 16 * N * T],
    ['seq', seq, 4 * N * L],
    ['logp', logp, 4 * R],
    ['logpOld', logpOld, 4 * R],
    ['logpRef', logpRef, 4 * R],
    ['entropy', entropy, 4 * R],
    ['sumP2', sumP2, 4 * R],
    ['adv', adv, 4 * R],
    ['ppo', ppo, 4 * R * PPO_ROW_WORDS],
    ['logpRollout', logpRollout, 4 * R],
    ['entropyOld', entropyOld, 4 * R],
    ['sumP2Old', sumP2Old, 4 * R],
    ['trajStats', trajStats, 4 * TRAJ_STATS_WORDS * N],
    ...(criticBefore ? ([['ret', returns, 4 * R], ['stateKey', stateKey, 4 * R], ['criticBefore', criticBefore, 4 * CRITIC]] satisfies BatchPart[]) : []),
    ...(scoreLogp ? ([['answerLogp', scoreLogp, 4 * scoreRowsN]] satisfies BatchPart[]) : []),
  ];
  const batchRead = buffer('batch readback', batchParts.reduce((s, [, , n]) => s + n, 0), READ);

  // Kernels: pipelines come from the per-device cache (compiled ahead by openGpuBackend, else at
  // their first bind); each bind() below is one configuration.
  const k = createKernels(device, backendKernels(shape, kernelVariant));
  const temp = shape.temperature;
  // proj from each parameter set a forward reads (the rollout policy is params without staleness).
  const project = (p: GPUBuffer, what: string) => k.embedProject.bind({ params: p, proj }, { dims }, `embedProject ${what}`);
  const projParams = project(params, 'params');
  const projRef = project(ref, 'ref');
  const projRoll = stale ? project(rollParams, 'rollout policy') : projParams;

  // Rollout: one (forward, sample) pair per (turn, slot), rows s*N .. s*N + N - 1 of rolloutRowPos.
  const sampleConfig = (s: number, iter: number): SampleConfig => ({
    vocab: V, numRows: N, rowBase: s * N, zBase: 0, outStride: actionLen, outOffset: s % actionLen, seed: shape.seed, iter,
  });
  const rollout = shape.rolloutRowPos.map((_, s) => ({
    forward: k.forward.bind(
      { params: rollParams, proj, seq, rowPos: rolloutRowPos, grammar, h, z },
      { dims, seqLen: L, numRows: N, rowBase: s * N, outBase: 0, temperature: temp },
      `forward rollout ${s}`,
    ),
    sample: k.sample.bind({ z, rowPos: rolloutRowPos, seq, sampled }, sampleConfig(s, 0), `sample rollout ${s}`),
  }));

  // Old and reference log-probs over all training rows.
  const allRows = { dims, seqLen: L, numRows: R, rowBase: 0, temperature: temp };
  const fwdOld = k.forward.bind({ params, proj, seq, rowPos: trainRowPos, grammar, h, z }, allRows, 'forward old');
  const fwdRef = k.forward.bind({ params: ref, proj, seq, rowPos: trainRowPos, grammar, h, z }, allRows, 'forward ref');
  const tsOld = k.tokenStats.bind(
    { z, seq, rowPos: trainRowPos, logp: logpOld, entropy: entropyOld, sumP2: sumP2Old },
    { vocab: V, numRows: R },
    'tokenStats old',
  );
  const fwdRoll = stale ? k.forward.bind({ params: rollParams, proj, seq, rowPos: trainRowPos, grammar, h, z }, allRows, 'forward rollout policy') : null;
  const tsRoll = stale
    ? k.tokenStats.bind(
        { z, seq, rowPos: trainRowPos, logp: logpRollout, entropy: scratchEntropy, sumP2: scratchSumP2 },
        { vocab: V, numRows: R },
        'tokenStats rollout policy',
      )
    : null;
  const trajStatsCall = k.trajStats.bind(
    { mask, logpOld, logpRollout, entropyOld, sumP2Old, out: trajStats },
    { numTraj: N, tp: Tp },
  );
  // VCPO: each trajectory's own gradient norm under the old parameters, from the score's logit and
  // hidden gradients (dlogp = mask), into trajStats' g2 before the advantage reads it.
  const gradNormCalls = shape.adv.trueGradNorm
    ? ([
        k.logitGrad.bind({ z, seq, rowPos: trainRowPos, dlogp: mask, dz }, { numRows: R, rowBase: 0, vocab: V, temperature: temp }, 'logitGrad score'),
        k.hiddenGrad.bind({ params, h, dz, da }, { numRows: R, rowBase: 0, dims }, 'hiddenGrad score'),
        k.trajGradNorm.bind(
          { params, h, dz, da, seq, rowPos: trainRowPos, mask, stats: trajStats },
          { numTraj: N, tp: Tp, seqLen: L, dims, isCap: shape.adv.isCap },
        ),
      ] as const)
    : null;
  const scoreCalls =
    M && scoreSeq && scoreRows && scoreLogp && scoreScratch
      ? [
          k.forward.bind(
            { params: rollParams, proj, seq: scoreSeq, rowPos: scoreRows, grammar, h, z },
            { dims, seqLen: L, numRows: scoreRowsN, rowBase: 0, outBase: 0, temperature: temp },
            'forward answer scoring',
          ),
          k.tokenStats.bind(
            { z, seq: scoreSeq, rowPos: scoreRows, logp: scoreLogp, entropy: scoreScratch[0]!, sumP2: scoreScratch[1]! },
            { vocab: V, numRows: scoreRowsN },
            'tokenStats answer scoring',
          ),
          k.infoGain.bind({ scoreLogp, trajIn, turnIn }, { numTraj: N, maxTurns: T, span: shape.scoreSpan, igType: shape.igType }),
        ] as const
      : null;
  const tsRef = k.tokenStats.bind(
    { z, seq, rowPos: trainRowPos, logp: logpRef, entropy: scratchEntropy, sumP2: scratchSumP2 },
    { vocab: V, numRows: R },
    'tokenStats ref',
  );
  const advBuffers = { trajIn, turnIn, roleRewards, trajStats, mask, logpOld, logpRef, adv };
  const advConfig = advantageConfigFor(shape, kernelVariant);
  const advCall = k.advantage.bind(advBuffers, advConfig, 'advantage');
  // ReGFT's fine-tuning iterations: the advantage is the reward itself.
  const rawAdvCall = k.advantage.bind(advBuffers, { ...advConfig, estimator: 'raw', byRole: false, entropyScale: false }, 'advantage raw');
  // OTB's W by position goes where the reference pass put its unused entropy (written again only by
  // the next update's reference pass).
  const otbCall = runsTokenBaseline(shape)
    ? k.tokenBaseline.bind({ trajIn, mask, logpOld, sumP2Old: sumP2Old, wpos: scratchEntropy, adv }, { numTraj: N, tp: Tp, zeroTail: shape.adv.zeroTail })
    : null;
  const whitenCall = shape.whiten ? k.whiten.bind({ mask, adv, partials: whitenPartials }, { numRows: R }) : null;
  const criticCalls = shape.critic
    ? [
        k.gae.bind({ critic: criticTable, stateKey, mask, trajIn, adv, ret: returns }, { numTraj: N, tp: Tp, gamma: shape.critic.gamma, lambda: shape.critic.lambda }),
        k.criticUpdate.bind({ stateKey, mask, ret: returns, partials: criticPartials, critic: criticTable }, criticConfig),
      ] as const
    : null;
  /** Copies the state (params, ref, m, v, then the critic table) into `read` after its stats words. */
  const copyState = (enc: GPUCommandEncoder, read: GPUBuffer) => {
    [params, ref, m, v].forEach((b, i) => enc.copyBufferToBuffer(b, 0, read, 4 * (STATS_READ_WORDS + i * P), 4 * P));
    if (CRITIC) enc.copyBufferToBuffer(criticTable, 0, read, 4 * (STATS_READ_WORDS + 4 * P), 4 * CRITIC);
  };
  const decodeState = (bytes: ArrayBuffer): ModelState => {
    const part = (i: number) => new Float32Array(bytes, 4 * (STATS_READ_WORDS + i * P), P);
    return {
      params: part(0), ref: part(1), m: part(2), v: part(3), adamStep,
      ...(CRITIC ? { critic: new Float32Array(bytes, 4 * (STATS_READ_WORDS + 4 * P), CRITIC) } : {}),
    };
  };
  const essCalls = shape.minibatches.map(([n0, n1], i) =>
    k.essScale.bind({ stats: trajStats, out: essAt(i) }, { numTraj: n1 - n0, trajBase: n0, ...shape.essLr }, `essScale minibatch ${i}`),
  );
  // VCPO: each optimizer step's ESS and lr factor from its own minibatch's log IS weights under the
  // step's parameters (logp as the step's tokenStats left it), in slot MB + s.
  const essStepCalls = trajStatsStep
    ? Array.from({ length: steps }, (_, s) => {
        const [n0, n1] = shape.minibatches[s % MB]!;
        return [
          k.trajStats.bind({ mask, logpOld: logp, logpRollout, entropyOld: entropy, sumP2Old: sumP2, out: trajStatsStep }, { numTraj: N, tp: Tp }, `trajStats step ${s}`),
          k.essScale.bind({ stats: trajStatsStep, out: essAt(MB + s) }, { numTraj: n1 - n0, trajBase: n0, ...shape.essLr }, `essScale step ${s}`),
        ] as const;
      })
    : null;
  const lossOpts = {
    clipLow: shape.loss.clipLow,
    clipHigh: shape.loss.clipHigh,
    dualClip: shape.loss.dualClip,
    klCoef: shape.loss.klCoef,
    ratioMode: RATIO_MODES[mode],
    klType: KL_TYPES[shape.loss.klType],
    tp: Tp,
    actionLen,
    maxTurns: T,
  };
  const stages = mode === 'turn' ? Array.from({ length: T }, (_, i) => T - 1 - i) : [0];

  // One set of calls per minibatch: rows n0*Tp .. n1*Tp - 1 of every per-row buffer.
  // ... and per turn stage for SeeUPO: stage k's ppoLoss reads its own weights.
  const minibatch = stages.flatMap((stage) => shape.minibatches.map(([n0, n1], i) => {
    const rows = { numRows: (n1 - n0) * Tp, rowBase: n0 * Tp };
    const tag = `minibatch ${i}${mode === 'turn' ? ` turn ${stage}` : ''}`;
    const weight = mode === 'turn' ? stageWeights[stage]! : weights;
    return [
      k.forward.bind({ params, proj, seq, rowPos: trainRowPos, grammar, h, z }, { ...rows, dims, seqLen: L, temperature: temp }, `forward ${tag}`),
      k.tokenStats.bind({ z, seq, rowPos: trainRowPos, logp, entropy, sumP2 }, { ...rows, vocab: V }, `tokenStats ${tag}`),
      !usesSeqRatio(mode)
        ? null
        : k.seqRatio.bind(
            { mask, logp, logpOld, adv, out: seqLog },
            { ...rows, mode: mode === 'turn' || mode === 'step' ? 'turn' : mode, tp: Tp, actionLen, maxTurns: T, clipLow: shape.loss.clipLow, clipHigh: shape.loss.clipHigh },
            `seqRatio ${tag}`,
          ),
      k.ppoLoss.bind({ logp, logpOld, logpRef, adv, weight, seqLog, dlogp, out: ppo }, { ...rows, ...lossOpts, stage }, `ppoLoss ${tag}`),
      // ReGFT's fine-tuning stage: the same rows with the cross-entropy loss.
      shape.sft ? k.ppoLoss.bind({ logp, logpOld, logpRef, adv, weight, seqLog, dlogp, out: ppo }, { ...rows, ...lossOpts, ratioMode: RATIO_MODES.sft, stage }, `sft loss ${tag}`) : null,
      k.logitGrad.bind({ z, seq, rowPos: trainRowPos, dlogp, dz }, { ...rows, vocab: V, temperature: temp }, `logitGrad ${tag}`),
      k.headGrad.bind({ h, dz, partials, grads }, { ...rows, dims }, `headGrad ${tag}`),
      k.hiddenGrad.bind({ params, h, dz, da }, { ...rows, dims }, `hiddenGrad ${tag}`),
      k.slotGrad.bind({ seq, rowPos: trainRowPos, da, partials, grads: slotSums }, { ...rows, dims, seqLen: L }, `slotGrad ${tag}`),
    ] as const;
  }));
  // The same for every minibatch: it reads only the parameters and the slot sums.
  const firstLayerCall = k.firstLayerGrad.bind({ params, G: slotSums, grads }, { dims });
  // One Adam uniform per optimizer step of an update: the bias corrections differ per step.
  const adamConfig = (lr: number, step: number) => ({ ...normConfig, lr, ...shape.optim, step });
  const adamCalls = Array.from({ length: steps }, (_, s) =>
    // Step s trains minibatch s mod MB (the minibatch calls repeat per stage and epoch).
    k.optimizerStep.bind({ params, grads, m, v, partials: normPartials, norm, health, lrScale: essAt(essPerStep ? MB + s : s % MB) }, adamConfig(0, s + 1), `optimizer step ${s}`),
  );
  // Over every row after the last step: dlogp and logp then hold the last epoch's values.
  const negOutCall = k.negOutShare.bind({ mask, adv, logp, logpOld, dlogp, out: negOutOut }, { numRows: R });
  const statsCall = k.stats.bind({ mask, adv, logp, logpOld, entropy, ppo, traj: trajIn, partials: statsPartials, out: statsOut }, statsConfig);

  // After the update: log-probs and the loss and ratio columns of the loss rows (not the clip
  // column, whose -1 is all ones in bits), and the parameters; Adam flags the gradients. logp is
  // checked because clamp() of a NaN log-ratio may return a finite number on a GPU. One dispatch.
  const checks = k.finiteCheck.bind({ logp, ppo, params, health }, { rows: R, rowWords: PPO_ROW_WORDS, params: P });

  let adamStep = 0;
  let destroyed = false;
  const busy = new Set<string>();

  /** Submits `encode`'s work, then maps `read` and returns a copy of its bytes. */
  async function submitAndRead(
    what: string,
    read: GPUBuffer,
    encode: (enc: GPUCommandEncoder) => void,
  ): Promise<ArrayBuffer> {
    if (destroyed) throw new Error(`gpu backend: ${what} after destroy()`);
    if (busy.has(what)) throw new Error(`gpu backend: ${what} called again before the previous call finished`);
    busy.add(what);
    try {
      device.pushErrorScope('validation');
      const enc = device.createCommandEncoder({ label: what });
      encode(enc);
      device.queue.submit([enc.finish()]);
      const err = await device.popErrorScope();
      if (err) throw new Error(`gpu backend: ${what}: ${err.message}`);
      await read.mapAsync(MapMode.READ);
      const bytes = read.getMappedRange().slice(0);
      read.unmap();
      return bytes;
    } finally {
      busy.delete(what);
    }
  }

  async function snapshot(): Promise<ModelState> {
    // The snapshot staging buffer holds the stats words first; the state follows them.
    const bytes = await submitAndRead('snapshot', snapshotRead, (enc) => copyState(enc, snapshotRead));
    return decodeState(bytes);
  }

  return {
    kind: 'gpu',
    label,

    writeSequences(s) {
      if (s.length !== N * L) throw new Error(`writeSequences: ${s.length} tokens, expected ${N * L}`);
      shadow.set(s);
      device.queue.writeBuffer(seq, 0, shadow);
    },

    async sampleTurn(turn, iter) {
      if (!(turn >= 0 && turn < shape.maxTurns)) throw new Error(`sampleTurn: turn ${turn} is outside 0..${shape.maxTurns - 1}`);
      const slots = Array.from({ length: actionLen }, (_, a) => turn * actionLen + a);
      for (const s of slots) rollout[s]!.sample.update(sampleConfig(s, iter));
      const bytes = await submitAndRead('sampleTurn', sampledRead, (enc) => {
        const pass = enc.beginComputePass({ label: `sampleTurn ${turn}` });
        // Made again every turn: an update, restore() or a stale-rollout swap may have changed
        // the rollout policy or left another table in proj.
        k.embedProject.encode(pass, projRoll);
        for (const s of slots) {
          k.forward.encode(pass, rollout[s]!.forward);
          k.sample.encode(pass, rollout[s]!.sample);
        }
        pass.end();
        enc.copyBufferToBuffer(sampled, 0, sampledRead, 0, 4 * N * actionLen);
      });
      const out = new Int32Array(bytes);
      for (const s of slots) {
        const rp = shape.rolloutRowPos[s]!;
        for (let n = 0; n < N; n++) shadow[rp[n]!] = out[n * actionLen + (s % actionLen)]!;
      }
      return out;
    },

    writeTurn(turn, tokens) {
      const w = actionLen + shape.obsLen;
      if (tokens.length !== N * w) throw new Error(`writeTurn: ${tokens.length} tokens, expected ${N * w}`);
      const start = shape.promptLen + turn * w;
      copyRows(shadow, start, L, tokens, 0, w, w, N);
      // One contiguous write from trajectory 0's turn to the last trajectory's: the positions in
      // between hold what the device already has (the shadow tracks every write and sample).
      const end = (N - 1) * L + start + w;
      device.queue.writeBuffer(seq, 4 * start, shadow, start, end - start);
    },

    async update(inp: UpdateInput): Promise<UpdateStats> {
      const a = inp.adv;
      if (a.reward.length !== N) throw new Error(`update: ${a.reward.length} rewards, expected ${N}`);
      if (inp.mask.length !== R || inp.weights.length !== R) throw new Error(`update: mask and weights need ${R} entries`);
      if (mode === 'turn' && inp.stageWeights?.length !== T) throw new Error(`update: SeeUPO needs ${T} stage weight arrays`);
      device.queue.writeBuffer(trajIn, 0, packTrajIn(a));
      device.queue.writeBuffer(turnIn, 0, packTurnIn(a, N, T));
      device.queue.writeBuffer(roleRewards, 0, a.roleRewards);
      device.queue.writeBuffer(mask, 0, inp.mask);
      device.queue.writeBuffer(weights, 0, inp.weights);
      stageWeights.forEach((b, i) => device.queue.writeBuffer(b, 0, inp.stageWeights![i]!));
      if (shape.critic) {
        if (inp.stateKey?.length !== R) throw new Error(`update: PPO needs ${R} state keys`);
        device.queue.writeBuffer(stateKey, 0, inp.stateKey);
      }
      if (inp.score) {
        if (!scoreCalls || !scoreSeq || !scoreRows) throw new Error('update: answer contexts given, but this run scores no answers (IGPO is off)');
        if (inp.score.seqs.length !== M * L || inp.score.rows.length !== scoreRowsN) {
          throw new Error(`update: ${inp.score.seqs.length} context tokens and ${inp.score.rows.length} rows, expected ${M * L} and ${scoreRowsN}`);
        }
        device.queue.writeBuffer(scoreSeq, 0, inp.score.seqs);
        device.queue.writeBuffer(scoreRows, 0, inp.score.rows);
      }
      adamCalls.forEach((c, s) => c.update(adamConfig(inp.lr, adamStep + s + 1)));
      device.queue.writeBuffer(health, 0, new Uint32Array(1));
      const read = inp.snapshot ? snapshotRead : statsRead;
      const bytes = await submitAndRead('update', read, (enc) => {
        if (criticBefore) enc.copyBufferToBuffer(criticTable, 0, criticBefore, 0, 4 * CRITIC);
        const pass = enc.beginComputePass({ label: `update ${inp.iter}` });
        // ALGO LOGIC: old and reference log-probs of the sampled tokens, then advantages.
        // Reference first, then old: h and z are left holding the current policy's activations on
        // every row, which is exactly the first optimizer step's forward (same params, same rows).
        if (inp.score && scoreCalls) {
          // IGPO first (it uses h and z too): answer log-probs, then information gain into turnIn.
          k.embedProject.encode(pass, projRoll);
          k.forward.encode(pass, scoreCalls[0]);
          k.tokenStats.encode(pass, scoreCalls[1]);
          k.infoGain.encode(pass, scoreCalls[2]);
        }
        k.embedProject.encode(pass, projRef);
        k.forward.encode(pass, fwdRef);
        k.tokenStats.encode(pass, tsRef);
        if (fwdRoll && tsRoll) {
          k.embedProject.encode(pass, projRoll);
          k.forward.encode(pass, fwdRoll);
          k.tokenStats.encode(pass, tsRoll);
        }
        k.embedProject.encode(pass, projParams);
        k.forward.encode(pass, fwdOld);
        k.tokenStats.encode(pass, tsOld);
        k.trajStats.encode(pass, trajStatsCall);
        if (gradNormCalls) {
          k.logitGrad.encode(pass, gradNormCalls[0]);
          k.hiddenGrad.encode(pass, gradNormCalls[1]);
          k.trajGradNorm.encode(pass, gradNormCalls[2]);
        }
        if (inp.raw) k.advantage.encode(pass, rawAdvCall);
        else if (criticCalls) {
          k.gae.encode(pass, criticCalls[0]);
          k.criticUpdate.encode(pass, criticCalls[1]);
        } else if (otbCall) k.tokenBaseline.encode(pass, otbCall);
        else k.advantage.encode(pass, advCall);
        if (whitenCall && !inp.raw) k.whiten.encode(pass, whitenCall);
        for (const c of essCalls) k.essScale.encode(pass, c);
        let s = 0;
        for (let epoch = 0; epoch < shape.epochs; epoch++) {
          for (const [fwd, ts, ratio, rlLoss, sftLoss, lg, head, hidden, slot] of minibatch) {
            const loss = inp.raw && sftLoss ? sftLoss : rlLoss;
            // Every step after the first follows an Adam step: params, and so their table, changed.
            if (s > 0) {
              k.embedProject.encode(pass, projParams);
              k.forward.encode(pass, fwd);
            }
            k.tokenStats.encode(pass, ts);
            if (essStepCalls) {
              k.trajStats.encode(pass, essStepCalls[s]![0]);
              k.essScale.encode(pass, essStepCalls[s]![1]);
            }
            if (ratio) k.seqRatio.encode(pass, ratio);
            k.ppoLoss.encode(pass, loss);
            k.logitGrad.encode(pass, lg);
            k.headGrad.encode(pass, head);
            k.hiddenGrad.encode(pass, hidden);
            k.slotGrad.encode(pass, slot);
            k.firstLayerGrad.encode(pass, firstLayerCall);
            k.optimizerStep.encode(pass, adamCalls[s++]!);
          }
        }
        // PLUMBING: statistics, and the last step's gradient norm after them in the readback.
        k.stats.encode(pass, statsCall);
        k.negOutShare.encode(pass, negOutCall);
        k.finiteCheck.encode(pass, checks);
        pass.end();
        if (stale) {
          // Keep this version; the next rollouts read the one `staleness` updates older.
          const slots = history.length;
          enc.copyBufferToBuffer(params, 0, history[updates % slots]!, 0, 4 * P);
          enc.copyBufferToBuffer(history[(updates + 1) % slots]!, 0, rollParams, 0, 4 * P);
        }
        enc.copyBufferToBuffer(statsOut, 0, read, 0, 4 * STATS_WORDS);
        enc.copyBufferToBuffer(norm, 0, read, 4 * STATS_WORDS, 4);
        enc.copyBufferToBuffer(health, 0, read, 4 * (STATS_WORDS + 1), 4);
        for (let i = 0; i < ESS_SLOTS; i++) enc.copyBufferToBuffer(essOut, 4 * ESS_OUT_STRIDE * i, read, 4 * (STATS_WORDS + 2 + 2 * i), 8);
        enc.copyBufferToBuffer(negOutOut, 0, read, 4 * NEG_OUT_WORD, 4);
        if (inp.snapshot) {
          copyState(enc, read);
        }
      });
      adamStep += steps;
      updates++;
      const words = new Float32Array(bytes);
      const out: UpdateStats = {
        ...decodeStats(words),
        grad_norm: steps > 0 ? words[STATS_WORDS]! : 0,
        neg_out_grad_share: words[NEG_OUT_WORD]!,
        ...(() => {
          const pair = (i: number) => [words[STATS_WORDS + 2 + 2 * i]!, words[STATS_WORDS + 3 + 2 * i]!] as const;
          const start = Array.from({ length: MB }, (_, i) => pair(i));
          return essOfUpdate(start, essPerStep ? Array.from({ length: steps }, (_, s) => pair(MB + s)) : null, steps);
        })(),
        non_finite: new Uint32Array(bytes, 4 * (STATS_WORDS + 1), 1)[0]!,
      };
      if (inp.snapshot) {
        out.state = decodeState(bytes);
      }
      return out;
    },

    restore(st: ModelState) {
      for (const [b, data] of [[params, st.params], [ref, st.ref], [m, st.m], [v, st.v]] as const) {
        if (data.length !== P) throw new Error(`restore: state has ${data.length} values, the model has ${P}`);
        device.queue.writeBuffer(b, 0, data);
      }
      if (CRITIC) device.queue.writeBuffer(criticTable, 0, st.critic ?? new Float32Array(CRITIC));
      // Stale rollouts restart from the restored policy (the lag builds up again).
      if (stale) for (const b of [...history, rollParams]) device.queue.writeBuffer(b, 0, st.params);
      adamStep = st.adamStep;
    },

    resetReference() {
      const enc = device.createCommandEncoder({ label: 'reset reference' });
      enc.copyBufferToBuffer(params, 0, ref, 0, 4 * P);
      device.queue.submit([enc.finish()]);
      const zeros = new Float32Array(P);
      device.queue.writeBuffer(m, 0, zeros);
      device.queue.writeBuffer(v, 0, zeros);
      adamStep = 0;
    },


    injectNaN() {
      device.queue.writeBuffer(params, 0, Float32Array.of(NaN));
    },

    async readParams() {
      return (await snapshot()).params;
    },

    snapshot,

    async readBatch() {
      const bytes = await submitAndRead('readBatch', batchRead, (enc) => {
        let off = 0;
        for (const [, b, n] of batchParts) {
          enc.copyBufferToBuffer(b, 0, batchRead, off, n);
          off += n;
        }
      });
      const parts: Record<string, ArrayBuffer> = {};
      let off = 0;
      for (const [name, , n] of batchParts) {
        parts[name] = bytes.slice(off, off + n);
        off += n;
      }
      const rows = unpackPpoRows(parts.ppo!, R);
      return {
        seq: new Int32Array(parts.seq!),
        logp: new Float32Array(parts.logp!),
        logpOld: new Float32Array(parts.logpOld!),
        logpRef: new Float32Array(parts.logpRef!),
        entropy: new Float32Array(parts.entropy!),
        sumP2: new Float32Array(parts.sumP2!),
        adv: new Float32Array(parts.adv!),
        ratio: rows.ratio,
        clip: rows.clip,
        loss: rows.loss,
        turnReward: (() => {
          const words = new Float32Array(parts.turnIn!);
          return Float32Array.from({ length: N * T }, (_, i) => words[4 * i]!);
        })(),
        logpRollout: new Float32Array(parts.logpRollout!),
        entropyOld: new Float32Array(parts.entropyOld!),
        sumP2Old: new Float32Array(parts.sumP2Old!),
        kl: rows.kl,
        g2: unpackTrajStats(new Float32Array(parts.trajStats!), N).g2,
        ...(parts.criticBefore
          ? (() => {
              const table = new Float32Array(parts.criticBefore);
              const keys = new Uint32Array(parts.stateKey!);
              return { value: Float32Array.from(keys, (key) => table[key]!), ret: new Float32Array(parts.ret!) };
            })()
          : {}),
        ...(parts.answerLogp ? { answerLogp: new Float32Array(parts.answerLogp) } : {}),
      };
    },

    destroy() {
      if (destroyed) return;
      destroyed = true;
      for (const kernel of Object.values(k)) kernel.destroy();
      for (const b of owned.splice(0)) b.destroy();
    },
  };
}

/**
 * createGpuBackend inside out-of-memory and validation error scopes: an allocation the device
 * cannot make becomes an Error that says so (with the sizes), never a half-built backend.
 */
export async function openGpuBackend(
  device: GPUDevice,
  shape: RunShape,
  initialParams: Float32Array,
  opts: GpuBackendOptions = {},
): Promise<Backend> {
  // Every pipeline the backend binds, side by side and checked (KernelCompileError names each
  // broken kernel's file and line); its binds then find them in the cache.
  await compileKernels(device, backendPipelines(shape, opts.kernelVariant ?? defaultKernelVariant(device)));
  device.pushErrorScope('out-of-memory');
  device.pushErrorScope('validation');
  let backend: Backend | null = null;
  let thrown: unknown = null;
  try {
    backend = createGpuBackend(device, shape, initialParams, opts);
  } catch (e) {
    thrown = e;
  }
  const validation = await device.popErrorScope();
  const oom = await device.popErrorScope();
  if (thrown) throw thrown;
  if (oom || validation) {
    backend?.destroy();
    const rows = shape.N * shape.Tp;
    const what = oom ? 'out of GPU memory' : `rejected by the device (${validation!.message})`;
    throw new Error(
      `gpu backend: allocating buffers for ${shape.N} trajectories x ${shape.Tp} policy tokens (${rows} rows, ` +
        `vocabulary ${shape.dims.V}, hidden ${shape.dims.H}) was ${what}; use a smaller batch or model`,
    );
  }
  return backend!;
}
