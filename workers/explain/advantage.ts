/**
 * Token advantages rederived from the batch dump, estimator by estimator (docs/METHODS.md 4-5, as
 * implemented in kernels/advantage/ and documented there), with the steps of the derivation. A
 * reimplementation from the formulas, not a call into the kernels: what it shows is checked against
 * the trainer's value, so a formula shown here cannot silently differ from the one that ran.
 *
 * Each estimator gives every token of a trajectory its value before EDGE-GRPO's entropy factor and
 * before batch whitening (`rawAdvantages`, float64); `advantageOf` applies both, rounding to float32
 * where the trainer stores the advantage, and explains one token.
 */
import { agrees, cached, clamp, f32, num, par, pivotMean, stdAround, trajStats, type ExplainBatch } from './context';
import { inLoss } from './loss';
import type { Input, Step } from './types';

export interface AdvResult {
  value: number;
  method: string;
  steps: Step[];
  notes: string[];
  /** The size of the inputs the value was taken as a difference of (for the float32 comparison). */
  scale: number;
}

const rewardOf = (b: ExplainBatch, m: number) => b.dump.trajs[m]!.reward;

function memberInputs(b: ExplainBatch, n: number, ms: readonly number[], value: (m: number) => number, extra?: (m: number) => string | undefined): Input[] {
  return ms.map((m) => {
    const t = b.dump.trajs[m]!;
    const notes = [t.kept === false ? 'not trained' : '', t.origin && t.origin !== 'policy' ? t.origin : '', extra?.(m) ?? ''].filter(Boolean).join(', ');
    return { label: `#${m}`, value: value(m), ref: { kind: 'reward', traj: m }, own: m === n, ...(notes ? { note: notes } : {}) };
  });
}

/** Mean and std of a group column (mean 0, std 1 for a group of one: verl's convention). */
function groupStats(b: ExplainBatch, xs: number[]): { mean: number; sd: number } {
  if (xs.length <= 1) return { mean: 0, sd: 1 };
  const mean = pivotMean(xs);
  return { mean, sd: stdAround(xs, mean, b.plan.advantage.unbiasedStd) };
}

/** (x - mean) / (sd + eps), or x - mean without std scaling or where sd <= stdMin. */
function scaled(b: ExplainBatch, x: number, mean: number, sd: number): { value: number; step: Step } {
  const o = b.plan.advantage;
  if (o.scaleStd && sd > o.stdMin) {
    const value = (x - mean) / (sd + o.eps);
    return { value, step: { label: 'normalized', formula: 'A = (R − μ) / (σ + ε)', subst: `(${num(x)} − ${par(mean)}) / (${num(sd)} + ${num(o.eps)})`, value } };
  }
  const value = x - mean;
  const why = o.scaleStd ? (sd === 0 ? 'σ = 0, the rewards are equal: not divided' : `σ = ${num(sd)} is not above ${num(o.stdMin)}: not divided`) : 'no std scaling';
  return { value, step: { label: `centred (${why})`, formula: 'A = R − μ', subst: `${num(x)} − ${par(mean)}`, value } };
}

function stdLabel(b: ExplainBatch): string {
  return b.plan.advantage.unbiasedStd ? 'σ = √(Σ (R − μ)² / (G − 1))' : 'σ = √(Σ (R − μ)² / G)';
}

/** group / rloo / raw over the outcome reward: one value per trajectory. */
function trajEstimate(b: ExplainBatch, n: number, steps: Step[] | null): number {
  const o = b.plan.advantage;
  const x = rewardOf(b, n);
  if (o.estimator === 'raw' || b.sft) {
    steps?.push({ label: b.sft ? 'ReGFT fine-tuning iteration: the advantage is the reward (1 on kept rollouts)' : 'raw: the advantage is the reward', formula: 'A = R', subst: num(x), value: x, inputs: [{ label: 'R', value: x, ref: { kind: 'reward', traj: n } }] });
    return x;
  }
  const ms = b.members(n);
  const G = ms.length;
  steps?.push({ label: `the group's rewards (G = ${G})`, inputs: memberInputs(b, n, ms, (m) => rewardOf(b, m)) });
  if (o.estimator === 'rloo') {
    if (G <= 1) {
      steps?.push({ label: 'a group of one keeps A = R', value: x });
      return x;
    }
    const r0 = rewardOf(b, ms[0]!);
    let s = 0;
    for (const m of ms) if (m !== n) s += rewardOf(b, m) - r0;
    const base = r0 + s / (G - 1);
    steps?.push({ label: 'leave-one-out baseline: the mean of the other rewards', formula: 'b = (Σ_j R_j − R) / (G − 1)', subst: `(${ms.filter((m) => m !== n).map((m) => num(rewardOf(b, m))).join(' + ')}) / ${G - 1}`, value: base });
    const value = x - base;
    steps?.push({ label: 'advantage', formula: 'A = R − b', subst: `${num(x)} − ${par(base)}`, value });
    return value;
  }
  const { mean, sd } = groupStats(b, ms.map((m) => rewardOf(b, m)));
  if (G <= 1) steps?.push({ label: 'a group of one: μ = 0, σ = 1 (verl)', value: '' });
  else {
    steps?.push({ label: 'group mean', formula: 'μ = (1/G) Σ_j R_j', subst: `(${ms.map((m) => num(rewardOf(b, m))).join(' + ')}) / ${G}`, value: mean });
    steps?.push({ label: 'group std', formula: stdLabel(b), value: sd });
  }
  const r = scaled(b, x, mean, sd);
  steps?.push(r.step);
  return r.value;
}

