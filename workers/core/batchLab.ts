/**
 * Batch lab: one frozen batch (the last iteration's trajectories) re-scored under several method
 * sets at once, without training -- per token, the advantage, the aggregation weight and the
 * resulting gradient weight d(loss)/d(logp) at the current policy, side by side.
 *
 * It runs in the worker on the kernels' CPU references (an analysis view, not the training path):
 * the current parameters are read once, log-probs, entropies and the reference log-probs are
 * computed once, and each method set applies its reward, filtering, advantage, aggregation and
 * loss stages to the same data. Sampling-stage methods (DARS, GEC, ReGFT, DAPO's refill) cannot
 * change rollouts that already happened; their notes say what they would do instead.
 */
import { advantageCpu } from '../../kernels/advantage/advantage';
import { infoGainCpu } from '../../kernels/advantage/infoGain';
import { forwardCpu } from '../../kernels/model/mlp';
import { KL_TYPES, ppoLossCpu, RATIO_MODES } from '../../kernels/loss/ppoLoss';
import { seqRatioCpu } from '../../kernels/loss/seqRatio';
import { tokenBaselineCpu } from '../../kernels/advantage/tokenBaseline';
import { tokenStatsCpu } from '../../kernels/softmax/tokenStats';
import { trajGradNormCpu } from '../../kernels/model/trajGradNorm';
import { trajStatsCpu } from '../../kernels/stats/trajStats';
import { whitenCpu } from '../../kernels/advantage/whiten';
import type { RunConfig } from './config';
import { methodDef } from './methods';
import { aggregationWeights } from './lossAgg';
import { resolvePlan, usesSeqRatio } from './plan';
import { createRng } from './rng';
import { groupAllEqual, pfppoCounts } from './selection';
import type { Trainer } from './trainer';
import { anchorKeys, answerContexts, outcomeOnLastTurn } from './turnRewards';

export interface LabColumn {
  /** The method set, as in the config. */
  methods: string[];
  /** [N * Tp] per-token advantage. */
  adv: Float32Array;
  /** [N * Tp] aggregation weight (0 where masked or filtered). */
  weight: Float32Array;
  /** [N * Tp] d(loss)/d(logp) at the current policy: what each token pushes on its log-prob. */
  grad: Float32Array;
  /** [N * maxTurns] the turn rewards this set uses (IGPO, CM2 turn level, GiGPO), else zeros. */
  turnRewards: Float32Array;
  /** What this set does that a frozen batch cannot show, or filtered groups. */
  notes: string[];
}

export interface LabResult {
  iter: number;
  N: number;
  Tp: number;
  maxTurns: number;
  actionLen: number;
  /** [N * Tp] 1 on policy tokens. */
  mask: Float32Array;
  /** [N * Tp] the token id at each policy row. */
  tokens: Int32Array;
  /** [N] group ordinal and reward of each trajectory. */
  group: Uint32Array;
  reward: Float32Array;
  vocab: readonly string[];
  columns: LabColumn[];
}


