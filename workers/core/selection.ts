/**
 * Which rollouts an iteration draws and keeps: DARS's extra-rollout schedule, PF-PPO's reweighting,
 * DAPO's all-equal group test. Small host-side decisions over per-trajectory scalars (the tensor math
 * stays in the kernels).
 */
import type { Rng } from './rng';

/**
 * DARS extra rollouts for a prompt with first-stage accuracy `acc` over `n` rollouts (docs/METHODS.md 5.7,
 * yangzhch6/DARS `schedule_ET` / `schedule_HW`), capped at nMax - n.
 */
export function darsExtra(acc: number, n: number, o: { schedule: 'ET' | 'HW'; useStd: boolean; nMax: number }): number {
  if (acc >= 0.5) return 0;
  const a = acc <= 1e-6 ? 0.5 / n : acc;
  const S = o.useStd ? 2 * Math.sqrt(a * (1 - a)) : 2 * a * (1 - a);
  const peak = o.useStd ? n : 0.5 * n;
  const target = o.schedule === 'ET' ? peak : 2 * (1 - a) * peak;
  // The tolerance keeps an exact integer (24.000000000000004 from rounding) from becoming 25.
  const dn = Math.ceil((target - n * S) / S - 1e-9);
  return Math.max(0, Math.min(dn, o.nMax - n));
}

/** 1 where every reward of the group (rows start..start+size-1) is the same. */
export function groupAllEqual(rewards: ArrayLike<number>, start: number, size: number): boolean {
  for (let i = 1; i < size; i++) if (rewards[start + i] !== rewards[start]) return false;
  return true;
}

/**
 * PF-PPO (verl `compute_pf_ppo_reweight_data`): weights from reward-model scores, then N draws with
 * replacement in proportion to them. Returns how many times each rollout was drawn; rows with
 * `live` 0 are never drawn. scope 'group' takes the best and worst per group of `group` rows.
 */
export function pfppoCounts(
  scores: ArrayLike<number>,
  live: ArrayLike<number>,
  group: number,
  o: PfppoOptions,
  rng: Rng,
): Uint32Array {
  const N = scores.length;
  const w = pfppoWeights(scores, live, group, o);
  const cum = new Float64Array(N);
  let total = 0;
  for (let n = 0; n < N; n++) cum[n] = total += w[n]!;
  const draws = Array.from(live).reduce((s, x) => s + (x ? 1 : 0), 0);
  const counts = new Uint32Array(N);
  for (let k = 0; k < draws; k++) {
    const u = rng.next() * total;
    let lo = 0;
    let hi = N - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cum[mid]! > u) hi = mid;
      else lo = mid + 1;
    }
    counts[lo]!++;
  }
  return counts;
}

export type PfppoOptions = { weighting: 'pow' | 'max_min' | 'max_random'; pow: number; scope: 'group' | 'batch' };

/** PF-PPO's draw weight of each live row (0 for rows that are not live), before the draws. */
export function pfppoWeights(scores: ArrayLike<number>, live: ArrayLike<number>, group: number, o: PfppoOptions): Float64Array {
  const N = scores.length;
  const w = new Float64Array(N);
  const span = o.scope === 'group' ? group : N;
  for (let g0 = 0; g0 < N; g0 += span) {
    let max = -Infinity;
    let min = Infinity;
    for (let n = g0; n < Math.min(g0 + span, N); n++) {
      if (!live[n]) continue;
      max = Math.max(max, scores[n]!);
      min = Math.min(min, scores[n]!);
    }
    for (let n = g0; n < Math.min(g0 + span, N); n++) {
      if (!live[n]) continue;
      const s = scores[n]!;
      const raw =
        o.weighting === 'pow' ? Math.abs(s) ** o.pow : o.weighting === 'max_min' ? (s === max || s === min ? 1 : 0) : s === max ? 0.4 : 0.1;
      w[n] = Math.max(raw + 1e-8, 1e-8);
    }
  }
  return w;
}