/** Dr. MAS: per (group, role) over the role's steps; per turn. */
function byRoleEstimate(b: ExplainBatch, n: number, turn: number, steps: Step[] | null): number {
  const o = b.plan.advantage;
  const t = b.dump.trajs[n]!;
  const role = t.turn_roles?.[turn];
  const rr = t.role_rewards;
  if (role === undefined || !rr || !Object.hasOwn(rr, role)) {
    steps?.push({ label: `turn ${turn + 1} has no acting role: its advantage is 0`, value: 0 });
    return 0;
  }
  const x = rr[role]!;
  if (o.estimator === 'raw') {
    steps?.push({ label: `raw: the reward of role ${role}`, value: x });
    return x;
  }
  const ms = b.members(n);
  const stepsOf = (m: number) => {
    const tr = b.dump.trajs[m]!.turn_roles ?? [];
    let c = 0;
    for (let k = 0; k < Math.min(b.turnsOf(m), tr.length); k++) if (tr[k] === role) c++;
    return c;
  };
  const pool = ms.filter((m) => stepsOf(m) > 0);
  const vals: number[] = [];
  for (const m of pool) for (let k = 0; k < stepsOf(m); k++) vals.push(b.dump.trajs[m]!.role_rewards![role]!);
  steps?.push({
    label: `turn ${turn + 1} acted as ${role}: role ${role}'s pool, one element per step a group member acted as ${role} (${vals.length} steps)`,
    inputs: pool.map((m) => ({ label: `#${m} × ${stepsOf(m)}`, value: b.dump.trajs[m]!.role_rewards![role]!, ref: { kind: 'reward', traj: m }, own: m === n })),
  });
  const c = vals.length;
  if (o.estimator === 'rloo') {
    if (c <= 1) {
      steps?.push({ label: 'a pool of one keeps A = R', value: x });
      return x;
    }
    // The trainer's form: the pool's pivot mean times its size, less this step.
    const mean = pivotMean(vals);
    const value = x - (mean * c - x) / (c - 1);
    steps?.push({ label: 'leave-one-out over the role\'s steps', formula: 'A = R − (c·μ − R) / (c − 1)', subst: `${num(x)} − (${c}·${par(mean)} − ${par(x)}) / ${c - 1}`, value });
    return value;
  }
  const mean = c <= 1 ? 0 : pivotMean(vals);
  const sd = c <= 1 ? 1 : stdAround(vals, mean, o.unbiasedStd);
  if (c <= 1) steps?.push({ label: 'a pool of one step: μ = 0, σ = 1', value: '' });
  else {
    steps?.push({ label: `role ${role}'s mean over its steps`, formula: 'μ_ρ = (1/c) Σ R_ρ', value: mean });
    steps?.push({ label: `role ${role}'s std`, formula: o.unbiasedStd ? 'σ_ρ = √(Σ (R_ρ − μ_ρ)² / (c − 1))' : 'σ_ρ = √(Σ (R_ρ − μ_ρ)² / c)', value: sd });
  }
  const r = scaled(b, x, mean, sd);
  steps?.push(r.step);
  return r.value;
}

/** REINFORCE++: the reward-to-go of token rewards along the trajectory's policy tokens. */
function reinforceEstimate(b: ExplainBatch, n: number, tok: number, steps: Step[] | null): number[] {
  const o = b.plan.advantage;
  const t = b.dump.trajs[n]!;
  const toks = t.tokens;
  let Rp = t.reward;
  if (o.baseline) {
    const ms = b.members(n);
    const mean = ms.length <= 1 ? 0 : pivotMean(ms.map((m) => rewardOf(b, m)));
    Rp = t.reward - mean;
    steps?.push({ label: 'REINFORCE++-baseline: R minus the group mean', formula: "R' = R − μ_G", subst: `${num(t.reward)} − ${par(mean)}`, value: Rp, inputs: memberInputs(b, n, ms, (m) => rewardOf(b, m)) });
  }
  const out = new Array<number>(toks.length).fill(0);
  const rs = new Array<number>(toks.length).fill(0);
  let acc = 0;
  for (let j = toks.length - 1; j >= 0; j--) {
    const k = toks[j]!;
    let r = o.klInReward !== 0 ? o.klInReward * (k.logp_ref - k.logp_old) : 0;
    if (j === toks.length - 1) r += Rp;
    rs[j] = r;
    acc = r + o.gamma * acc;
    out[j] = acc;
  }
  if (steps) {
    const k = toks[tok]!;
    steps.push({
      label: `token rewards: −β (ℓ_old − ℓ_ref) on each policy token (β = ${num(o.klInReward)}), plus ${o.baseline ? "R'" : 'R'} on the last`,
      formula: 'r_t = −β (ℓ_old,t − ℓ_ref,t) [+ R on the last token]',
      subst: o.klInReward !== 0 ? `this token: −${num(o.klInReward)} · (${num(k.logp_old)} − ${par(k.logp_ref)})${tok === toks.length - 1 ? ` + ${par(Rp)}` : ''}` : undefined,
      value: rs[tok]!,
      inputs: toks.map((x, j) => ({ label: `t${j}`, value: rs[j]!, own: j === tok, ref: { kind: 'token', q: 'logp_old', traj: n, tok: j } })),
    });
    steps.push({
      label: `reward-to-go from this token (γ = ${num(o.gamma)})`,
      formula: 'a_t = r_t + γ a_{t+1}',
      subst: tok < toks.length - 1 ? `${num(rs[tok]!)} + ${num(o.gamma)} · ${par(out[tok + 1]!)}` : num(rs[tok]!),
      value: out[tok]!,
    });
  }
  return out;
}

