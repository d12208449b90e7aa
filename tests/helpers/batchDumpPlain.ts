/**
 * The batch dump built the plain way, an object per trajectory and token straight from the
 * trainer's last batch: the code the packed path (workers/formats/batchDump.ts) replaced, kept as the
 * reference it must equal, key order included.
 */
import { dumpPlan, type BatchDump } from '../../workers/formats/batchDump';
import { ORIGINS } from '../../workers/core/origins';
import { resolvePlan } from '../../workers/core/plan';
import type { Trainer } from '../../workers/core/trainer';

export async function plainBatchDump(trainer: Trainer): Promise<BatchDump> {
  const { config: cfg, env, shape } = trainer;
  const b = trainer.lastBatch!;
  const plan = resolvePlan(cfg);
  const t = await trainer.backend.readBatch();
  const { N, Tp } = shape;
  const trajs: BatchDump['trajs'] = [];
  const groupOf: number[] = [];
  let g = -1;
  // A DARS slot its prompt left unused stays in the prompt's group.
  b.adv.groupStart.forEach((start, n) => (groupOf[n] = start === n && (ORIGINS[b.origin[n]!] !== 'unused' || g < 0) ? ++g : g));
  for (let n = 0; n < N; n++) {
    const tokens: BatchDump['trajs'][number]['tokens'] = [];
    for (let j = 0; j < Tp; j++) {
      const r = n * Tp + j;
      if (!b.mask[r]) continue;
      const tok = t.seq[shape.trainRowPos[r]!]!;
      tokens.push({
        tok,
        text: env.vocab[tok] ?? '?',
        turn: Math.floor(j / shape.actionLen),
        mask: 1,
        logp_old: t.logpOld[r]!,
        logp: t.logp[r]!,
        logp_ref: t.logpRef[r]!,
        entropy: t.entropy[r]!,
        sum_p2: t.sumP2[r]!,
        adv: t.adv[r]!,
        ratio: t.ratio[r]!,
        clip: t.clip[r]!,
        loss: t.loss[r]!,
        logp_rollout: t.logpRollout[r]!,
        entropy_old: t.entropyOld[r]!,
        sum_p2_old: t.sumP2Old[r]!,
        kl: t.kl[r]!,
        ...(t.value && t.ret ? { value: t.value[r]!, ret: t.ret[r]! } : {}),
      });
    }
    const ep = b.episodes;
    const taken = ep.turns(n).length;
    const extra: Partial<BatchDump['trajs'][number]> = {};
    const methodTurnRewards = plan.infoGain !== null || plan.taskTurnRewards || plan.anchors;
    const turnRewards = methodTurnRewards ? t.turnReward : ep.turnRewards;
    if (turnRewards) extra.turn_rewards = Array.from(turnRewards.subarray(n * shape.maxTurns, n * shape.maxTurns + taken));
    if (plan.infoGain && t.answerLogp) {
      const S = shape.scoreSpan;
      extra.p_answer = Array.from({ length: taken }, (_, k) => {
        let s = 0;
        for (let i = 0; i < S; i++) s += t.answerLogp![(n * shape.maxTurns + k) * S + i]!;
        return Math.exp(s / S);
      });
    }
    if (plan.essLr) extra.grad_norm = Math.fround(Math.sqrt(t.g2[n]!));
    if (b.drawWeight) extra.draw_weight = b.drawWeight[n]!;
    if (plan.anchors) extra.anchor_keys = Array.from(b.adv.turnKey.subarray(n * shape.maxTurns, n * shape.maxTurns + taken));
    if (ep.checklist) {
      extra.checklist = ep.checklist[n]!.map((c) =>
        c.items.map((it, i) => ({
          item: it.id,
          weight: it.weight,
          sat: c.sat[i] === 1,
          sat_true: c.satTrue[i] === 1,
          strict: it.strict,
          deps: it.deps.map((d) => c.items[d]!.id),
          step: it.step,
        })),
      );
    }
    if (ep.turnRole && env.roles) {
      extra.turn_roles = Array.from(ep.turnRole.subarray(n * shape.maxTurns, n * shape.maxTurns + taken), (r) => env.roles![r] ?? '?');
    }
    if (ep.roleReward && env.roles) {
      const R = env.roles.length;
      extra.role_rewards = Object.fromEntries(env.roles.map((name, k) => [name, ep.roleReward![n * R + k]!]));
    }
    trajs.push({
      id: n,
      group: groupOf[n]!,
      role: null,
      reward: b.rewards[n]!,
      reward_true: ep.rewardTrue[n]!,
      kept: b.live[n] === 1,
      copies: b.mult[n]!,
      origin: ORIGINS[b.origin[n]!]!,
      minibatch: shape.minibatches.findIndex(([n0, n1]) => n >= n0 && n < n1),
      ...extra,
      text: ep.describe(n),
      tokens,
    });
  }
  const noise = b.episodes.info?.search_noise;
  return {
    version: 1,
    iter: b.iter,
    config: cfg,
    lr: b.lr,
    loss: b.loss,
    ...(typeof noise === 'number' ? { noise_p: noise } : {}),
    ...(plan.essLr ? { ess_minibatch: b.essStep, lr_minibatch: b.lrStep } : {}),
    plan: dumpPlan(plan),
    layout: { tp: Tp, action_len: shape.actionLen, max_turns: shape.maxTurns },
    trajs,
  };
}
