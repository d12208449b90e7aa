import { describe, expect, it } from 'vitest';
import {
  checklistBackfilledRewards,
  checklistLabelStepReward,
  checklistStates,
  checklistStepRewards,
  checklistTrajectoryReward,
  checklistTurnReward,
} from '../../../workers/core/envs/checklist';
import type { ChecklistItem } from '../../../workers/core/envs/types';
import { createRng } from '../../../workers/core/rng';

const item = (id: string, weight: number, deps: number[] = [], step = 0): ChecklistItem => ({
  id,
  evidence: 'hand case',
  focus: 'tool call',
  question: `${id}?`,
  pass: `${id} holds`,
  strict: false,
  deps,
  weight,
  step,
});
const rows = (...r: number[][]) => r.map((x) => Uint8Array.from(x));

describe('CM2 checklist rewards (hand cases, docs/METHODS.md 5.2)', () => {
  // Items: a (w .5), b (w .3, needs a), c (w .2). States x0..x3 (three steps).
  const items = [item('a', 0.5), item('b', 0.3, [0]), item('c', 0.2)];

  it('Eq. 2: an item pays at the step it becomes satisfied, only with its deps met before that step', () => {
    // a met at step 0; b met in x1 too (same step as a: deps not met in x0) and stays; c met at step 2.
    const sat = rows([0, 0, 0], [1, 1, 0], [1, 1, 0], [1, 1, 1]);
    expect(checklistStepRewards(items, sat).map((r) => Array.from(r))).toEqual([
      [1, 0, 0],
      [0, 0, 0],
      [0, 0, 1],
    ]);
    // b met one step after a: paid.
    const later = rows([0, 0, 0], [1, 0, 0], [1, 1, 0], [1, 1, 0]);
    expect(checklistStepRewards(items, later).map((r) => Array.from(r))).toEqual([
      [1, 0, 0],
      [0, 1, 0],
      [0, 0, 0],
    ]);
  });

  it('Eq. 2: each item flips at most once (a label that drops and returns pays once)', () => {
    const sat = rows([0, 0, 0], [0, 0, 1], [0, 0, 0], [0, 0, 1]);
    expect(checklistStepRewards(items, sat).map((r) => Array.from(r))).toEqual([
      [0, 0, 1],
      [0, 0, 0],
      [0, 0, 0],
    ]);
  });

  it('Eq. 3: backfill credits every eligible step before the item is eventually met', () => {
    const sat = rows([0, 0, 0], [1, 0, 0], [1, 0, 0], [1, 1, 1]);
    expect(checklistBackfilledRewards(items, sat).map((r) => Array.from(r))).toEqual([
      [1, 0, 1], // b not eligible yet (a unmet in x0); c eligible, met later
      [0, 1, 1],
      [0, 1, 1],
    ]);
  });

  it('turn and trajectory rewards are the weighted sums and their mean over L turns', () => {
    const r = checklistStepRewards(items, rows([0, 0, 0], [1, 0, 0], [1, 1, 0], [1, 1, 0]));
    expect(checklistTurnReward(items, r)).toBeCloseTo(0.8, 12);
    expect(checklistTrajectoryReward([0.8, 1, 0], 3)).toBeCloseTo(0.6, 12);
    expect(checklistTrajectoryReward([], 0)).toBe(0);
  });

  it('trajectory reward of one row of a batch table: the same bits as the row on its own', () => {
    const table = Float32Array.from([0.3, 0.1, 0.7, 0.8, 1, 0, 0.25, 0.5, 0.125]);
    for (let n = 0; n < 3; n++) {
      expect(checklistTrajectoryReward(table, 3, 3 * n)).toBe(checklistTrajectoryReward(table.slice(3 * n, 3 * n + 3), 3));
    }
    expect(checklistTrajectoryReward(table, 3, 3)).toBeCloseTo(0.6, 7);
    expect(checklistTrajectoryReward(table, 0, 9)).toBe(0);
  });

  it('checklistStates: an item is unmet until the step that decides it, then holds its label', () => {
    const its = [item('tool', 0.5, [], 0), item('arg', 0.5, [0], 1)];
    expect(checklistStates(its, Uint8Array.from([1, 1]), 3).map((r) => Array.from(r))).toEqual([
      [0, 0],
      [1, 0],
      [1, 1],
      [1, 1],
    ]);
    // A satisfied argument whose tool item failed pays nothing (its dependency is unmet).
    const r = checklistStepRewards(its, checklistStates(its, Uint8Array.from([0, 1]), 3));
    expect(checklistTurnReward(its, r)).toBe(0);
  });

  it('checklistLabelStepReward gives checklistStepRewards over checklistStates, entry by entry', () => {
    const rng = createRng(12);
    let ones = 0;
    for (let trial = 0; trial < 2000; trial++) {
      const C = 1 + rng.int(6);
      const steps = 1 + rng.int(4);
      // Steps from -1 (decided before the turn) to past its last step; deps on any other item.
      const its = Array.from({ length: C }, (_, c) => {
        const deps = Array.from({ length: C }, (_, d) => d).filter((d) => d !== c && rng.next() < 0.3);
        return item(`i${c}`, 1, deps, rng.int(steps + 2) - 1);
      });
      const label = Uint8Array.from({ length: C }, () => (rng.next() < 0.6 ? 1 : 0));
      const ref = checklistStepRewards(its, checklistStates(its, label, steps));
      for (let s = 0; s < steps; s++) {
        for (let c = 0; c < C; c++) {
          expect(checklistLabelStepReward(its, label, s, c), `trial ${trial} s ${s} c ${c}`).toBe(ref[s]![c]);
          ones += ref[s]![c]!;
        }
      }
    }
    expect(ones).toBeGreaterThan(500);
  });
});
