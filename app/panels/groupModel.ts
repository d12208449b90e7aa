/**
 * What the Group view says about each prompt of a batch dump, for every estimator.
 *
 * A group is a prompt: its own rollouts, plus DARS' extra rollouts and EDGE-GRPO's corrected ones
 * (marked), minus the slots DARS left unused (never rolled out). Its state:
 * - `dropped`: a filter (DARS' accuracy bounds, ReGFT's wrong rollouts) trained on none of it;
 * - `collapsed`: the trained rollouts' rewards tie *and* every advantage is 0 (Advantage Collapse);
 * - `tied`: the outcome rewards tie but the advantages are not 0 (per-turn rewards under IGPO or
 *   CM2, a critic's values under PPO): the estimator still has a signal;
 * - `zero`: rewards differ but every advantage is 0;
 * - `signal`: rewards differ and some advantage is not 0.
 */
import type { BatchDump } from '../../workers/formats/batchDump';

export type Traj = BatchDump['trajs'][number];
export type GroupState = 'dropped' | 'collapsed' | 'tied' | 'zero' | 'signal';

/** An advantage this close to 0 is 0 (the `adv_zero_frac` metric's threshold). */
export const ZERO_ADV = 1e-6;

export interface GroupRow {
  index: number;
  /** The prompt's rollouts as drawn: unused DARS slots left out. */
  trajs: Traj[];
  state: GroupState;
}

export interface GroupCounts {
  groups: number;
  dropped: number;
  collapsed: number;
  tied: number;
  /** Rollouts the view marks: DARS extras, EDGE-GRPO corrections, ReGFT hints. */
  extra: number;
  corrected: number;
  hinted: number;
}

const originOf = (t: Traj) => t.origin ?? 'policy';

export function groupState(trajs: readonly Traj[]): GroupState {
  const trained = trajs.filter((t) => t.kept !== false);
  if (trained.length === 0) return 'dropped';
  const tie = trained.every((t) => t.reward === trained[0]!.reward);
  const zero = trained.every((t) => t.tokens.every((k) => Math.abs(k.adv) <= ZERO_ADV));
  if (tie) return zero ? 'collapsed' : 'tied';
  return zero ? 'zero' : 'signal';
}

export function groupRows(batch: BatchDump | null): GroupRow[] {
  const byGroup: Traj[][] = [];
  // A group index is below the batch's size (the run-file schema checks it); one that is not is
  // skipped rather than allowed to size a sparse array.
  if (batch) {
    for (const t of batch.trajs) if (originOf(t) !== 'unused' && t.group >= 0 && t.group < batch.trajs.length) (byGroup[t.group] ??= []).push(t);
  }
  const rows: GroupRow[] = [];
  byGroup.forEach((trajs, index) => rows.push({ index, trajs, state: groupState(trajs) }));
  return rows;
}

export function groupCounts(rows: readonly GroupRow[]): GroupCounts {
  const all = rows.flatMap((r) => r.trajs);
  const n = (s: GroupState) => rows.filter((r) => r.state === s).length;
  return {
    groups: rows.length,
    dropped: n('dropped'),
    collapsed: n('collapsed'),
    tied: n('tied'),
    extra: all.filter((t) => originOf(t) === 'extra').length,
    corrected: all.filter((t) => originOf(t) === 'gec_inject' || originOf(t) === 'gec_replace').length,
    hinted: all.filter((t) => originOf(t) === 'hint').length,
  };
}

/** The note at the end of a group's row. */
export function groupNote(state: GroupState): string {
  switch (state) {
    case 'dropped':
      return 'dropped: not trained';
    case 'collapsed':
      return 'all equal → A = 0';
    case 'tied':
      return 'rewards tie, A ≠ 0';
    case 'zero':
      return 'A = 0';
    case 'signal':
      return '';
  }
}

/** A rollout's mark in its cell (empty for the policy's own rollout). */
export function originMark(t: Traj): string {
  switch (originOf(t)) {
    case 'extra':
      return 'extra';
    case 'gec_inject':
      return 'finished by the reference';
    case 'gec_replace':
      return 'replaced by the reference';
    case 'hint':
      return 'hinted';
    default:
      return '';
  }
}

/** One line summing up the batch, true under every estimator. */
export function countsText(c: GroupCounts): string {
  const parts = [`${c.collapsed} of ${c.groups} group${c.groups === 1 ? '' : 's'} collapsed (rewards tie and every advantage is 0)`];
  if (c.tied) parts.push(`${c.tied} tie on the outcome but still have advantages from the estimator`);
  if (c.dropped) parts.push(`${c.dropped} dropped by filtering (not trained, not collapsed)`);
  if (c.extra) parts.push(`${c.extra} extra rollout${c.extra === 1 ? '' : 's'} (DARS) in their prompt's group`);
  if (c.corrected) parts.push(`${c.corrected} rollout${c.corrected === 1 ? '' : 's'} corrected by the reference (EDGE-GRPO)`);
  if (c.hinted) parts.push(`${c.hinted} hinted rollout${c.hinted === 1 ? '' : 's'} (ReGFT)`);
  return `${parts.join('; ')}.`;
}
