/**
 * The numbers around the tokens: a trajectory's reward, a turn's reward (IGPO's information gain,
 * CM2's checklist, GiGPO's step reward), a group's statistics, VCPO's per-step ESS and learning
 * rate, the batch's loss, and a heatmap cell's token count.
 */
import { clamp, f32, num, pivotMean, stdAround, trajStats, type ExplainBatch, type Token } from './context';
import type { HistName, Input, Step, TokenQuantity } from './types';

export interface Derived {
  value: number | null;
  trainer: number | null;
  scale: number;
  method: string;
  steps: Step[];
  notes: string[];
  /** Set when the dump lacks what the derivation needs. */
  unavailable?: string;
  /** A number the batch starts from, with where it comes from. */
  input?: boolean;
}

/** The tools task trains on the checklist reward: with CM2, or the task's own setting. */
function checklistReward(b: ExplainBatch): boolean {
  const c = b.dump.config;
  return c.task === 'tools' && (c.env.toolReward === 'checklist' || (c.methods as string[]).includes('cm2'));
}

export function rewardOf(b: ExplainBatch, n: number): Derived {
  const t = b.dump.trajs[n]!;
  const c = b.dump.config;
  const notes: string[] = [];
  if (t.kept === false) notes.push('Not trained on: a filter dropped it (or ReGFT kept only correct rollouts). It still counts in its group\'s statistics where the estimator reads rewards.');
  if (t.copies !== 1) notes.push(`PF-PPO drew it ${t.copies} time${t.copies === 1 ? '' : 's'}${t.draw_weight !== undefined ? ` (draw weight ${num(t.draw_weight)})` : ''}.`);
  if (b.sft) {
    return { value: null, trainer: t.reward, scale: 1, method: 'ReGFT fine-tuning: the reward is the rollout\'s success (1 or 0)', steps: [], notes, input: true };
  }
  if (checklistReward(b) && t.turn_rewards && c.env.rmNoise === 0) {
    const S = c.env.toolSteps;
    let s = 0;
    for (const r of t.turn_rewards) s += r;
    const value = f32(S > 0 ? s / S : 0);
    return {
      value,
      trainer: t.reward,
      scale: Math.abs(value),
      method: 'CM2 checklist reward: the mean of the turn rewards over the reference\'s turn count (docs/METHODS.md 5.2)',
      steps: [
        {
          label: `turn rewards R_t (turns not taken count 0; L = the reference's ${S} turns)`,
          formula: 'R = (1/L) Σ_t R_t',
          subst: `(${t.turn_rewards.map(num).join(' + ') || '0'}) / ${S}`,
          value,
          inputs: t.turn_rewards.map((r, k) => ({ label: `R_${k + 1}`, value: r, ref: { kind: 'turn_reward', traj: n, turn: k } })),
        },
      ],
      notes,
    };
  }
  if (c.task === 'roles' && t.role_rewards && c.env.rmNoise === 0) {
    const rs = Object.values(t.role_rewards);
    const value = f32(rs.reduce((a, x) => a + x, 0) / rs.length);
    return {
      value,
      trainer: t.reward,
      scale: Math.abs(value),
      method: "roles task: the trajectory's reward is the mean of its roles' rewards",
      steps: [{ label: 'the roles\' rewards', formula: 'R = mean_ρ R_ρ', subst: `(${rs.map(num).join(' + ')}) / ${rs.length}`, value, inputs: Object.entries(t.role_rewards).map(([k, v]) => ({ label: k, value: v })) }],
      notes,
    };
  }
  if (t.reward !== t.reward_true) notes.push(`The reward model's noise moved it from the true reward ${num(t.reward_true)} (env.rmNoise ${num(c.env.rmNoise)}).`);
  return { value: null, trainer: t.reward, scale: 1, method: `the ${c.task} task's outcome reward (docs/TASKS.md)`, steps: [{ label: 'the episode the task scored', subst: t.text }], notes, input: true };
}