export async function rescoreBatch(t: Trainer, configs: RunConfig[]): Promise<LabResult> {
  const b = t.lastBatch;
  if (!b) throw new Error('batch lab: no batch yet; run at least one iteration');
  const { shape, env } = t;
  const { N, Tp, L, dims } = shape;
  const T = shape.maxTurns;
  for (const cfg of configs) {
    if (cfg.task !== t.config.task) throw new Error(`batch lab: ${cfg.methods.join('+')} is for task ${cfg.task}, the batch is from ${t.config.task}`);
  }
  const state = await t.snapshotNow();
  const rows = shape.trainRowPos;
  const seq = b.seq;
  const cur = forwardCpu(state.state.params, dims, seq, L, rows, shape.grammar, shape.temperature);
  const ts = tokenStatsCpu(cur.z, dims.V, seq, rows);
  const logpRef = tokenStatsCpu(forwardCpu(state.state.ref, dims, seq, L, rows, shape.grammar, shape.temperature).z, dims.V, seq, rows).logp;
  const mask = b.mask;
  const tokens = Int32Array.from(rows, (p, i) => (mask[i] ? seq[p]! : 0));
  const layout = { N, L, Tp, promptLen: shape.promptLen, actionLen: shape.actionLen, obsLen: shape.obsLen, maxTurns: T };
  const stats = trajStatsCpu({ mask, logpOld: ts.logp, logpRollout: ts.logp, entropyOld: ts.entropy, sumP2Old: ts.sumP2 }, Tp);
  const base = b.adv;

  const columns: LabColumn[] = [];
  for (const cfg of configs) {
    const plan = resolvePlan(cfg);
    const notes = cfg.methods.flatMap((m) => methodDef(m).labNote ?? []);
    const ep = b.episodes;
    // Reward stage.
    let turnReward: Float32Array = new Float32Array(N * T);
    let turnKey: Uint32Array = new Uint32Array(N * T);
    if (plan.infoGain && ep.answerTokens && ep.answerSpan) {
      const ctx = answerContexts(seq, ep.answerTokens, ep.answerSpan, layout);
      const lp = tokenStatsCpu(forwardCpu(state.state.params, dims, ctx.seqs, L, ctx.rows, shape.grammar, shape.temperature).z, dims.V, ctx.seqs, ctx.rows).logp;
      turnReward = infoGainCpu(lp, ctx.spanLen, base.turns, base.reward, T, plan.infoGain.igType);
    } else if (plan.taskTurnRewards && ep.turnRewards) {
      turnReward = Float32Array.from(ep.turnRewards);
    } else if (plan.anchors) {
      turnReward = outcomeOnLastTurn(base.reward, base.turns, T);
      turnKey = anchorKeys(seq, layout);
    }
    // Filtering stage: drop all-equal groups (no refill on a frozen batch); PF-PPO's draws.
    const live = Float32Array.from(b.live);
    if (plan.dynamicSampling) {
      let dropped = 0;
      for (let n = 0; n < N; n++) {
        if (base.groupStart[n] !== n || !live[n]) continue;
        if (groupAllEqual(base.reward, n, base.groupSize[n]!)) {
          for (let k = 0; k < base.groupSize[n]!; k++) live[n + k] = 0;
          dropped++;
        }
      }
      notes.push(`${dropped} all-equal group${dropped === 1 ? '' : 's'} filtered out.`);
    }
    const m = mask.map((x, i) => x * live[Math.floor(i / Tp)]!);
    const mult = plan.resample ? Float32Array.from(pfppoCounts(base.reward, live, shape.group, plan.resample, createRng(cfg.seed).fork(b.iter))) : undefined;
    // Advantage stage.
    // VCPO's baseline weighs each trajectory by its own gradient norm under the current parameters.
    const trajStats = plan.advantage.trueGradNorm
      ? { ...stats, g2: trajGradNormCpu({ params: state.state.params, dims, seq, L, rowPos: rows, h: cur.h, z: cur.z, mask, temperature: shape.temperature, logIS: stats.logIS, isCap: plan.advantage.isCap }, Tp) }
      : stats;
    const advIn = { ...base, turnReward, turnKey, trajStats, mask: m, logpOld: ts.logp, logpRef };
    const advShape = { numTraj: N, tp: Tp, maxTurns: T, actionLen: shape.actionLen, nRoles: shape.nRoles };
    let adv = plan.advantage.otb
      ? tokenBaselineCpu({ reward: base.reward, groupStart: base.groupStart, groupSize: base.groupSize, mask: m, logpOld: ts.logp, sumP2Old: ts.sumP2 }, Tp, plan.advantage.zeroTail)
      : advantageCpu(advIn, plan.advantage, advShape);
    if (plan.whiten) adv = whitenCpu(adv, m);
    // Aggregation and loss: one minibatch, on-policy (every ratio is 1 on a frozen batch).
    const weight = aggregationWeights(m, Tp, [[0, N]], plan.lossAgg, mult, plan.stepRows ? shape.actionLen : Tp);
    const mode = plan.ratio.mode;
    const seqLog = !usesSeqRatio(mode) ? undefined : seqRatioCpu(m, ts.logp, ts.logp, adv, { mode: mode === 'turn' || mode === 'step' ? 'turn' : mode, tp: Tp, actionLen: shape.actionLen, maxTurns: T, clipLow: plan.ratio.clipLow, clipHigh: plan.ratio.clipHigh });
    // SeeUPO trains one turn per stage: each row's gradient weight is its own turn's stage's.
    const grad = new Float32Array(N * Tp);
    const stages = mode === 'turn' ? Array.from({ length: T }, (_, k) => k) : [0];
    for (const stage of stages) {
      const lo = ppoLossCpu(ts.logp, ts.logp, logpRef, adv, weight, { ...plan.ratio, klCoef: plan.kl.coef, ratioMode: RATIO_MODES[mode], klType: KL_TYPES[plan.kl.type], tp: Tp, actionLen: shape.actionLen, maxTurns: T, stage }, seqLog);
      for (let i = 0; i < N * Tp; i++) if (mode !== 'turn' || Math.floor((i % Tp) / shape.actionLen) === stage) grad[i] = lo.dlogp[i]!;
    }
    if (mode === 'turn') notes.push('SeeUPO: each turn\'s weights are those of its own stage (the last turn is updated first).');
    columns.push({ methods: [...cfg.methods], adv, weight, grad, turnRewards: turnReward, notes });
  }
  const group = new Uint32Array(N);
  let g = -1;
  for (let n = 0; n < N; n++) group[n] = base.groupStart[n] === n ? ++g : g;
  return { iter: b.iter, N, Tp, maxTurns: T, actionLen: shape.actionLen, mask, tokens, group, reward: base.reward, vocab: env.vocab, columns };
}
