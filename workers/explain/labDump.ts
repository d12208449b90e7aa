/**
 * The batch lab's re-scored set as a batch the explainer reads (types.ts LabDump), built in the
 * worker: the lab's own numbers for the set (workers/core/batchLab.ts rescoreBatch: advantage,
 * aggregation weight, gradient weight, turn rewards), and the inputs the lab read, taken the way it
 * takes them: log-probs, entropies and Σπ² at the current parameters, the reference's log-probs,
 * the same filtering and PF-PPO draws, VCPO's gradient norms, IGPO's answer probabilities, GiGPO's
 * anchor keys. The explainer then rederives the set's numbers from these inputs and checks them
 * against the lab's, as it does the trainer's.
 */
import { forwardCpu } from '../../kernels/model/mlp';
import { trajGradNormCpu } from '../../kernels/model/trajGradNorm';
import { tokenStatsCpu } from '../../kernels/softmax/tokenStats';
import { trajStatsCpu } from '../../kernels/stats/trajStats';
import { rescoreBatch } from '../core/batchLab';
import type { RunConfig } from '../core/config';
import { resolvePlan } from '../core/plan';
import { createRng } from '../core/rng';
import { groupAllEqual, pfppoCounts } from '../core/selection';
import type { Trainer } from '../core/trainer';
import { anchorKeys, answerContexts } from '../core/turnRewards';
import { dumpBatch, dumpPlan, type BatchDump } from '../formats/batchDump';
import type { LabDump } from './types';