export function turnRewardOf(b: ExplainBatch, n: number, turn: number): Derived {
  const t = b.dump.trajs[n]!;
  const trainer = t.turn_rewards?.[turn] ?? null;
  const tn = b.turnsOf(n);
  const notes: string[] = [];
  const ig = b.plan.infoGain;
  if (ig && !b.sft) {
    if (turn === tn - 1) {
      return { value: t.reward, trainer, scale: Math.abs(t.reward), method: 'IGPO: the last turn taken carries the outcome reward (docs/METHODS.md 5.1)', steps: [{ label: 'the outcome reward', value: t.reward, inputs: [{ label: 'R', value: t.reward, ref: { kind: 'reward', traj: n } }] }], notes };
    }
    if (turn >= tn) return { value: 0, trainer, scale: 1, method: 'a turn not taken', steps: [], notes };
    const p = t.p_answer;
    if (!p || p[turn + 1] === undefined) return { value: null, trainer, scale: 1, method: 'IGPO information gain', steps: [], notes, unavailable: 'the dump lacks this trajectory\'s answer probabilities p_answer' };
    const logDiff = ig.igType === 'log_prob_diff';
    const value = f32(logDiff ? Math.log(p[turn + 1]!) - Math.log(p[turn]!) : p[turn + 1]! - p[turn]!);
    return {
      value,
      trainer,
      scale: logDiff ? Math.max(Math.abs(Math.log(p[turn]!)), Math.abs(value)) : Math.max(p[turn]!, Math.abs(value)),
      method: `IGPO information gain (${ig.igType}, docs/METHODS.md 5.1)`,
      steps: [
        {
          label: "the policy's probability of the true answer, teacher-forced after each turn (p_k: after the first k turns; p_0 the bare prompt), as the geometric mean over the answer's tokens",
          inputs: p.map((x, k) => ({ label: `p_${k}`, value: x, own: k === turn || k === turn + 1 })),
        },
        logDiff
          ? { label: `gain of turn ${turn + 1}: the change in the mean answer log-prob`, formula: 'r_t = log p_{t+1} − log p_t', subst: `log ${num(p[turn + 1]!)} − log ${num(p[turn]!)}`, value }
          : { label: `gain of turn ${turn + 1}`, formula: 'r_t = p_{t+1} − p_t', subst: `${num(p[turn + 1]!)} − ${num(p[turn]!)}`, value },
      ],
      notes,
    };
  }
  if (b.plan.advantage.estimator === 'gigpo' && !b.sft) {
    const value = turn === tn - 1 ? t.reward : 0;
    return { value, trainer, scale: Math.abs(t.reward), method: "GiGPO's step reward: the toys have none of their own, so the outcome sits on the last turn (docs/METHODS.md 5.9)", steps: [{ label: turn === tn - 1 ? 'the last turn: the outcome reward' : 'an earlier turn: 0', value, inputs: [{ label: 'R', value: t.reward, ref: { kind: 'reward', traj: n } }] }], notes };
  }
  const cl = t.checklist?.[turn];
  if (cl) {
    const haveDeps = cl.every((it) => it.deps !== undefined && it.step !== undefined);
    if (!haveDeps) return { value: null, trainer, scale: 1, method: 'CM2 checklist turn reward', steps: [], notes, unavailable: "the dump lacks the checklist items' prerequisites" };
    const A = b.layout.action_len;
    const byId = new Map(cl.map((it) => [it.item, it]));
    const earned = cl.map((it) => it.sat && it.step! < A && it.deps!.every((d) => byId.get(d)?.sat === true && byId.get(d)!.step! < it.step!));
    // The task sums step by step, item by item within a step (Eq. 6), in float64.
    let R = 0;
    for (let s = 0; s < A; s++) cl.forEach((it, c) => (it.step === s && earned[c] ? (R += it.weight) : 0));
    const value = f32(R);
    return {
      value,
      trainer,
      scale: 1,
      method: 'CM2 checklist turn reward: the weights of the items earned at this turn (docs/METHODS.md 5.2)',
      steps: [
        {
          label: "turn's checklist, labelled by the simulated judge; an item is earned when the judge marks it satisfied and its prerequisites (decided at earlier slots) are satisfied",
          inputs: cl.map((it, c): Input => ({
            label: it.item,
            value: it.weight,
            note: `${it.sat ? 'satisfied' : 'not satisfied'}${it.sat !== it.sat_true ? ' (judge flipped the true label)' : ''}${it.deps!.length ? `, needs ${it.deps!.join(', ')}` : ''}${it.strict ? ', strict' : ''}: ${earned[c] ? 'earned' : 'not earned'}`,
          })),
        },
        { label: 'turn reward', formula: 'R_t = Σ_c w_c·earned_c', subst: cl.filter((_, c) => earned[c]).map((it) => num(it.weight)).join(' + ') || '0', value },
      ],
      notes,
    };
  }
  return { value: null, trainer, scale: 1, method: 'turn reward', steps: [], notes, unavailable: 'no method or task defines this turn\'s reward in this run' };
}

