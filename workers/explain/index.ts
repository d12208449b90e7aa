/**
 * Explain a number of a batch: its derivation as the run's active methods composed it, with the
 * batch's own values substituted at every step, recomputed here from the batch dump's inputs and
 * compared with the value the trainer used (docs/EXPLAIN.md). Pure TypeScript without engine
 * runtime imports, so the page runs it on the main thread; the unit test runs the same code over
 * every method's dumps.
 */
import { advantageOf, estimatorName } from './advantage';
import { agrees, explainBatch, num, type ExplainBatch } from './context';
import { ratioModeName, tokenLoss, weightOf } from './loss';
import { batchLossOf, groupOf, histCellOf, leafOf, optStepOf, rewardOf, turnRewardOf, type Derived } from './other';
import type { Explanation, HistName, LabDump, Ref, Status, Step } from './types';
import { stageProblem, stageWords } from './stageDump';

export { explainBatch, unexplainable, type ExplainBatch } from './context';
export { histBin, HIST } from './other';
export * from './types';

export interface ExplainOptions {
  /** The metric row's histogram counts of an iteration (for a heatmap cell), or null when unknown. */
  histCounts?: (hist: HistName, iter: number) => number[] | null;
}

function status(value: number | null, trainer: number | null, scale: number): Status {
  if (value === null) return 'unavailable';
  if (trainer === null) return 'derived';
  return agrees(value, trainer, scale) ? 'checked' : 'mismatch';
}

function fromDerived(ref: Ref, title: string, d: Derived): Explanation {
  const base = { ref, title, method: d.method, steps: d.steps, notes: d.notes };
  if (d.input) return { ...base, value: d.trainer, trainer: d.trainer, status: 'input' };
  if (d.unavailable) return { ...base, steps: [], value: null, trainer: d.trainer, status: 'unavailable', unavailable: d.unavailable };
  return { ...base, value: d.value, trainer: d.trainer, status: status(d.value, d.trainer, d.scale) };
}

const QUANTITY_NAMES: Record<string, string> = {
  adv: 'Advantage',
  ratio: 'Ratio',
  clip: 'Clip',
  loss: 'Loss',
  kl: 'KL term',
  weight: 'Aggregation weight',
  grad: 'Gradient weight',
  logp: 'Log-prob',
  logp_old: 'Old log-prob',
  logp_ref: 'Reference log-prob',
  logp_rollout: 'Rollout log-prob',
  entropy: 'Entropy',
  entropy_old: 'Old entropy',
  sum_p2_old: 'Σπ² (old)',
  value: 'Critic value',
  ret: 'Return',
};

const HIST_TITLES: Record<HistName, string> = { adv: 'Advantage', ratio: 'Log-ratio', mismatch: 'Sampler mismatch' };

/** The title of a ref, without computing anything ("Advantage of token 2 (SEARCH) of trajectory 5"). */
export function refTitle(dump: ExplainBatch['dump'], ref: Ref): string {
  switch (ref.kind) {
    case 'token': {
      const k = dump.trajs[ref.traj]?.tokens[ref.tok];
      return `${QUANTITY_NAMES[ref.q] ?? ref.q} of token ${ref.tok}${k ? ` (${k.text}, turn ${k.turn + 1})` : ''} of trajectory ${ref.traj}`;
    }
    case 'reward':
      return `Reward of trajectory ${ref.traj}`;
    case 'turn_reward':
      return `Turn ${ref.turn + 1} reward of trajectory ${ref.traj}`;
    case 'group':
      return `Group ${ref.group}`;
    case 'opt_step':
      return `Optimizer step ${ref.step + 1}: ESS and learning rate`;
    case 'opt_update':
      return `Optimizer step ${ref.step + 1}: ${ref.q === 'grad_norm' ? 'gradient norm' : 'size of the parameter change'}`;
    case 'batch_loss':
      return `Loss of iteration ${dump.iter}`;
    case 'hist':
      return `${HIST_TITLES[ref.hist]} histogram, iteration ${ref.iter}, bin ${ref.bin + 1}`;
  }
}

