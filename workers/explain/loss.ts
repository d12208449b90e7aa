/**
 * A token's ratio, clip, KL, aggregation weight and loss at the update's last optimizer step (the
 * step whose values the dump holds), rederived from its log-probs, its advantage and the plan
 * (docs/METHODS.md 1.3-1.5, 4.5, 5.8, 5.12, 5.15, 5.16; kernels/loss/ppoLoss.ts documents the modes).
 */
import { clamp, f32, minibatchOf, num, par, type ExplainBatch, type Token } from './context';
import type { Input, Step } from './types';

export interface TokenLoss {
  /** The trainer's log-ratio λ = clamp(ℓ − ℓ_old, ±20). */
  lam: number;
  /** The ratio the dump shows (token r, sequence s, turn u...). */
  ratio: number;
  clip: number;
  kl: number;
  weight: number;
  /** The surrogate before weighting, and d(loss)/d(ℓ) before weighting (0: no gradient). */
  L: number;
  g: number;
  /** The token's gradient weight d(loss)/d(ℓ) = w·(g + β·dkl/dℓ) (0 outside its stage). */
  grad: number;
  /** The size of the KL's inputs (its float32 rounding is relative to it). */
  klScale: number;
  /** λ (or the segment's log-ratio) lies within float32 rounding of a clip bound: the side may differ between backends. */
  nearBound: boolean;
  /** False for SeeUPO rows outside the last stage's turn: loss 0. */
  active: boolean;
  loss: number;
}

/** Log-space clip bounds as the kernel takes them: GMPO's are log-space by definition. */
export function clipBounds(b: ExplainBatch): { lo: number; hi: number } {
  const r = b.plan.ratio;
  if (r.mode === 'geometric') return { lo: -r.clipLow, hi: r.clipHigh };
  return { lo: Math.log(1 - r.clipLow), hi: Math.log(1 + r.clipHigh) };
}

/** Segment log-ratios of trajectory n (float32, as the seqRatio kernel stores them): one, or one per turn. */
/** Whether a token is in the loss: a rollout correction's rejection takes some out (docs/METHODS.md 5.19). */
export const inLoss = (k: Token): boolean => k.rs_keep === undefined || k.rs_keep !== 0;

/**
 * The IS weight on a token's policy term (1 without a rollout correction's IS level): the token's
 * own, or under GMPO its trajectory's geometric mean over the tokens in the loss, as verl's
 * geo_mean loss takes it.
 */
export function isWeightOf(b: ExplainBatch, n: number, tok: number): number {
  const toks = b.dump.trajs[n]!.tokens;
  const k = toks[tok]!;
  if (k.is_weight === undefined) return 1;
  if (b.sft || b.plan.ratio.mode !== 'geometric') return k.is_weight;
  let s = 0;
  let c = 0;
  for (const x of toks) if (inLoss(x)) {
    s += Math.log(x.is_weight! + 1e-10);
    c++;
  }
  return f32(c > 0 ? Math.exp(s / c) : 1);
}

export function segmentLogs(b: ExplainBatch, n: number): number[] {
  const mode = b.sft ? 'sft' : b.plan.ratio.mode;
  const toks = b.dump.trajs[n]!.tokens.filter(inLoss);
  const T = b.layout.max_turns;
  if (mode === 'turn' || mode === 'step') {
    const sum = new Array<number>(T).fill(0);
    const cnt = new Array<number>(T).fill(0);
    for (const k of toks) {
      if (k.turn >= T) continue;
      sum[k.turn] = sum[k.turn]! + clamp(k.logp - k.logp_old, -20, 20);
      cnt[k.turn] = cnt[k.turn]! + 1;
    }
    return sum.map((s, t) => f32(cnt[t]! > 0 ? s / cnt[t]! : 0));
  }
  const { lo, hi } = clipBounds(b);
  let s = 0;
  for (const k of toks) {
    let lam = clamp(k.logp - k.logp_old, -20, 20);
    if (mode === 'geometric') lam = gmpoStar(lam, k.adv, lo, hi);
    s += lam;
  }
  return [f32(toks.length ? s / toks.length : 0)];
}