/** A group's rewards and statistics, as the group estimators read them. */
export function groupOf(b: ExplainBatch, g: number): Derived {
  const ms = b.dump.trajs.map((_, n) => n).filter((n) => b.dump.trajs[n]!.group === g && b.dump.trajs[n]!.origin !== 'unused');
  if (ms.length === 0) return { value: null, trainer: null, scale: 1, method: 'group', steps: [], notes: [], unavailable: `the batch has no group ${g}` };
  const R = ms.map((m) => b.dump.trajs[m]!.reward);
  const G = R.length;
  const mean = G <= 1 ? 0 : pivotMean(R);
  const o = b.plan.advantage;
  const sd = G <= 1 ? 1 : stdAround(R, mean, o.unbiasedStd);
  const equal = R.every((r) => r === R[0]);
  const extra = ms.filter((m) => b.dump.trajs[m]!.origin === 'extra').length;
  const steps: Step[] = [
    {
      label: `rewards of the group's ${G} rollouts${extra ? ` (DARS: ${G - extra} first-round + ${extra} extra for this hard prompt)` : ''}`,
      inputs: ms.map((m) => {
        const t = b.dump.trajs[m]!;
        const note = [t.origin && t.origin !== 'policy' ? t.origin : '', t.kept === false ? 'not trained' : ''].filter(Boolean).join(', ');
        return { label: `#${m}`, value: t.reward, ref: { kind: 'reward', traj: m }, ...(note ? { note } : {}) };
      }),
    },
    { label: 'mean', formula: 'μ = (1/G) Σ R_j', subst: `(${R.map(num).join(' + ')}) / ${G}`, value: mean },
    { label: `std (${o.unbiasedStd ? 'unbiased, G − 1' : 'population'})`, formula: o.unbiasedStd ? 'σ = √(Σ (R − μ)² / (G − 1))' : 'σ = √(Σ (R − μ)² / G)', value: sd },
  ];
  const notes = equal ? ['All rewards are equal: every group-normalized advantage is 0 and the group gives no policy gradient (Advantage Collapse, docs/METHODS.md 3).'] : [];
  const dars = b.plan.extraRollouts;
  if (dars) {
    // DARS's schedule from the first round's accuracy; the task's reward is its success where it is 0 or 1 without noise.
    const first = ms.filter((m) => b.dump.trajs[m]!.origin !== 'extra').map((m) => b.dump.trajs[m]!.reward);
    const n = first.length;
    const binary = first.every((r) => r === 0 || r === 1) && b.dump.config.env.rmNoise === 0 && b.dump.config.env.formatPenalty === 0;
    if (binary && n > 0) {
      const acc = first.reduce((x: number, r: number) => x + r, 0) / n;
      let dn = 0;
      let subst = `a = ${num(acc)} ≥ 0.5: no extra rollouts`;
      if (acc < 0.5) {
        const a = acc <= 1e-6 ? 0.5 / n : acc;
        const S = dars.useStd ? 2 * Math.sqrt(a * (1 - a)) : 2 * a * (1 - a);
        const peak = dars.useStd ? n : 0.5 * n;
        const target = dars.schedule === 'ET' ? peak : 2 * (1 - a) * peak;
        dn = Math.max(0, Math.min(Math.ceil((target - n * S) / S - 1e-9), dars.nMax - n));
        subst = `a = ${num(a)}, S(a) = ${num(S)}, A* = ${num(peak)}${dars.schedule === 'HW' ? `, target 2(1 − a)A* = ${num(target)}` : ''}: ⌈(${num(target)} − ${n}·${num(S)}) / ${num(S)}⌉, at most ${dars.nMax - n}`;
      }
      steps.push({
        label: `DARS (${dars.schedule}): extra rollouts for a first-round accuracy below 0.5 (docs/METHODS.md 5.7)`,
        formula: dars.useStd ? 'ΔN = ⌈(A* − G·S(a)) / S(a)⌉, S(a) = 2√(a(1 − a)), A* = G' : 'ΔN = ⌈(A* − G·S(a)) / S(a)⌉, S(a) = 2a(1 − a), A* = G/2',
        subst,
        value: dn,
        trainer: extra,
        ok: dn === extra,
      });
    }
  }
  return { value: mean, trainer: null, scale: 1, method: 'the group the estimators normalize within', steps, notes };
}