/** Why a ref points at nothing in this batch, or null. */
export function refProblem(dump: ExplainBatch['dump'], ref: Ref): string | null {
  const t = 'traj' in ref ? dump.trajs[ref.traj] : undefined;
  if ('traj' in ref && !t) return `the batch has trajectories 0 to ${dump.trajs.length - 1}, not ${ref.traj}`;
  if (ref.kind === 'token' && !t!.tokens[ref.tok]) {
    return t!.tokens.length ? `trajectory ${ref.traj} has policy tokens 0 to ${t!.tokens.length - 1}, not ${ref.tok}` : `trajectory ${ref.traj} has no policy token (it was not trained on)`;
  }
  return null;
}

function tokenExplanation(b: ExplainBatch, ref: Extract<Ref, { kind: 'token' }>): Explanation {
  const { q, traj: n, tok } = ref;
  const k = b.dump.trajs[n]!.tokens[tok]!;
  const title = refTitle(b.dump, ref);
  const trainerOf = (x: number | undefined) => (x === undefined ? null : x);
  if (q === 'adv') {
    const r = advantageOf(b, n, tok);
    return { ref, title, method: r.method, steps: r.steps, notes: r.notes, value: r.value, trainer: k.adv, status: status(r.value, k.adv, r.scale) };
  }
  if (q === 'ret') {
    const r = advantageOf(b, n, tok);
    const step = r.steps.find((s) => s.label.startsWith('return'));
    const value = typeof step?.value === 'number' ? step.value : null;
    return { ref, title, method: r.method, steps: r.steps.filter((s) => !s.label.startsWith('batch whitening')), notes: r.notes, value, trainer: trainerOf(k.ret), status: status(value, trainerOf(k.ret), Math.abs(k.value ?? 0)) };
  }
  if (q === 'ratio' || q === 'clip' || q === 'loss' || q === 'kl' || q === 'weight' || q === 'grad') {
    const steps: Step[] = [];
    const upTo = q === 'ratio' ? 'ratio' : q === 'clip' ? 'clip' : 'loss';
    const r = tokenLoss(b, n, tok, q === 'kl' || q === 'weight' ? null : steps, upTo);
    const notes: string[] = [...(b.lab?.notes ?? [])];
    // The lab computes aggregation and gradient weights and no ratio, clip, KL or loss; the trainer's dump the reverse.
    const lab = b.lab;
    const trainerOf = (x: number | undefined): number | null => (lab || x === undefined || Number.isNaN(x) ? null : x);
    if ((q === 'clip' || q === 'loss') && !lab) notes.push('The gradient shown is derived from the checked ratio and clip; the dump holds no per-token gradient to compare it with.');
    if (b.stage?.step) notes.push(`These are the values of optimizer step ${b.stage.step.index + 1}: the batch stands ${stageWords(b.stage)}.`);
    else if (!lab && (b.dump.config.epochs > 1 || b.minibatches.length > 1)) notes.push("These are the values of the update's last optimizer step (the dump holds that step).");
    const method = q === 'weight' ? `loss aggregation ${b.plan.lossAgg} (docs/METHODS.md 1.3)` : q === 'kl' ? `KL ${b.plan.kl.type} to the reference (docs/METHODS.md 1.4)` : ratioModeName(b);
    if (q === 'kl') {
      tokenLoss(b, n, tok, steps, 'loss');
      const kept = steps.filter((s) => s.key === 'kl');
      const t = trainerOf(k.kl);
      return { ref, title, method, steps: kept, notes: [], value: r.kl, trainer: t, status: status(r.kl, t, r.klScale) };
    }
    if (q === 'weight') {
      weightOf(b, n, tok, steps);
      const t = lab ? (lab.weight[n]?.[tok] ?? null) : null;
      if (!lab) notes.push("The dump holds no aggregation weight: this one is derived from the minibatch's token counts and each row's copies, and checked through the loss it multiplies.");
      return { ref, title, method, steps, notes, value: r.weight, trainer: t, status: status(r.weight, t, Math.abs(r.weight)) };
    }
    if (q === 'grad') {
      const t = lab ? (lab.grad[n]?.[tok] ?? null) : null;
      if (!lab) notes.push('The dump holds no per-token gradient: this one is derived from the checked ratio, clip, weight and KL.');
      const scale = Math.abs(r.weight) * (Math.abs(r.g) + Math.abs(b.plan.kl.coef));
      return { ref, title, method, steps, notes, value: r.grad, trainer: t, status: status(r.grad, t, scale) };
    }
    const value = q === 'ratio' ? r.ratio : q === 'clip' ? r.clip : r.loss;
    const trainer = trainerOf(q === 'ratio' ? k.ratio : q === 'clip' ? k.clip : k.loss);
    const scale = q === 'loss' ? Math.abs(r.weight) * (Math.abs(r.L) + Math.abs(b.plan.kl.coef) * r.klScale) : Math.abs(value);
    // Each input of this number that the dump also holds is checked on the way.
    for (const s of steps) {
      if (typeof s.value !== 'number') continue;
      const tr = trainerOf(s.key === 'ratio' && q !== 'ratio' ? k.ratio : s.key === 'kl' ? k.kl : undefined);
      if (tr !== null) Object.assign(s, { trainer: tr, ok: agrees(s.value, tr, s.key === 'kl' ? r.klScale : 0) });
      if (lab && s.key === 'grad') Object.assign(s, { trainer: lab.grad[n]![tok]!, ok: agrees(s.value, lab.grad[n]![tok]!, Math.abs(r.weight) * (Math.abs(r.g) + Math.abs(b.plan.kl.coef))) });
    }
    // A log-ratio within float32 rounding of a clip bound may fall on either side of it on another backend.
    if (q === 'clip' && trainer !== null && value !== trainer && r.nearBound) {
      notes.push(`The log-ratio lies within float32 rounding of a clip bound: the trainer's float32 arithmetic put it on the other side (${trainer}).`);
      return { ref, title, method, steps, notes, value, trainer, status: 'checked' };
    }
    return { ref, title, method, steps, notes, value, trainer, status: status(value, trainer, scale) };
  }
  const d = leafOf(b, n, tok, q);
  return fromDerived(ref, title, d);
}