/** SeeUPO: the turn the batch's optimizer step trained (turn 1's, the last stage, after the update). */
const turnStageOf = (b: ExplainBatch): number => b.stage?.step?.turn ?? 0;

function gmpoStar(lam: number, A: number, lo: number, hi: number): number {
  const lc = clamp(lam, lo, hi);
  return A > 0 ? Math.min(lam, lc) : A < 0 ? Math.max(lam, lc) : lam;
}

/** The aggregation weight of token tok of trajectory n, with its derivation (docs/METHODS.md 1.3). */
export function weightOf(b: ExplainBatch, n: number, tok: number, steps: Step[] | null): number {
  const mode = b.plan.lossAgg;
  const turnMode = !b.sft && b.plan.ratio.mode === 'turn' && !b.lab;
  const segLen = b.plan.stepRows ? b.layout.action_len : b.layout.tp;
  const per = b.layout.tp / segLen;
  const [n0, n1] = minibatchOf(b, n);
  // SeeUPO's stage trains one turn only (the last stage turn 1's; a step-through batch its step's):
  // its weights are those of that turn's rows alone.
  const st = turnStageOf(b);
  const inStage = (k: Token) => (!turnMode || k.turn === st) && inLoss(k);
  const segOf = (k: Token) => (b.plan.stepRows ? k.turn : 0);
  let seqs = 0;
  let total = 0;
  for (let m = n0; m < n1; m++) {
    const c = b.dump.trajs[m]!.copies;
    const lens = new Array<number>(per).fill(0);
    for (const k of b.dump.trajs[m]!.tokens) if (inStage(k)) lens[segOf(k)] = lens[segOf(k)]! + 1;
    for (const len of lens) {
      if (len > 0) seqs += c;
      total += c * len;
    }
  }
  const t = b.dump.trajs[n]!;
  const k = t.tokens[tok]!;
  const c = t.copies;
  const len = inStage(k) ? t.tokens.filter((x) => inStage(x) && segOf(x) === segOf(k)).length : 0;
  let w: number;
  let formula: string;
  let subst: string;
  switch (mode) {
    case 'token-mean':
      w = c / Math.max(total, 1);
      formula = 'w = c / (policy tokens in the minibatch)';
      subst = `${num(c)} / ${num(total)}`;
      break;
    case 'seq-mean-token-mean':
      w = c / (Math.max(seqs, 1) * Math.max(len, 1));
      formula = `w = c / (${b.plan.stepRows ? 'steps' : 'sequences'} · |o_i|)`;
      subst = `${num(c)} / (${num(seqs)} · ${num(len)})`;
      break;
    case 'seq-mean-token-sum':
      w = c / Math.max(seqs, 1);
      formula = `w = c / ${b.plan.stepRows ? 'steps' : 'sequences'}`;
      subst = `${num(c)} / ${num(seqs)}`;
      break;
    case 'seq-mean-token-sum-norm':
      w = c / (Math.max(seqs, 1) * segLen);
      formula = `w = c / (${b.plan.stepRows ? 'steps' : 'sequences'} · Tp), Tp the padded length`;
      subst = `${num(c)} / (${num(seqs)} · ${num(segLen)})`;
      break;
  }
  if (!inStage(k) || c === 0) w = 0;
  w = f32(w);
  if (steps && b.plan.resample && t.draw_weight !== undefined) steps.push(pfppoStep(b, n));
  if (steps) {
    const inputs: Input[] = [{ label: 'c (copies)', value: c, ref: { kind: 'reward', traj: n }, ...(t.draw_weight !== undefined ? { note: `PF-PPO draws: weight ${num(t.draw_weight)}` } : {}) }];
    steps.push({
      label: `aggregation weight under ${mode}${b.plan.stepRows ? ' (the sequences are steps: turns)' : ''}, minibatch ${t.minibatch ?? 0} (trajectories ${n0}–${n1 - 1}: ${num(total)} tokens${turnMode ? ` of turn ${st + 1}` : ''}, ${num(seqs)} ${b.plan.stepRows ? 'steps' : 'sequences'})`,
      formula,
      subst: !inStage(k) ? `SeeUPO's ${b.stage?.step ? 'stage' : 'last stage'} trains turn ${st + 1} only: w = 0` : c === 0 ? 'not drawn (c = 0): w = 0' : subst,
      value: w,
      inputs,
    });
  }
  return w;
}