/** VCPO: optimizer step s's ESS of its minibatch at its own parameters, and its learning rate. */
export function optStepOf(b: ExplainBatch, s: number): Derived {
  const d = b.dump;
  const ess = d.ess_minibatch?.[s];
  const lrs = d.lr_minibatch?.[s];
  const e = b.plan.essLr;
  const method = "VCPO's ESS-scaled learning rate, per optimizer step (docs/METHODS.md 5.10)";
  if (!e || ess === undefined || lrs === undefined) return { value: null, trainer: ess ?? null, scale: 1, method, steps: [], notes: [], unavailable: 'this run scales no learning rate by the ESS (VCPO is off)' };
  const M = b.minibatches.length;
  const epochs = d.config.epochs;
  const stagesPer = b.plan.ratio.mode === 'turn' && !b.sft ? b.layout.max_turns : 1;
  const perEpoch = M * stagesPer;
  const epoch = Math.floor(s / perEpoch);
  const mb = s % M;
  // The dump's ℓ are each minibatch's at its last step; the very first step's are ℓ_old.
  // A step-through batch right after step s holds that step's ℓ for its minibatch.
  const here = b.stage?.point === 'step' && b.stage.step!.index === s;
  const last = here || (epoch === epochs - 1 && Math.floor((s % perEpoch) / M) === stagesPer - 1);
  const first = s === 0;
  if (!last && !first) {
    return { value: null, trainer: ess, scale: 1, method, steps: [], notes: [], unavailable: `step ${s + 1} (epoch ${epoch + 1}, minibatch ${mb + 1}) ran at parameters whose log-probs the dump does not hold (it holds the last epoch's, and the first step's ℓ_old)` };
  }
  const [n0, n1] = b.minibatches[mb]!;
  const lams: Array<[number, number]> = [];
  for (let n = n0; n < n1; n++) {
    const toks = d.trajs[n]!.tokens;
    if (toks.length === 0) continue;
    let lis = 0;
    for (const k of toks) lis += Math.min(Math.max((first ? k.logp_old : k.logp) - (k.logp_rollout ?? k.logp_old), -20), 20);
    lams.push([n, f32(lis)]);
  }
  let rho = 1;
  if (lams.length) {
    let m = -Infinity;
    for (const [, l] of lams) m = Math.max(m, l);
    let s1 = 0;
    let s2 = 0;
    for (const [, l] of lams) {
      s1 += Math.exp(l - m);
      s2 += Math.exp(2 * (l - m));
    }
    rho = Math.exp(2 * Math.log(s1) - Math.log(s2)) / lams.length;
  }
  const lin = Math.min(1, rho / e.baseEss);
  const factor = e.rule === 'sqrt' ? Math.sqrt(lin) : lin;
  const lr = d.config.lr * factor;
  return {
    value: rho,
    trainer: ess,
    scale: 1,
    method,
    steps: [
      {
        label: `step ${s + 1}: epoch ${epoch + 1}, minibatch ${mb + 1} (trajectories ${n0}–${n1 - 1}); each trajectory's log IS weight at the step's parameters against the rollout policy${lams.length > 64 ? ' (the first 64 listed)' : ''}`,
        formula: 'log w_i = Σ_t clamp(ℓ_step − ℓ_μ, ±20)',
        inputs: lams.slice(0, 64).map(([n, l]): Input => ({ label: `#${n}`, value: l, ref: { kind: 'token', q: first ? 'logp_old' : 'logp', traj: n, tok: 0 } })),
      },
      { label: 'effective sample size over the live trajectories', formula: 'ρ = ESS/N = exp(2·LSE(log w) − LSE(2 log w)) / N', value: rho },
      {
        label: `learning-rate factor (${e.rule}, ρ_base = ${num(e.baseEss)})`,
        formula: e.rule === 'sqrt' ? 'f = √min(1, ρ/ρ_base)' : 'f = min(1, ρ/ρ_base)',
        value: factor,
      },
      { label: 'the step\'s learning rate', formula: 'lr = lr_config · f', subst: `${num(d.config.lr)} · ${num(factor)}`, value: lr, trainer: lrs, ok: Math.abs(lr - lrs) <= 1e-5 * Math.abs(lrs) },
    ],
    notes: [],
  };
}

