/**
 * CM2 checklist rewards (arXiv 2602.12268, docs/METHODS.md 5.2), as plain functions over the judge's
 * labels, so the tool-use task and the CM2 method compute them the same way.
 *
 * Within one turn, Sat[s][c] is the judge's label of item c in state x_s, where x_0 is the state
 * before the turn's first step and x_{s+1} the state after step s (S steps, S + 1 states).
 *   step reward (Eq. 2):  r[s][c]  = 1[deps of c all satisfied in x_s, c unsatisfied in x_s,
 *                                       c satisfied in x_{s+1}]  (each item flips at most once)
 *   backfilled (Eq. 3):   r~[s][c] = 1[deps satisfied in x_s, c unsatisfied in x_s,
 *                                       c satisfied in some x_{u+1}, u >= s]
 *   turn reward (Eq. 6):  R_t = sum_s sum_c w_c r[s][c]
 *   trajectory (Eq. 4):   R = (1 / L) sum_t R_t
 * In the toy tasks a step is one action slot (token) of the turn.
 */
import type { ChecklistItem } from './types';

/** Every prerequisite of `item` satisfied in the state `row`. */
function depsMet(item: ChecklistItem, row: Uint8Array): boolean {
  for (const d of item.deps) if (row[d] !== 1) return false;
  return true;
}

/** Eq. 2: [S][C] 0/1 step rewards from the [S + 1][C] labels of one turn. */
export function checklistStepRewards(items: readonly ChecklistItem[], sat: readonly Uint8Array[]): Uint8Array[] {
  const S = sat.length - 1;
  const C = items.length;
  const flipped = new Uint8Array(C);
  const r: Uint8Array[] = [];
  for (let s = 0; s < S; s++) {
    const row = new Uint8Array(C);
    for (let c = 0; c < C; c++) {
      if (!flipped[c] && depsMet(items[c]!, sat[s]!) && sat[s]![c] === 0 && sat[s + 1]![c] === 1) {
        row[c] = 1;
        flipped[c] = 1;
      }
    }
    r.push(row);
  }
  return r;
}

/** Eq. 3: [S][C] backfilled step rewards (credit every eligible step before the item is met). */
export function checklistBackfilledRewards(items: readonly ChecklistItem[], sat: readonly Uint8Array[]): Uint8Array[] {
  const S = sat.length - 1;
  const C = items.length;
  const r: Uint8Array[] = [];
  for (let s = 0; s < S; s++) {
    const row = new Uint8Array(C);
    for (let c = 0; c < C; c++) {
      const depsOk = depsMet(items[c]!, sat[s]!);
      let later = false;
      for (let u = s; u < S && !later; u++) later = sat[u + 1]![c] === 1;
      row[c] = depsOk && sat[s]![c] === 0 && later ? 1 : 0;
    }
    r.push(row);
  }
  return r;
}

/** Eq. 6: R_t = sum_s sum_c w_c r[s][c]. */
export function checklistTurnReward(items: readonly ChecklistItem[], r: readonly Uint8Array[]): number {
  let R = 0;
  for (const row of r) for (let c = 0; c < items.length; c++) R += items[c]!.weight * row[c]!;
  return R;
}

/**
 * Eq. 4: the mean of the turn rewards over L turns: all of `turnRewards`, or with `offset` the L
 * entries from there (a row of a batch's table, without a view per row).
 */
export function checklistTrajectoryReward(turnRewards: ArrayLike<number>, L: number, offset?: number): number {
  const end = offset === undefined ? turnRewards.length : offset + L;
  let s = 0;
  for (let t = offset ?? 0; t < end; t++) s += turnRewards[t]!;
  return L > 0 ? s / L : 0;
}

/**
 * The [S + 1][C] label matrix of a turn whose item c is decided by the token at step items[c].step:
 * unsatisfied before that step, `label[c]` from the state after it on.
 */
export function checklistStates(items: readonly ChecklistItem[], label: Uint8Array, steps: number): Uint8Array[] {
  const states: Uint8Array[] = [];
  for (let s = 0; s <= steps; s++) {
    const row = new Uint8Array(items.length);
    for (let c = 0; c < items.length; c++) row[c] = s > items[c]!.step ? label[c]! : 0;
    states.push(row);
  }
  return states;
}

/**
 * Eq. 2 for the label states of checklistStates, one entry at a time and without building them:
 * checklistStepRewards(items, checklistStates(items, label, steps))[s][c] for 0 <= s < steps.
 * In those states item c goes from unmet to met only at step s = items[c].step, and only if its
 * label is 1 (so at most once), and prerequisite d is met in state s when its step is before s and
 * its label is 1. The tool task asks this for every row and turn: 8,192 rollouts made ~600k small
 * arrays a rollout through the general functions, and half the task's time went to collecting them.
 */
export function checklistLabelStepReward(items: readonly ChecklistItem[], label: Uint8Array, s: number, c: number): 0 | 1 {
  const item = items[c]!;
  if (label[c] !== 1 || item.step !== s) return 0;
  for (const d of item.deps) if (label[d] !== 1 || !(items[d]!.step < s)) return 0;
  return 1;
}