/** IGPO: z-scored turn rewards in pools, discounted over the turn boundaries. */
function turnEstimate(b: ExplainBatch, n: number, tok: number, steps: Step[] | null): number[] {
  const o = b.plan.advantage;
  const ms = b.members(n);
  const v = (m: number, t: number) => b.dump.trajs[m]!.turn_rewards?.[t] ?? 0;
  const boundary = (m: number, t: number) => t === b.turnsOf(m) - 1 || v(m, t) !== 0;
  type Pool = { mu: number; sd: number; vals: Array<[number, number]>; name: string };
  const pool = (kind: 0 | 1 | 2): Pool => {
    const vals: Array<[number, number]> = [];
    for (const m of ms) {
      const tm = b.turnsOf(m);
      for (let t = 0; t < tm; t++) {
        const fin = t === tm - 1;
        if ((kind === 1 && !fin) || (kind === 2 && fin) || !boundary(m, t)) continue;
        vals.push([m, t]);
      }
    }
    const name = kind === 0 ? 'the joint pool' : kind === 1 ? 'the outcome pool (last turns)' : 'the information-gain pool (earlier turns with a nonzero gain)';
    const xs = vals.map(([m, t]) => v(m, t));
    if (xs.length === 0) return { mu: 0, sd: 1, vals, name };
    if (xs.length === 1) return { mu: xs[0]!, sd: 1, vals, name };
    const mu = pivotMean(xs);
    let ss = 0;
    for (const x of xs) ss += (x - mu) ** 2;
    return { mu, sd: Math.sqrt(ss / xs.length + 1e-8) + 1e-6, vals, name };
  };
  const joint = o.separate ? null : pool(0);
  const fin = o.separate ? pool(1) : null;
  const rest = o.separate ? pool(2) : null;
  const tn = b.turnsOf(n);
  const perTurn = new Array<number>(tn).fill(0);
  const rhat = new Array<number>(tn).fill(0);
  const isB = new Array<boolean>(tn).fill(false);
  let acc = 0;
  for (let t = tn - 1; t >= 0; t--) {
    if (boundary(n, t)) {
      const p = joint ?? (t === tn - 1 ? fin! : rest!);
      const r = (v(n, t) - p.mu) / p.sd;
      rhat[t] = r;
      if (r !== 0) {
        isB[t] = true;
        acc = r + o.gamma * acc;
      }
    }
    perTurn[t] = acc;
  }
  const toks = b.dump.trajs[n]!.tokens;
  if (steps) {
    const turn = toks[tok]!.turn;
    steps.push({
      label: "this trajectory's turn rewards: the information gain of each earlier turn, the outcome on the last (docs/METHODS.md 5.1)",
      inputs: Array.from({ length: tn }, (_, t): Input => {
        const p = b.dump.trajs[n]!.p_answer;
        const note = t < tn - 1 && p?.[t + 1] !== undefined ? `p_answer ${num(p[t]!)} → ${num(p[t + 1]!)}` : t === tn - 1 ? 'the outcome' : undefined;
        return { label: `turn ${t + 1}`, value: v(n, t), ref: { kind: 'turn_reward', traj: n, turn: t }, own: t === turn, ...(note ? { note } : {}) };
      }),
    });
    for (const p of joint ? [joint] : [fin!, rest!]) {
      steps.push({
        label: `${p.name}: ${p.vals.length} value${p.vals.length === 1 ? '' : 's'} over the group (a gain of exactly 0 joins no pool)`,
        formula: p.vals.length > 1 ? 'μ = mean, σ = √(var_pop + 1e-8) + 1e-6' : p.vals.length === 1 ? 'a pool of one value is its own mean' : 'empty: μ = 0, σ = 1',
        subst: `μ = ${num(p.mu)}, σ = ${num(p.sd)}`,
        inputs: p.vals.map(([m, t]) => ({ label: `#${m} turn ${t + 1}`, value: v(m, t), ref: { kind: 'turn_reward', traj: m, turn: t }, own: m === n })),
      });
    }
    for (let t = tn - 1; t >= 0; t--) {
      const p = joint ?? (t === tn - 1 ? fin! : rest!);
      if (!boundary(n, t)) {
        steps.push({ label: `turn ${t + 1}: gain exactly 0, no turn boundary: takes the next boundary's value`, value: perTurn[t]! });
        continue;
      }
      steps.push({
        label: `turn ${t + 1}: normalized`,
        formula: 'r̂ = (v − μ) / σ',
        subst: `(${num(v(n, t))} − ${par(p.mu)}) / ${num(p.sd)}`,
        value: rhat[t]!,
      });
      if (!isB[t]) steps.push({ label: `turn ${t + 1}: r̂ is exactly 0, so it is no boundary (skipped by the discounting)`, value: perTurn[t]! });
      else {
        const next = perTurn.slice(t + 1).find((_, i) => isB[t + 1 + i]);
        steps.push({
          label: `turn ${t + 1}: discounted sum to the end (γ = ${num(o.gamma)})`,
          formula: 'Ã_t = r̂_t + γ Ã_next boundary',
          subst: next === undefined ? num(rhat[t]!) : `${num(rhat[t]!)} + ${num(o.gamma)} · ${par(next)}`,
          value: perTurn[t]!,
        });
      }
    }
  }
  return toks.map((k) => perTurn[k.turn] ?? 0);
}