export function batchLossOf(b: ExplainBatch, tokenLoss: (n: number, k: number) => { loss: number; scale: number }): Derived {
  let s = 0;
  let mag = 0;
  let count = 0;
  for (let n = 0; n < b.N; n++) {
    b.dump.trajs[n]!.tokens.forEach((_, k) => {
      const t = tokenLoss(n, k);
      s += t.loss;
      mag += t.scale;
      count++;
    });
  }
  const M = b.minibatches.length;
  const value = s / M;
  return {
    value,
    trainer: b.dump.loss,
    // The sum's rounding is relative to its terms' sizes, not to the (cancelling) sum.
    scale: mag / M,
    method: 'the aggregated loss of the last epoch: each minibatch\'s Σ w·L, averaged over the minibatches',
    steps: [{ label: `Σ over all ${count} policy tokens of their loss, over ${M} minibatch${M === 1 ? '' : 'es'}`, formula: 'loss = (1/M) Σ_tokens w·(L + β·kl)', subst: `${num(s)} / ${M}`, value }],
    notes: [],
  };
}

/** The fixed histogram bins (kernels/stats/histograms.ts): 24 over [-3, 3] for advantages, over [-0.5, 0.5] for log-ratios. */
export const HIST = { bins: 24, adv: [-3, 3] as const, ratio: [-0.5, 0.5] as const };

/** The bin of x as the stats kernel rounds it (each step in float32). */
export function histBin(x: number, lo: number, hi: number, bins = HIST.bins): number {
  const t = Math.floor(f32(f32(f32(x) - lo) * f32(bins / (hi - lo))));
  return Math.min(Math.max(t, 0), bins - 1);
}

/** What each histogram bins per policy token, in words, and the token quantity a listed token opens. */
const HIST_OF: Record<HistName, { what: string; chart: string; q: TokenQuantity }> = {
  adv: { what: 'advantage', chart: 'advantage', q: 'adv' },
  ratio: { what: 'log-ratio log(π/π_old)', chart: 'log IS ratio', q: 'ratio' },
  // The leaf names the sampler and carries the trainer's log-prob beside it (leafOf's note).
  mismatch: { what: 'sampler log-ratio log(π_old/μ)', chart: 'sampler mismatch', q: 'logp_rollout' },
};

/** A token's value in histogram `hist`, as the stats kernels bin it (log-ratios clamped to ±20), or null when the dump lacks it. */
function histValue(hist: HistName, k: Token): number | null {
  if (hist === 'adv') return k.adv;
  if (hist === 'ratio') return clamp(k.logp - k.logp_old, -20, 20);
  return k.logp_rollout === undefined ? null : clamp(k.logp_old - k.logp_rollout, -20, 20);
}