/** Explains `ref` in `b`. Never throws for a ref inside the batch; `refProblem` names one outside it. */
export function explain(b: ExplainBatch, ref: Ref, opts: ExplainOptions = {}): Explanation {
  const problem = refProblem(b.dump, ref);
  const title = refTitle(b.dump, ref);
  if (problem) return { ref, title, method: '', value: null, trainer: null, status: 'unavailable', steps: [], notes: [], unavailable: problem };
  const staged = stageProblem(b, ref);
  if (staged) return { ref, title, method: '', value: null, trainer: null, status: 'unavailable', steps: [], notes: [], unavailable: staged };
  switch (ref.kind) {
    case 'token':
      return tokenExplanation(b, ref);
    case 'reward':
      return fromDerived(ref, title, rewardOf(b, ref.traj));
    case 'turn_reward':
      return fromDerived(ref, title, turnRewardOf(b, ref.traj, ref.turn));
    case 'group':
      return fromDerived(ref, title, groupOf(b, ref.group));
    case 'opt_step':
      return fromDerived(ref, title, optStepOf(b, ref.step));
    case 'opt_update':
      return optUpdateOf(b, ref, title);
    case 'batch_loss': {
      const d = batchLossOf(b, (n, k) => {
        const r = tokenLoss(b, n, k, null);
        return { loss: r.loss, scale: Math.abs(r.weight) * (Math.abs(r.L) + Math.abs(b.plan.kl.coef) * r.klScale) };
      });
      return fromDerived(ref, title, b.lab ? { ...d, trainer: null } : d);
    }
    case 'hist': {
      const counts = opts.histCounts?.(ref.hist, ref.iter) ?? null;
      return fromDerived(ref, title, histCellOf(b, ref.hist, ref.iter, ref.bin, counts ? (counts[ref.bin] ?? null) : null));
    }
  }
}

/**
 * Step-through's gradient norm and parameter change of an optimizer step: numbers the captured
 * stage carries but the dump cannot reproduce (no gradient, no Adam moments), so never checked.
 */
function optUpdateOf(b: ExplainBatch, ref: Extract<Ref, { kind: 'opt_update' }>, title: string): Explanation {
  const st = b.stage?.step;
  const base = { ref, title, method: 'the optimizer step (docs/ARCHITECTURE.md "One training iteration", step 6)', steps: [], notes: [], value: null, status: 'unavailable' as const };
  if (!st || st.index !== ref.step) return { ...base, trainer: null, unavailable: 'only a step-through batch standing right after this optimizer step holds its gradient norm and parameter change' };
  if (ref.q === 'grad_norm') {
    return {
      ...base,
      trainer: st.grad_norm,
      unavailable:
        `the gradient norm ‖g‖ = √(Σ g²) over every parameter's gradient of minibatch ${st.minibatch + 1}'s loss, before the clip at maxGradNorm = ${num(b.dump.config.maxGradNorm)}, ` +
        `comes from the backward pass through the model; the batch holds no gradient, so the explainer cannot recompute it (the trainer's value: ${num(st.grad_norm)})`,
    };
  }
  return {
    ...base,
    trainer: st.params.delta_norm,
    unavailable:
      `Adam's change of the parameters (‖Δθ‖ = ${num(st.params.delta_norm)}, largest |Δθ| ${num(st.params.delta_max)}, at learning rate ${num(st.lr)}) depends on the gradient and on Adam's moments, ` +
      `which the batch does not hold; the explainer cannot recompute it (${stageWords(b.stage!)})`,
  };
}