/**
 * PF-PPO's draw weight of trajectory n from the rewards (docs/METHODS.md 5.5), checked against the
 * dump's; the draws themselves are random, so its copies are an input.
 */
function pfppoStep(b: ExplainBatch, n: number): Step {
  const o = b.plan.resample!;
  const trajs = b.dump.trajs;
  const live = (m: number) => trajs[m]!.kept !== false && trajs[m]!.origin !== 'unused';
  const span = o.scope === 'group' ? trajs.filter((t) => t.group === trajs[n]!.group).map((t) => t.id) : trajs.map((t) => t.id);
  const scores = span.filter(live).map((m) => trajs[m]!.reward);
  const max = Math.max(...scores);
  const min = Math.min(...scores);
  const s = trajs[n]!.reward;
  const raw = o.weighting === 'pow' ? Math.abs(s) ** o.pow : o.weighting === 'max_min' ? (s === max || s === min ? 1 : 0) : s === max ? 0.4 : 0.1;
  const w = Math.max(raw + 1e-8, 1e-8);
  const rule = o.weighting === 'pow' ? `|S|^${num(o.pow)}` : o.weighting === 'max_min' ? '1 for the best and the worst score, else 0' : '0.4 for the best, 0.1 for the others';
  return {
    label: `PF-PPO: the draw weight from the reward-model score over the ${o.scope} (best ${num(max)}, worst ${num(min)}); then as many draws as live rollouts, in proportion to it, gave this row ${trajs[n]!.copies} cop${trajs[n]!.copies === 1 ? 'y' : 'ies'}`,
    formula: `w = max(${rule} + 1e-8, 1e-8)`,
    subst: `S = ${num(s)}`,
    value: w,
    trainer: trajs[n]!.draw_weight!,
    ok: Math.abs(w - trajs[n]!.draw_weight!) <= 1e-12 * Math.max(1, w),
  };
}

/** KL to the reference of one token (docs/METHODS.md 1.4). */
export function klOf(b: ExplainBatch, k: Token, steps: Step[] | null, n: number, tok: number): { kl: number; gk: number; scale: number } {
  const d = k.logp - k.logp_ref;
  const type = b.plan.kl.type;
  let kl: number;
  let gk: number;
  // The size of what the estimator subtracts: its float32 rounding is relative to that, not to the
  // (often tiny) result. k3's e^x − x − 1 cancels terms of size e^x and |x|.
  let scale = Math.max(Math.abs(k.logp), Math.abs(k.logp_ref));
  let formula: string;
  let subst: string;
  if (type === 'k1') {
    kl = d;
    gk = 1;
    formula = 'k1 = ℓ − ℓ_ref';
    subst = `${num(k.logp)} − ${par(k.logp_ref)}`;
  } else if (type === 'k2') {
    kl = 0.5 * d * d;
    gk = d;
    scale *= Math.abs(d);
    formula = 'k2 = (ℓ − ℓ_ref)² / 2';
    subst = `${par(d)}² / 2`;
  } else {
    const x = clamp(-d, -20, 20);
    const raw = Math.exp(x) - x - 1;
    kl = clamp(raw, -10, 10);
    // Where a clamp bites the value no longer moves with ℓ.
    gk = x === -d && kl === raw ? 1 - Math.exp(x) : 0;
    scale = Math.max(Math.exp(x), Math.abs(x), 1) * Math.max(1, scale);
    formula = 'k3 = e^x − x − 1, x = clamp(ℓ_ref − ℓ, ±20), clamped to ±10';
    subst = `e^${par(x)} − ${par(x)} − 1`;
  }
  steps?.push({
    key: 'kl',
    label: `KL to the reference (${type})`,
    formula,
    subst,
    value: kl,
    inputs: [
      { label: 'ℓ', value: k.logp, ref: { kind: 'token', q: 'logp', traj: n, tok } },
      { label: 'ℓ_ref', value: k.logp_ref, ref: { kind: 'token', q: 'logp_ref', traj: n, tok } },
    ],
  });
  return { kl, gk, scale };
}