/** A heatmap cell: the policy tokens of iteration `iter` whose advantage (or IS or sampler log-ratio) falls in `bin`. */
export function histCellOf(b: ExplainBatch, hist: HistName, iter: number, bin: number, shown: number | null): Derived {
  // The sampler's log-ratios share the IS ratio's bins (kernels/stats/mismatchStats.ts).
  const [lo, hi] = HIST[hist === 'adv' ? 'adv' : 'ratio'];
  const edge = (i: number) => lo + ((hi - lo) * i) / HIST.bins;
  const { what, chart, q } = HIST_OF[hist];
  const method = `the ${chart} histogram of iteration ${iter}: policy tokens per bin (end bins catch what lies outside)`;
  const none = (unavailable: string): Derived => ({ value: null, trainer: shown, scale: 1, method, steps: [], notes: [], unavailable });
  if (iter !== b.dump.iter) return none(`the page holds the batch of iteration ${b.dump.iter} only; iteration ${iter}'s tokens are gone`);
  const inside: Input[] = [];
  let missing = false;
  b.dump.trajs.forEach((t, n) =>
    t.tokens.forEach((k, j) => {
      const x = histValue(hist, k);
      if (x === null) missing = true;
      else if (histBin(x, lo, hi) === bin) inside.push({ label: `#${n} t${j} ${k.text}`, value: x, ref: { kind: 'token', q, traj: n, tok: j } });
    }),
  );
  if (missing) return none("the batch dump holds no sampler log-probs (logp_rollout): it was saved before they were recorded");
  const range = `[${bin === 0 ? '−∞' : num(edge(bin))}, ${bin === HIST.bins - 1 ? '∞' : num(edge(bin + 1))})`;
  return {
    value: inside.length,
    trainer: shown,
    scale: 1,
    method,
    steps: [{ label: `tokens with ${what} in ${range}${inside.length > 200 ? ' (the first 200 listed)' : ''}`, value: inside.length, inputs: inside.slice(0, 200) }],
    notes: hist === 'mismatch' ? ['Each token is the trainer\'s log-prob over the sampler\'s (log π_old − log μ, clamped to ±20); all at 0 when the sampler is the trainer.'] : [],
  };
}

/** A leaf: a number the batch starts from. */
export function leafOf(b: ExplainBatch, n: number, tok: number, q: string): Derived {
  const k = b.dump.trajs[n]!.tokens[tok]!;
  const v = (k as unknown as Record<string, number | undefined>)[q];
  const where: Record<string, string> = {
    logp: "log π(token | context) under the parameters of the update's last optimizer step (its forward pass)",
    logp_old: "log π_old(token | context): the policy at the start of the update (the first step's forward pass)",
    logp_ref: 'log π_ref(token | context): the reference policy (the initial weights, or those of ProRL\'s last reset)',
    logp_rollout: 'log μ(token | context): the distribution that sampled the rollout (older than π_old under staleness; the sampler\'s precision and top-k/top-p when set)',
    entropy: "the policy's entropy at this position at the last optimizer step",
    entropy_old: "the old policy's entropy at this position (EDGE-GRPO's P averages it over the trajectory)",
    sum_p2_old: 'Σ_v π_old(v)², the old policy\'s sum of squared probabilities at this position (OTB, VCPO\'s proxy)',
    value: "the critic table's value V(s) of this token's state, before this iteration's critic update (PPO)",
  };
  const notes: string[] = [];
  if (q === 'entropy_old' || q === 'sum_p2_old') notes.push(`Trajectory mean of the old entropy: ${num(trajStats(b, n).entMean)}.`);
  // The sampler mismatch heatmap's cells list tokens by this leaf: its number is the difference of the two.
  if (q === 'logp_rollout' && k.logp_rollout !== undefined) {
    notes.push(`The trainer's log-prob of the same token, log π_old: ${num(k.logp_old)}; log π_old − log μ = ${num(k.logp_old - k.logp_rollout)} (0 when the sampler is the trainer).`);
  }
  return { value: null, trainer: v ?? null, scale: 1, method: where[q] ?? q, steps: [], notes, input: true };
}