/** CM2 turn level: per turn, over the members that took that turn. */
function turnGroupEstimate(b: ExplainBatch, n: number, tok: number, steps: Step[] | null): number[] {
  const o = b.plan.advantage;
  const ms = b.members(n);
  const v = (m: number, t: number) => b.dump.trajs[m]!.turn_rewards?.[t] ?? 0;
  const tn = b.turnsOf(n);
  const perTurn: number[] = [];
  const toks = b.dump.trajs[n]!.tokens;
  const want = steps ? toks[tok]!.turn : -1;
  for (let t = 0; t < tn; t++) {
    const took = ms.filter((m) => t < b.turnsOf(m));
    const vals = took.map((m) => v(m, t));
    const c = vals.length;
    const mean = c > 1 ? pivotMean(vals) : 0;
    const sd = c > 1 ? stdAround(vals, mean, o.unbiasedStd) : 1;
    const r = scaled(b, v(n, t), mean, sd);
    perTurn.push(r.value);
    if (t === want && steps) {
      steps.push({
        label: `turn ${t + 1}'s checklist rewards R_t over the ${c} group member${c === 1 ? '' : 's'} that took it (docs/METHODS.md 5.2)`,
        inputs: took.map((m) => ({ label: `#${m}`, value: v(m, t), ref: { kind: 'turn_reward', traj: m, turn: t }, own: m === n })),
      });
      if (c > 1) {
        steps.push({ label: 'their mean', formula: 'μ_t = (1/c) Σ R_t', value: mean });
        steps.push({ label: 'their std', value: sd });
      } else steps.push({ label: 'one member took this turn: μ = 0, σ = 1', value: '' });
      steps.push(r.step);
    }
  }
  return toks.map((k) => perTurn[k.turn] ?? 0);
}

/** GiGPO (and SAMPO): episode part plus omega times the step part over the anchor set. */
function gigpoEstimate(b: ExplainBatch, n: number, tok: number, steps: Step[] | null): number[] {
  const o = b.plan.advantage;
  const ms = b.members(n);
  const v = (m: number, t: number) => b.dump.trajs[m]!.turn_rewards?.[t] ?? 0;
  const key = (m: number, t: number) => b.dump.trajs[m]!.anchor_keys?.[t];
  const ret = (m: number, s: number) => {
    let acc = 0;
    for (let k = b.turnsOf(m) - 1; k >= s; k--) acc = v(m, k) + o.gamma * acc;
    return acc;
  };
  // Episode part: the group estimator over the group's step rows (a member counts once per turn taken).
  const vals: number[] = [];
  for (const m of ms) for (let k = 0; k < b.turnsOf(m); k++) vals.push(rewardOf(b, m));
  const c = vals.length;
  const mean = c <= 1 ? 0 : pivotMean(vals);
  const sd = c <= 1 ? 1 : stdAround(vals, mean, o.unbiasedStd);
  const AE = scaled(b, rewardOf(b, n), mean, sd);
  const tn = b.turnsOf(n);
  const toks = b.dump.trajs[n]!.tokens;
  const want = steps ? toks[tok]!.turn : -1;
  const perTurn: number[] = [];
  if (steps) {
    steps.push({
      label: `episode part: the group's rewards over its step rows (${c} steps: each member once per turn it took)`,
      inputs: ms.filter((m) => b.turnsOf(m) > 0).map((m) => ({ label: `#${m} × ${b.turnsOf(m)}`, value: rewardOf(b, m), ref: { kind: 'reward', traj: m }, own: m === n })),
    });
    steps.push({ label: 'their mean', value: mean });
    steps.push({ label: 'their std', value: sd });
    steps.push({ ...AE.step, label: `episode advantage A^E (${AE.step.label})` });
  }
  for (let t = 0; t < tn; t++) {
    const rs = ret(n, t);
    const k0 = key(n, t);
    let s = 0;
    let cnt = 0;
    const set: Input[] = [];
    for (const m of ms) {
      for (let k = 0; k < b.turnsOf(m); k++) {
        if (key(m, k) !== k0) continue;
        cnt++;
        const rk = ret(m, k);
        if (m !== n || k !== t) s += rs - rk;
        set.push({ label: `#${m} turn ${k + 1}`, value: rk, ref: { kind: 'turn_reward', traj: m, turn: k }, own: m === n && k === t });
      }
    }
    const AS = s / cnt;
    const a = AE.value + o.stepWeight * AS;
    perTurn.push(a);
    if (t === want && steps) {
      steps.push({
        label: `step return of turn ${t + 1} (γ = ${num(o.gamma)}; the toys' step reward is the outcome on the last turn)`,
        formula: 'R^S_t = Σ_{k≥t} γ^{k−t} r_k',
        value: rs,
        inputs: Array.from({ length: tn }, (_, k) => ({ label: `r turn ${k + 1}`, value: v(n, k), ref: { kind: 'turn_reward', traj: n, turn: k }, own: k === t })),
      });
      steps.push({
        label: `anchor set: the ${cnt} turn${cnt === 1 ? '' : 's'} of the group that start from the same observation, with their step returns`,
        inputs: set,
      });
      steps.push({
        label: cnt === 1 ? 'step part: an anchor set of one is its own mean, so A^S = 0' : 'step part: the step return minus the anchor set\'s mean',
        formula: 'A^S = R^S − mean over the anchor set',
        subst: cnt === 1 ? undefined : `${num(rs)} − ${par(rs - AS)}`,
        value: AS,
      });
      steps.push({ label: `A = A^E + ω A^S (ω = ${num(o.stepWeight)})`, subst: `${num(AE.value)} + ${num(o.stepWeight)} · ${par(AS)}`, value: a });
    }
  }
  return toks.map((k) => perTurn[k.turn] ?? 0);
}