/** The run's composition in one line per stage, for the dialog's header. */
export function compositionOf(b: ExplainBatch): string[] {
  return [`advantage: ${estimatorName(b)}`, `ratio and clip: ${ratioModeName(b)}`, `aggregation: ${b.plan.lossAgg}; KL ${b.plan.kl.type}, β = ${num(b.plan.kl.coef)}`];
}

/** One comparison of the explainer's value with the trainer's. */
export interface Check {
  ref: Ref;
  value: number;
  trainer: number;
  ok: boolean;
  /** |value - trainer| over the comparison's scale. */
  rel: number;
}

/**
 * Every number of the batch that the dump holds and the explainer derives: each token's advantage,
 * ratio, clip, KL and loss, each turn reward and trajectory reward with a formula, each optimizer
 * step's ESS that the dump lets it recompute, the batch loss. The unit test asserts them all.
 */
export function checkAll(dump: ExplainBatch['dump'], lab: LabDump | null = null): { checks: Check[]; unavailable: Array<{ ref: Ref; why: string }> } {
  const b = explainBatch(dump, lab ? { weight: lab.weight, grad: lab.grad, notes: lab.notes } : null);
  const checks: Check[] = [];
  const unavailable: Array<{ ref: Ref; why: string }> = [];
  const add = (ref: Ref, e: Explanation) => {
    if (e.status === 'unavailable') unavailable.push({ ref, why: e.unavailable ?? '' });
    // Intermediates the dump also holds, checked on the way (a return, a ratio inside a loss, DARS's ΔN, a step's lr).
    for (const s of e.steps) {
      if (s.trainer === undefined || typeof s.value !== 'number') continue;
      const d = Math.abs(s.value - s.trainer);
      checks.push({ ref, value: s.value, trainer: s.trainer, ok: s.ok === true, rel: d === 0 ? 0 : d / Math.max(Math.abs(s.trainer), 1e-30) });
    }
    if (e.value === null || e.trainer === null || e.status === 'input' || e.status === 'derived' || e.status === 'unavailable') return;
    const d = Math.abs(e.value - e.trainer);
    checks.push({ ref, value: e.value, trainer: e.trainer, ok: e.status === 'checked', rel: d === 0 ? 0 : d / Math.max(Math.abs(e.trainer), 1e-30) });
  };
  dump.trajs.forEach((t, n) => {
    t.tokens.forEach((_, tok) => {
      // A lab set holds advantages, aggregation and gradient weights; the trainer's dump the advantage, ratio, clip, KL and loss.
      const qs = lab ? (['adv', 'weight', 'grad'] as const) : (['adv', 'ratio', 'clip', 'kl', 'loss'] as const);
      for (const q of qs) add({ kind: 'token', q, traj: n, tok }, explain(b, { kind: 'token', q, traj: n, tok }));
      if (t.tokens[tok]!.ret !== undefined) add({ kind: 'token', q: 'ret', traj: n, tok }, explain(b, { kind: 'token', q: 'ret', traj: n, tok }));
    });
    (t.turn_rewards ?? []).forEach((_, turn) => add({ kind: 'turn_reward', traj: n, turn }, explain(b, { kind: 'turn_reward', traj: n, turn })));
    add({ kind: 'reward', traj: n }, explain(b, { kind: 'reward', traj: n }));
  });
  for (const g of new Set(dump.trajs.map((t) => t.group))) add({ kind: 'group', group: g }, explain(b, { kind: 'group', group: g }));
  if (!lab) {
    (dump.ess_minibatch ?? []).forEach((_, step) => add({ kind: 'opt_step', step }, explain(b, { kind: 'opt_step', step })));
    add({ kind: 'batch_loss' }, explain(b, { kind: 'batch_loss' }));
  }
  return { checks, unavailable };
}
