/**
 * The turn log kept in columns (workers/core/envs/common.ts createBatchState: record, turns): the views
 * built on request hold what was recorded, the environment's PAD and -1 left out, a role only
 * where one was given; a row past its turns or a turn past its action slots is refused by name.
 */
import { describe, expect, it } from 'vitest';
import { createBatchState } from '../../../workers/core/envs/common';
import { PAD } from '../../../workers/core/envs/types';
import { createRng } from '../../../workers/core/rng';

const state = () => createBatchState({ N: 3, rm: { rmNoise: 0, rmNoiseFloor: 0 }, rewardRange: [0, 1], rng: createRng(1), maxTurns: 2, actionLen: 3 });

describe('turn log', () => {
  it('records read back as views: the kept policy tokens, the environment\'s without PAD or -1', () => {
    const st = state();
    const actions = Int32Array.of(5, 6, 7, 8, 9, 10, 11, 12, 13);
    st.record(1, 0, actions, 3, 3, 20, 21, '(noisy)');
    st.record(1, 1, actions, 3, 2, PAD, -1, '✓');
    st.record(2, 0, actions, 6, 2, -1, 22, '', 'planner');
    actions.fill(0); // the log holds copies
    expect(st.turns(0)).toEqual([]);
    expect(st.turns(1)).toEqual([
      { turn: 0, policy: [8, 9, 10], env: [20, 21], note: '(noisy)' },
      { turn: 1, policy: [8, 9], env: [], note: '✓' },
    ]);
    expect(st.turns(2)).toEqual([{ turn: 0, role: 'planner', policy: [11, 12], env: [22], note: '' }]);
    expect(Object.keys(st.turns(2)[0]!)).toEqual(['turn', 'role', 'policy', 'env', 'note']);
    expect('role' in st.turns(1)[0]!).toBe(false);
  });
  it('a row past its turns, or more policy tokens than a turn has, is refused', () => {
    const st = state();
    const actions = new Int32Array(9);
    st.record(0, 0, actions, 0, 3, -1, -1, '');
    st.record(0, 1, actions, 0, 3, -1, -1, '');
    expect(() => st.record(0, 2, actions, 0, 3, -1, -1, '')).toThrow(/turn log: row 0 already has 2 turns/);
    expect(() => st.record(1, 0, actions, 0, 4, -1, -1, '')).toThrow(/turn log: 4 policy tokens, a turn has 3/);
  });
});