/** VCPO's off-policy optimal baseline. */
function opobEstimate(b: ExplainBatch, n: number, steps: Step[] | null, notes: string[]): number {
  const o = b.plan.advantage;
  const ms = b.members(n);
  const G = ms.length;
  const g2Of = (m: number) => {
    if (!o.trueGradNorm) return trajStats(b, m).g2proxy;
    const g = b.dump.trajs[m]!.grad_norm;
    return g === undefined ? NaN : g * g;
  };
  const logIS = (m: number) => (o.isCap > 0 ? trajStats(b, m).logIS : 0);
  let base = 0;
  let sd = 1;
  const x = rewardOf(b, n);
  if (G > 1) {
    const rewards = ms.map((m) => rewardOf(b, m));
    const mean = pivotMean(rewards);
    sd = stdAround(rewards, mean, o.unbiasedStd);
    const logW = (m: number) => 2 * logIS(m) + Math.log(g2Of(m));
    let M = -Infinity;
    for (const m of ms) if (g2Of(m) > 0) M = Math.max(M, logW(m));
    if (M === -Infinity) base = mean;
    else {
      const r0 = rewardOf(b, ms[0]!);
      let nu = 0;
      let de = 0;
      for (const m of ms) {
        if (!(g2Of(m) > 0)) continue;
        const e = Math.exp(logW(m) - M);
        nu += e * (rewardOf(b, m) - r0);
        de += e;
      }
      base = r0 + nu / de;
    }
    steps?.push({
      label: `the group: reward R, sequence IS weight w = exp(Σ clamp(ℓ_old − ℓ_μ, ±20)), gradient norm ‖g‖ (${o.trueGradNorm ? "each trajectory's own, over every parameter" : 'the score-norm proxy Σ 1 − 2π + Σπ²'})`,
      inputs: ms.map((m) => ({
        label: `#${m}`,
        value: rewardOf(b, m),
        ref: { kind: 'reward', traj: m },
        own: m === n,
        note: `w = ${num(Math.exp(logIS(m)))}, ‖g‖² = ${num(g2Of(m))}, W = w²‖g‖² = ${num(Math.exp(2 * logIS(m)) * g2Of(m))}`,
      })),
    });
    steps?.push({
      label: M === -Infinity ? 'no member has a gradient norm: the baseline is the plain mean' : 'OPOB baseline: the rewards weighted by W = w² ‖g‖²',
      formula: 'b = Σ W_j R_j / Σ W_j',
      value: base,
    });
    steps?.push({ label: `the group's std (${o.unbiasedStd ? 'G − 1' : 'population'})`, value: sd });
  } else steps?.push({ label: 'a group of one: b = 0, σ = 1', value: '' });
  const r = scaled(b, x, base, sd);
  steps?.push({ ...r.step, formula: r.step.formula?.replace('μ', 'b') });
  let a = r.value;
  if (o.isCap > 0) {
    const lis = trajStats(b, n).logIS;
    const c = Math.exp(Math.min(lis, Math.log(o.isCap)));
    a *= c;
    steps?.push({
      label: `times the truncated IS weight c = min(w, ${num(o.isCap)})`,
      formula: 'A ← A · min(exp(log w), isCap)',
      subst: `${num(r.value)} · min(exp(${num(lis)}), ${num(o.isCap)})`,
      value: a,
    });
  }
  if (o.trueGradNorm && ms.some((m) => b.dump.trajs[m]!.grad_norm === undefined)) notes.push('The dump lacks a gradient norm of some member, so the baseline cannot be recomputed.');
  const ess = b.dump.ess_minibatch;
  if (steps && ess?.length) {
    steps.push({
      label: "the update's learning rate, scaled per optimizer step by the ESS of its minibatch (each step's derivation a click away)",
      inputs: ess.map((e, s): Input => ({ label: `step ${s + 1} ESS/N`, value: e, ref: { kind: 'opt_step', step: s }, ...(b.dump.lr_minibatch?.[s] !== undefined ? { note: `lr ${num(b.dump.lr_minibatch[s]!)}` } : {}) })),
    });
  }
  return a;
}