export async function labDumpOf(t: Trainer, cfg: RunConfig): Promise<LabDump> {
  const b = t.lastBatch;
  if (!b) throw new Error('batch lab: no batch yet; run at least one iteration');
  const col = (await rescoreBatch(t, [cfg])).columns[0]!;
  const base = await dumpBatch(t);
  const { shape } = t;
  const { N, Tp, L, dims } = shape;
  const T = shape.maxTurns;
  const plan = resolvePlan(cfg);
  const state = (await t.snapshotNow()).state;
  const rows = shape.trainRowPos;
  const seq = b.seq;
  const cur = forwardCpu(state.params, dims, seq, L, rows, shape.grammar, shape.temperature);
  const ts = tokenStatsCpu(cur.z, dims.V, seq, rows);
  const logpRef = tokenStatsCpu(forwardCpu(state.ref, dims, seq, L, rows, shape.grammar, shape.temperature).z, dims.V, seq, rows).logp;
  const mask = b.mask;
  const layout = { N, L, Tp, promptLen: shape.promptLen, actionLen: shape.actionLen, obsLen: shape.obsLen, maxTurns: T };
  // The lab's filtering: all-equal groups dropped (no refill on a frozen batch).
  const live = Float32Array.from(b.live);
  const adv = b.adv;
  if (plan.dynamicSampling) {
    for (let n = 0; n < N; n++) {
      if (adv.groupStart[n] !== n || !live[n]) continue;
      if (groupAllEqual(adv.reward, n, adv.groupSize[n]!)) for (let k = 0; k < adv.groupSize[n]!; k++) live[n + k] = 0;
    }
  }
  const mult = plan.resample ? pfppoCounts(adv.reward, live, shape.group, plan.resample, createRng(cfg.seed).fork(b.iter)) : null;
  const stats = trajStatsCpu({ mask, logpOld: ts.logp, logpRollout: ts.logp, entropyOld: ts.entropy, sumP2Old: ts.sumP2 }, Tp);
  const g2 = plan.advantage.trueGradNorm
    ? trajGradNormCpu({ params: state.params, dims, seq, L, rowPos: rows, h: cur.h, z: cur.z, mask, temperature: shape.temperature, logIS: stats.logIS, isCap: plan.advantage.isCap }, Tp)
    : null;
  let pAnswer: Float64Array | null = null;
  const ep = b.episodes;
  if (plan.infoGain && ep.answerTokens && ep.answerSpan) {
    const ctx = answerContexts(seq, ep.answerTokens, ep.answerSpan, layout);
    const lp = tokenStatsCpu(forwardCpu(state.params, dims, ctx.seqs, L, ctx.rows, shape.grammar, shape.temperature).z, dims.V, ctx.seqs, ctx.rows).logp;
    const S = ctx.spanLen;
    pAnswer = new Float64Array(N * T);
    for (let c = 0; c < N * T; c++) {
      let s = 0;
      for (let i = 0; i < S; i++) s += lp[c * S + i]!;
      pAnswer[c] = Math.exp(s / S);
    }
  }
  const keys = plan.anchors ? anchorKeys(seq, layout) : null;

  const dp = dumpPlan(plan);
  const notes: string[] = [];
  // The lab runs the advantage kernel's estimator for every set, then whitening where asked: PPO's
  // critic is not consulted, and ReGFT's fine-tuning stage is not entered.
  if (dp.critic) notes.push("The batch lab does not run PPO's critic: this set's advantages are the plan's group estimator, whitened over the batch.");
  dp.critic = null;
  // Sampling-stage hooks cannot act on rollouts that already happened (the set's notes say so).
  dp.hintedSft = null;
  dp.extraRollouts = null;
  dp.errorCorrection = null;
  if (plan.ratio.mode === 'turn') notes.push("SeeUPO in the lab: each row's gradient is its own turn's stage's, with the set's one weighting (no per-turn weights).");
  notes.push('Every log-prob is taken at the current parameters, so every ratio is 1 (one minibatch, on-policy).');
  const weight: number[][] = [];
  const grad: number[][] = [];
  const trajs: BatchDump['trajs'] = base.trajs.map((tr, n) => {
    const w: number[] = [];
    const gr: number[] = [];
    const tokens: BatchDump['trajs'][number]['tokens'] = [];
    for (let j = 0; j < Tp; j++) {
      const r = n * Tp + j;
      if (!mask[r] || !live[n]) continue;
      tokens.push({
        tok: tr.tokens[tokens.length]?.tok ?? seq[rows[r]!]!,
        text: tr.tokens[tokens.length]?.text ?? '?',
        turn: Math.floor(j / shape.actionLen),
        mask: 1,
        logp_old: ts.logp[r]!,
        logp: ts.logp[r]!,
        logp_ref: logpRef[r]!,
        entropy: ts.entropy[r]!,
        sum_p2: ts.sumP2[r]!,
        adv: col.adv[r]!,
        // The lab shows no ratio, clip, KL or loss of its own: NaN, never compared.
        ratio: NaN,
        clip: NaN,
        loss: NaN,
        logp_rollout: ts.logp[r]!,
        entropy_old: ts.entropy[r]!,
        sum_p2_old: ts.sumP2[r]!,
        kl: NaN,
      });
      w.push(col.weight[r]!);
      gr.push(col.grad[r]!);
    }
    weight.push(w);
    grad.push(gr);
    const taken = adv.turns[n]!;
    const extra: Partial<BatchDump['trajs'][number]> = {};
    if (plan.infoGain || plan.taskTurnRewards || plan.anchors) extra.turn_rewards = Array.from(col.turnRewards.subarray(n * T, n * T + taken));
    if (pAnswer) extra.p_answer = Array.from(pAnswer.subarray(n * T, n * T + taken));
    if (keys) extra.anchor_keys = Array.from(keys.subarray(n * T, n * T + taken));
    if (g2) extra.grad_norm = Math.fround(Math.sqrt(g2[n]!));
    const { turn_rewards: _tr, p_answer: _pa, anchor_keys: _ak, grad_norm: _gn, draw_weight: _dw, tokens: _t, ...rest } = tr;
    return { ...rest, kept: live[n] === 1, copies: mult ? mult[n]! : 1, minibatch: 0, ...extra, tokens };
  });
  const dump: BatchDump = { version: 1, iter: base.iter, config: cfg, lr: base.lr, loss: NaN, plan: dp, layout: base.layout!, trajs };
  return { dump, methods: [...cfg.methods], weight, grad, notes };
}