/** The token's ratio, clip and loss at the last optimizer step. `upTo` limits the steps shown. */
export function tokenLoss(b: ExplainBatch, n: number, tok: number, steps: Step[] | null, upTo: 'ratio' | 'clip' | 'loss' = 'loss'): TokenLoss {
  const mode = b.sft ? 'sft' : b.plan.ratio.mode;
  const r = b.plan.ratio;
  const k = b.dump.trajs[n]!.tokens[tok]!;
  const A = k.adv;
  const d = k.logp - k.logp_old;
  const lam = clamp(d, -20, 20);
  const own = lam === d ? 1 : 0;
  const { lo, hi } = clipBounds(b);
  const T = b.layout.max_turns;
  const logInputs: Input[] = [
    { label: 'ℓ (this step)', value: k.logp, ref: { kind: 'token', q: 'logp', traj: n, tok } },
    { label: 'ℓ_old', value: k.logp_old, ref: { kind: 'token', q: 'logp_old', traj: n, tok } },
  ];
  steps?.push({ label: `token log-ratio at ${b.stage?.step ? `optimizer step ${b.stage.step.index + 1}` : 'the last optimizer step'}`, formula: 'λ = clamp(ℓ − ℓ_old, −20, 20)', subst: `${num(k.logp)} − ${par(k.logp_old)}`, value: lam, inputs: logInputs });

  const seg = () => segmentLogs(b, n);
  const segSteps = (label: string, turn: number | null, value: number) => {
    const toks = b.dump.trajs[n]!.tokens;
    const idx = toks.map((_, j) => j).filter((j) => turn === null || toks[j]!.turn === turn);
    steps?.push({
      label,
      formula: mode === 'geometric' ? 'log s = mean_t λ*_t' : turn === null ? 'log s = mean_t λ_t' : 'log u = mean over the turn of λ_t',
      value,
      inputs: idx.map((j) => {
        const x = toks[j]!;
        let l = clamp(x.logp - x.logp_old, -20, 20);
        if (mode === 'geometric') l = gmpoStar(l, x.adv, lo, hi);
        return { label: `t${j}`, value: l, own: j === tok, ref: { kind: 'token', q: 'ratio', traj: n, tok: j } } satisfies Input;
      }),
    });
  };

  let ratio: number;
  let L: number;
  let g: number;
  let clip: number;
  let active = true;
  const surrogate = (logR: number, adv: number): [number, number, number] => {
    const rr = Math.exp(logR);
    const L1 = -adv * rr;
    const L2 = -adv * Math.exp(clamp(logR, lo, hi));
    return [Math.max(L1, L2), L1 >= L2 ? -adv * rr : 0, L2 > L1 ? (logR < 0 ? -1 : 1) : 0];
  };
  const clipSteps = (logR: number, adv: number, what: string, Ln: number, gn: number, side: number) => {
    if (!steps || upTo === 'ratio') return;
    steps.push({
      label: `clip range of ${what}: [1 − ε_low, 1 + ε_high] = [${num(Math.exp(lo))}, ${num(Math.exp(hi))}] (ε_low = ${num(r.clipLow)}, ε_high = ${num(r.clipHigh)}), taken in log space`,
      formula: 'L = max(−A·ρ, −A·clip(ρ, 1 − ε_low, 1 + ε_high))',
      subst: `max(−${par(adv)}·${num(Math.exp(logR))}, −${par(adv)}·${num(Math.exp(clamp(logR, lo, hi)))})`,
      value: Ln,
    });
    steps.push({
      label: side === 0 ? 'the unclipped branch is the larger: not clipped' : `the clipped branch is the larger: clipped on the ${side < 0 ? 'low' : 'high'} side`,
      value: side,
    });
    steps.push({ label: gn !== 0 ? 'the gradient passes: dL/dℓ = −A·ρ' : 'no gradient (the clipped branch is constant in ℓ)', value: gn });
  };

  if (mode === 'token') {
    ratio = Math.exp(lam);
    steps?.push({ label: 'token ratio', formula: 'r = exp(λ)', subst: `exp(${num(lam)})`, value: ratio, key: 'ratio' });
    [L, g, clip] = surrogate(lam, A);
    g *= own;
    clipSteps(lam, A, 'the token ratio', L, g, clip);
    if (A < 0 && L > -A * r.dualClip) {
      L = -A * r.dualClip;
      g = 0;
      clip = 1;
      if (steps && upTo !== 'ratio') steps.push({ label: `dual clip (A < 0): the loss is capped at −A·c, c = ${num(r.dualClip)}; no gradient, counted as clipped high`, formula: 'L = min(L, −A·c)', value: L });
    } else if (steps && upTo !== 'ratio' && A < 0) steps.push({ label: `dual clip (A < 0) not reached: −A·c = ${num(-A * r.dualClip)}`, value: L });
  } else if (mode === 'sequence' || mode === 'step') {
    const segs = seg();
    const sl = mode === 'step' ? segs[Math.min(k.turn, T - 1)]! : segs[0]!;
    segSteps(mode === 'step' ? `SAMPO: the step's (turn ${k.turn + 1}'s) mean log-ratio (a geometric mean of its tokens' ratios)` : "GSPO: the trajectory's mean log-ratio (the geometric mean of its token ratios)", mode === 'step' ? k.turn : null, sl);
    const logS = Math.min(sl, 10);
    ratio = Math.exp(logS);
    steps?.push({ label: `${mode === 'step' ? 'step' : 'sequence'} ratio (log s capped at 10), shared by every token of the ${mode === 'step' ? 'turn' : 'trajectory'}`, formula: 's = exp(min(log s, 10))', subst: `exp(${num(logS)})`, value: ratio, key: 'ratio' });
    [L, g, clip] = surrogate(logS, A);
    g *= own * (logS === sl ? 1 : 0);
    clipSteps(logS, A, `the ${mode === 'step' ? 'step' : 'sequence'} ratio (no dual clip)`, L, g, clip);
  } else if (mode === 'cispo') {
    ratio = Math.exp(lam);
    steps?.push({ label: 'token ratio', formula: 'r = exp(λ)', subst: `exp(${num(lam)})`, value: ratio, key: 'ratio' });
    const w = Math.exp(clamp(lam, lo, hi));
    L = -w * A * k.logp;
    g = -w * A;
    clip = lam > hi ? 1 : lam < lo ? -1 : 0;
    if (steps && upTo !== 'ratio') {
      steps.push({ label: `CISPO: the IS weight is clipped to [${num(Math.exp(lo))}, ${num(Math.exp(hi))}] and its gradient stopped`, formula: 'w = sg(clip(r, 1 − ε_low, 1 + ε_high))', subst: `clip(${num(ratio)})`, value: w });
      steps.push({ label: clip === 0 ? 'inside the range: not clipped' : `clipped on the ${clip < 0 ? 'low' : 'high'} side`, value: clip });
      steps.push({ label: 'CISPO keeps every token\'s gradient: dL/dℓ = −w·A', formula: 'L = −w·A·ℓ', subst: `−${num(w)}·${par(A)}·${par(k.logp)}`, value: L });
    }
  } else if (mode === 'sapo') {
    ratio = Math.exp(lam);
    steps?.push({ label: 'token ratio', formula: 'r = exp(λ)', subst: `exp(${num(lam)})`, value: ratio, key: 'ratio' });
    const tau = A > 0 ? r.clipLow : r.clipHigh;
    const s = 1 / (1 + Math.exp(-tau * (ratio - 1)));
    L = -(4 / tau) * s * A;
    g = -4 * A * s * (1 - s) * ratio * own;
    clip = 0;
    if (steps && upTo !== 'ratio') {
      steps.push({ label: `SAPO: a soft gate instead of a clip, τ = ${A > 0 ? 'τ_pos' : 'τ_neg'} = ${num(tau)} (A ${A > 0 ? '>' : '≤'} 0)`, formula: 'f(r) = σ(τ(r − 1))·4/τ', subst: `σ(${num(tau)}·(${num(ratio)} − 1))·4/${num(tau)}`, value: (4 / tau) * s });
      steps.push({ label: 'never clipped; the gradient fades smoothly as r leaves 1', formula: 'dL/dℓ = −4A·s(1 − s)·r', value: g });
      steps.push({ label: 'surrogate', formula: 'L = −f(r)·A', value: L });
    }
  } else if (mode === 'sft') {
    ratio = Math.exp(lam);
    L = -A * k.logp;
    g = -A;
    clip = 0;
    if (steps) {
      steps.push({ label: 'ratio, for display only (fine-tuning has no ratio)', formula: 'r = exp(λ)', value: ratio, key: 'ratio' });
      if (upTo !== 'ratio') steps.push({ label: 'ReGFT fine-tuning: token cross-entropy, no clip', formula: 'L = −A·ℓ', subst: `−${par(A)}·${par(k.logp)}`, value: L });
    }
  } else if (mode === 'geometric') {
    const sl = seg()[0]!;
    if (steps) {
      steps.push({ label: `GMPO: each token's λ clipped one-sidedly in log space to [${num(lo)}, ${num(hi)}] by the sign of its advantage`, formula: 'λ* = A > 0 ? min(λ, clamp(λ)) : A < 0 ? max(λ, clamp(λ)) : λ', value: gmpoStar(lam, A, lo, hi) });
      segSteps("the trajectory's mean of λ* (the log of the geometric mean)", null, sl);
    }
    ratio = Math.exp(clamp(sl, -20, 20));
    steps?.push({ label: 'sequence ratio', formula: 's = exp(mean λ*)', subst: `exp(${num(sl)})`, value: ratio, key: 'ratio' });
    const star = gmpoStar(lam, A, lo, hi);
    L = -A * ratio;
    g = star === lam ? -A * ratio * own : 0;
    clip = star < lam ? 1 : star > lam ? -1 : 0;
    if (steps && upTo !== 'ratio') {
      steps.push({ label: clip === 0 ? 'this token was not clipped: its gradient passes, −A·s' : `this token was clipped on the ${clip < 0 ? 'low' : 'high'} side: no gradient of its own`, value: clip });
      steps.push({ label: 'surrogate', formula: 'L = −A·s', subst: `−${par(A)}·${num(ratio)}`, value: L });
    }
  } else {
    // SeeUPO: the dump holds the last stage, turn 1's (the stages run from the last turn to the first).
    const segs = seg();
    ratio = k.turn < T ? Math.exp(clamp(segs[k.turn]!, -20, 20)) : 1;
    segSteps(`SeeUPO: turn ${k.turn + 1}'s mean log-ratio`, k.turn, segs[k.turn] ?? 0);
    steps?.push({ label: 'turn ratio', formula: 'u = exp(log u)', value: ratio, key: 'ratio' });
    // Training's last stage is turn 1's (a step-through batch: its step's); the lab shows each row at its own turn's stage.
    const stage = b.lab ? k.turn : turnStageOf(b);
    active = k.turn === stage;
    if (active) {
      let later = 0;
      for (let j = stage + 1; j < T; j++) later += segs[j]!;
      const M = A * Math.exp(clamp(later, -20, 20));
      if (steps && upTo !== 'ratio') steps.push({ label: 'the advantage times the already-updated later turns\' ratios (stop-gradient)', formula: 'M = A·exp(Σ_{j>1} log u_j)', subst: `${num(A)}·exp(${num(later)})`, value: M });
      [L, g, clip] = surrogate(clamp(segs[stage]!, -20, 20), M);
      g *= own;
      clipSteps(clamp(segs[stage]!, -20, 20), M, 'the turn ratio', L, g, clip);
    } else {
      [L, g, clip] = [0, 0, 0];
      if (steps && upTo !== 'ratio') steps.push({ label: `the batch holds ${b.stage?.step ? `turn stage ${stage + 1}` : "the last stage (turn 1's)"}; turn ${k.turn + 1} is trained in another stage, whose values it does not hold: here loss 0, no clip`, value: 0 });
    }
  }
  const w = weightOf(b, n, tok, upTo === 'loss' ? steps : null);
  const { kl, gk, scale: klScale } = klOf(b, k, upTo === 'loss' ? steps : null, n, tok);
  const beta = b.plan.kl.coef;
  const isw = isWeightOf(b, n, tok);
  const loss = active ? w * (isw * L + beta * kl) : 0;
  const grad = active ? w * (isw * g + beta * gk) : 0;
  if (steps && upTo === 'loss' && k.is_weight !== undefined) {
    steps.push({
      label: !inLoss(k)
        ? 'the rollout correction rejected this token: out of the loss (weight 0)'
        : `the rollout correction's IS weight on the policy term, stopped${b.plan.ratio.mode === 'geometric' ? " (GMPO: the trajectory's geometric mean of its tokens' weights)" : ''}`,
      formula: 'c = min(exp(clamp(ℓ_old − ℓ_μ, ±20)), C)',
      value: isw,
    });
  }
  if (steps && upTo === 'loss') {
    steps.push({
      key: 'loss',
      label: `the token's loss: its weight times the surrogate plus β·KL (β = ${num(beta)})`,
      formula: isw === 1 ? 'loss = w·(L + β·kl)' : 'loss = w·(c·L + β·kl)',
      subst: active ? `${num(w)}·(${isw === 1 ? '' : `${num(isw)}·`}${num(L)} + ${num(beta)}·${par(kl)})` : 'outside the last stage: 0',
      value: loss,
    });
    steps.push({
      key: 'grad',
      label: "the token's gradient weight: what it pushes on its own log-prob (negative raises it)",
      formula: isw === 1 ? 'd(loss)/dℓ = w·(dL/dℓ + β·dkl/dℓ)' : 'd(loss)/dℓ = w·(c·dL/dℓ + β·dkl/dℓ)',
      subst: active ? `${num(w)}·(${isw === 1 ? '' : `${num(isw)}·`}${num(g)} + ${num(beta)}·${par(gk)})` : '0',
      value: grad,
    });
  }
  const near = (x: number) => Math.abs(x - lo) <= 64 * 2 ** -24 * Math.max(1, Math.abs(k.logp), Math.abs(k.logp_old)) || Math.abs(x - hi) <= 64 * 2 ** -24 * Math.max(1, Math.abs(k.logp), Math.abs(k.logp_old));
  const nearBound = near(Math.log(ratio)) || near(lam);
  return { lam, ratio, clip: w === 0 ? 0 : clip, kl, weight: w, L, g, grad, active, loss, klScale, nearBound };
}

/** Whether the ratio mode is the token-level one of a row, for the title. */
export function ratioModeName(b: ExplainBatch): string {
  if (b.sft) return 'ReGFT fine-tuning (token cross-entropy, no ratio)';
  const m = b.plan.ratio.mode;
  return {
    token: 'token ratio, clipped surrogate with dual clip (docs/METHODS.md 1.5)',
    sequence: 'GSPO sequence ratio (docs/METHODS.md 4.5)',
    geometric: 'GMPO geometric-mean ratio (docs/METHODS.md 5.12)',
    turn: 'SeeUPO per-turn ratio, reverse-order stages (docs/METHODS.md 5.8)',
    step: 'SAMPO per-step ratio (docs/METHODS.md 5.9)',
    cispo: 'CISPO clipped, stopped IS weight (docs/METHODS.md 5.15)',
    sapo: 'SAPO soft gate (docs/METHODS.md 5.16)',
  }[m];
}