/** OTB: the per-position token baseline from the old policy's score-norm proxy. */
function otbEstimate(b: ExplainBatch, n: number, tok: number, steps: Step[] | null): number[] {
  const o = b.plan.advantage;
  const ms = b.members(n);
  const G = ms.length;
  const W = (m: number): number[] =>
    cached(b, `otbW:${m}`, () => {
      let acc = 0;
      return b.dump.trajs[m]!.tokens.map((k) => (acc += Math.max(1 - 2 * Math.exp(k.logp_old) + (k.sum_p2_old ?? NaN), 0)));
    });
  const Rn = rewardOf(b, n);
  const toks = b.dump.trajs[n]!.tokens;
  const out = toks.map((_, p) => {
    if (G <= 1) return Rn;
    let nu = 0;
    let de = 0;
    let others = 0;
    for (const m of ms) {
      const w = W(m)[p];
      if (w === undefined) continue;
      if (m !== n) others++;
      nu += w * (Rn - rewardOf(b, m));
      de += w;
    }
    return o.zeroTail && others === 0 ? Rn : nu / (de + 1e-8);
  });
  if (steps) {
    const k = toks[tok]!;
    const w = Math.max(1 - 2 * Math.exp(k.logp_old) + (k.sum_p2_old ?? NaN), 0);
    steps.push({
      label: `this token's score-norm proxy under the old policy (position ${tok} of the trajectory's policy tokens)`,
      formula: 'w = 1 − 2 π_old(a) + Σ_v π_old(v)²',
      subst: `1 − 2 · exp(${num(k.logp_old)}) + ${num(k.sum_p2_old ?? NaN)}`,
      value: w,
      inputs: [
        { label: 'ℓ_old', value: k.logp_old, ref: { kind: 'token', q: 'logp_old', traj: n, tok } },
        { label: 'Σπ²_old', value: k.sum_p2_old ?? NaN, ref: { kind: 'token', q: 'sum_p2_old', traj: n, tok } },
      ],
    });
    if (G <= 1) steps.push({ label: 'a group of one keeps A = R', value: Rn });
    else {
      const at = ms.filter((m) => W(m)[tok] !== undefined);
      steps.push({
        label: `the members with a position ${tok}: reward and cumulative W_p = Σ_{q≤p} w_q`,
        inputs: at.map((m) => ({ label: `#${m}`, value: rewardOf(b, m), ref: { kind: 'reward', traj: m }, own: m === n, note: `W = ${num(W(m)[tok]!)}` })),
      });
      const others = at.filter((m) => m !== n).length;
      if (o.zeroTail && others === 0) steps.push({ label: 'only this trajectory reaches this position: its baseline is 0 (handle_zero_tail), A = R', value: Rn });
      else {
        let sw = 0;
        let swr = 0;
        for (const m of at) {
          sw += W(m)[tok]!;
          swr += W(m)[tok]! * rewardOf(b, m);
        }
        steps.push({ label: 'token baseline', formula: 'B*_p = Σ W_p R / (Σ W_p + 1e-8)', value: swr / (sw + 1e-8) });
        steps.push({ label: 'advantage (taken around R, so equal rewards give exactly 0)', formula: 'A = Σ W_p (R − R_j) / (Σ W_p + 1e-8) = R − B*_p', value: out[tok]! });
      }
    }
  }
  return out;
}

/** PPO: GAE over the critic's values, each step rounded to float32 as the kernel computes. */
function gaeEstimate(b: ExplainBatch, n: number, tok: number, steps: Step[] | null, notes: string[]): number[] {
  const c = b.plan.critic!;
  const t = b.dump.trajs[n]!;
  const toks = t.tokens;
  const out = new Array<number>(toks.length).fill(0);
  const rets = new Array<number>(toks.length).fill(0);
  const deltas = new Array<number>(toks.length).fill(0);
  if (toks.some((k) => k.value === undefined)) {
    notes.push("The dump lacks the critic's values of this trajectory.");
    return out.fill(NaN);
  }
  let vNext = 0;
  let aNext = 0;
  for (let j = toks.length - 1; j >= 0; j--) {
    const v = toks[j]!.value!;
    const r = j === toks.length - 1 ? t.reward : 0;
    const delta = f32(f32(r + f32(c.gamma * vNext)) - v);
    const a = f32(delta + f32(f32(c.gamma * c.lambda) * aNext));
    deltas[j] = delta;
    out[j] = a;
    rets[j] = f32(a + v);
    vNext = v;
    aNext = a;
  }
  if (steps) {
    const k = toks[tok]!;
    const vN = tok + 1 < toks.length ? toks[tok + 1]!.value! : 0;
    const rr = tok === toks.length - 1 ? t.reward : 0;
    steps.push({
      label: `the critic table's values V(s) of this trajectory's states (the outcome ${num(t.reward)} is the reward of the last policy token)`,
      inputs: toks.map((x, j) => ({ label: `V t${j}`, value: x.value!, ref: { kind: 'token', q: 'value', traj: n, tok: j }, own: j === tok })),
    });
    steps.push({ label: 'TD error', formula: 'δ_t = r_t + γ V(s_{t+1}) − V(s_t)', subst: `${num(rr)} + ${num(c.gamma)} · ${par(vN)} − ${par(k.value!)}`, value: deltas[tok]! });
    steps.push({
      label: `GAE (γ = ${num(c.gamma)}, λ = ${num(c.lambda)})`,
      formula: 'A_t = δ_t + γλ A_{t+1}',
      subst: tok + 1 < toks.length ? `${num(deltas[tok]!)} + ${num(c.gamma * c.lambda)} · ${par(out[tok + 1]!)}` : num(deltas[tok]!),
      value: out[tok]!,
    });
    const trainer = k.ret;
    steps.push({
      label: 'return (what the critic entry moves toward)',
      formula: 'return = A + V',
      value: rets[tok]!,
      ...(trainer !== undefined ? { trainer, ok: agrees(rets[tok]!, trainer, Math.abs(k.value!)) } : {}),
    });
  }
  return out;
}

/** EDGE-GRPO's entropy factor P̄ / max(P_n, 1e-6) of trajectory n. */
function entropyFactor(b: ExplainBatch, n: number, steps: Step[] | null): number {
  const o = b.plan.advantage;
  const ms = b.members(n).filter((m) => trajStats(b, m).len > 0);
  if (ms.length === 0) return 1;
  const P = ms.map((m) => trajStats(b, m).entMean);
  const Pbar = pivotMean(P);
  const Pn = trajStats(b, n).entMean;
  const raw = Pbar / Math.max(Pn, 1e-6);
  const f = o.entropyClamp ? clamp(raw, 0.1, 10) : raw;
  steps?.push({
    label: "EDGE-GRPO entropy factor: the group's mean of each member's mean old-policy token entropy P, over this trajectory's P (docs/METHODS.md 5.3)",
    formula: o.entropyClamp ? 'f = clamp(P̄ / max(P_n, 1e-6), 0.1, 10)' : 'f = P̄ / max(P_n, 1e-6)',
    subst: `${num(Pbar)} / ${num(Math.max(Pn, 1e-6))}`,
    value: f,
    inputs: ms.map((m) => ({ label: `#${m} P`, value: trajStats(b, m).entMean, own: m === n })),
  });
  return f;
}

/** The estimator's name and section, for the explanation's header. */
export function estimatorName(b: ExplainBatch): string {
  const o = b.plan.advantage;
  if (b.sft) return 'ReGFT fine-tuning stage: A = R (docs/METHODS.md 5.4)';
  if (b.plan.critic) return 'PPO: GAE over the critic table, whitened over the batch (docs/METHODS.md 4.1)';
  if (o.otb) return 'OTB: the optimal token baseline (docs/METHODS.md 5.13)';
  const base: Record<string, string> = {
    group: o.scaleStd ? 'group-normalized outcome, (R − μ) / (σ + ε) (GRPO, docs/METHODS.md 4.2)' : 'group-centred outcome, R − μ (Dr. GRPO / DARS / CM2, docs/METHODS.md 4.3)',
    rloo: 'leave-one-out baseline (RLOO, docs/METHODS.md 4.6)',
    raw: 'raw reward',
    reinforce: `REINFORCE++ reward-to-go${b.plan.whiten ? ', whitened over the batch' : ''} (docs/METHODS.md 4.7)`,
    turn: 'IGPO: information-gain turn rewards, z-scored and discounted (docs/METHODS.md 5.1)',
    turnGroup: 'CM2 turn level: checklist turn rewards against the group (docs/METHODS.md 5.2)',
    gigpo: 'GiGPO: episode part plus step part over anchor states (docs/METHODS.md 5.9, 5.17)',
    opob: "VCPO's off-policy optimal baseline (docs/METHODS.md 5.10)",
  };
  let s = base[o.estimator] ?? o.estimator;
  if (o.byRole && ['group', 'rloo', 'raw'].includes(o.estimator)) s = `Dr. MAS: per (group, role) — ${s} (docs/METHODS.md 5.14)`;
  if (o.entropyScale) s += ', times EDGE-GRPO\'s entropy factor (5.3)';
  return s;
}

/** Every token advantage of trajectory n before whitening, float32 as the trainer stores it. */
function preWhiten(b: ExplainBatch, n: number, tok: number, steps: Step[] | null, notes: string[]): number[] {
  const o = b.plan.advantage;
  const toks = b.dump.trajs[n]!.tokens;
  if (toks.length === 0) return [];
  if (!b.sft && b.plan.critic) {
    // The critic's path writes GAE as is; EDGE-GRPO's factor belongs to the estimator kernel only.
    if (o.entropyScale) notes.push("EDGE-GRPO's entropy factor is not applied: PPO's GAE replaces the advantage kernel that would apply it.");
    return gaeEstimate(b, n, tok, steps, notes);
  }
  if (!b.sft && o.otb) {
    if (o.entropyScale) notes.push("EDGE-GRPO's entropy factor is not applied: OTB's token-baseline kernel replaces the advantage kernel that would apply it.");
    return otbEstimate(b, n, tok, steps).map(f32);
  }
  let vals: number[];
  const e = b.sft ? 'raw' : o.estimator;
  if (e === 'reinforce') vals = reinforceEstimate(b, n, tok, steps);
  else if (e === 'turn') vals = turnEstimate(b, n, tok, steps);
  else if (e === 'turnGroup') vals = turnGroupEstimate(b, n, tok, steps);
  else if (e === 'gigpo') vals = gigpoEstimate(b, n, tok, steps);
  else if (o.byRole && !b.sft && e !== 'opob') {
    const perTurn = new Map<number, number>();
    const want = toks[tok]?.turn;
    vals = toks.map((k) => {
      if (!perTurn.has(k.turn)) perTurn.set(k.turn, byRoleEstimate(b, n, k.turn, k.turn === want ? steps : null));
      return perTurn.get(k.turn)!;
    });
  } else {
    const a = e === 'opob' ? opobEstimate(b, n, steps, notes) : trajEstimate(b, n, steps);
    vals = toks.map(() => a);
  }
  const factor = o.entropyScale && !b.sft ? entropyFactor(b, n, steps) : 1;
  if (factor !== 1 && steps) steps.push({ label: 'times the entropy factor', formula: 'A ← A · f', subst: `${num(vals[tok]!)} · ${num(factor)}`, value: vals[tok]! * factor });
  return vals.map((a) => f32(a * factor));
}

/** Batch whitening's statistics over every policy token (verl masked_whiten: unbiased variance, + 1e-8). */
function whitenStats(b: ExplainBatch): { count: number; mean: number; sd: number } {
  return cached(b, 'whiten', () => {
    const all: number[] = [];
    for (let n = 0; n < b.N; n++) {
      const toks = b.dump.trajs[n]!.tokens;
      all.push(...preWhiten(b, n, 0, null, []).filter((_, j) => inLoss(toks[j]!)));
    }
    const count = all.length;
    let sum = 0;
    for (const a of all) sum += a;
    const mean = sum / Math.max(count, 1);
    let ss = 0;
    for (const a of all) ss += (a - mean) ** 2;
    return { count, mean, sd: count > 1 ? Math.sqrt(ss / (count - 1) + 1e-8) : 1 };
  });
}

/** Token `tok` of trajectory n: its advantage with the derivation. */
export function advantageOf(b: ExplainBatch, n: number, tok: number, withSteps = true): AdvResult {
  const steps: Step[] | null = withSteps ? [] : null;
  const notes: string[] = [];
  const t = b.dump.trajs[n]!;
  if (t.origin === 'gec_inject') notes.push('EDGE-GRPO guided error correction: this wrong rollout was finished with the task\'s reference answer, and is trained on as it stands.');
  if (t.origin === 'gec_replace') notes.push('EDGE-GRPO guided error correction: this wrong rollout was replaced by the reference trajectory.');
  if (t.origin === 'extra') notes.push('DARS: an extra rollout for this hard prompt; its group is the prompt\'s enlarged group.');
  if (t.origin === 'hint') notes.push('ReGFT: a hinted rollout (the reference\'s first turns forced).');
  if (!inLoss(t.tokens[tok]!)) {
    // verl computes the advantage over the mask the correction left, which zeroes a rejected token's.
    steps?.push({ label: "the rollout correction rejected this token: it is out of the loss mask, so the advantage stage gives it 0", value: 0 });
    return { value: 0, method: estimatorName(b), steps: steps ?? [], notes, scale: 1 };
  }
  const pre = preWhiten(b, n, tok, steps, notes);
  let value = pre[tok]!;
  const scale = Math.max(Math.abs(value), ...b.members(n).map((m) => Math.abs(rewardOf(b, m))));
  if (b.plan.whiten && !b.sft) {
    const w = whitenStats(b);
    const white = f32((value - w.mean) / w.sd);
    steps?.push({
      label: `batch whitening over all ${w.count} policy tokens of the batch`,
      formula: 'A = (a − μ_B) / √(var_B + 1e-8)  (unbiased variance)',
      subst: `(${num(value)} − ${par(w.mean)}) / ${num(w.sd)}`,
      value: white,
    });
    return { value: white, method: estimatorName(b), steps: steps ?? [], notes, scale: Math.max(Math.abs(white), Math.abs(w.mean) / w.sd, scale / w.sd) };
  }
  value = f32(value);
  return { value, method: estimatorName(b), steps: steps ?? [], notes, scale };
}
