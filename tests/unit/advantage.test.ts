/**
 * The advantage-stage references (kernels/advantage/advantage.ts, trajStats.ts, tokenBaseline.ts, whiten.ts)
 * on cases worked by hand, plus the behaviours the methods are about: Advantage Collapse (all-equal
 * rewards give exactly 0 under group/RLOO, not under IGPO), variable and size-1 groups, empty
 * masks, per-role scales (Dr. MAS), OTB and OPOB reducing to plain baselines, and extremes.
 * References compute in float64 and store f32: TOL is f32 storage rounding with margin; cases with
 * eps = 1e-6 in a std denominator compare at 1e-5 relative.
 */
import { describe, expect, it } from 'vitest';
import {
  ADV_ESTIMATORS,
  ADVANTAGE_DEFAULTS,
  advantageCpu,
  groupLayout,
  grpoAdvantageCpu,
  packTrajIn,
  packTurnIn,
  type AdvantageInputs,
  type AdvantageOptions,
  type AdvantageShape,
} from '../../kernels/advantage/advantage';
import { tokenBaselineCpu } from '../../kernels/advantage/tokenBaseline';
import { packTrajStats, trajStatsCpu, unpackTrajStats, type TrajStats } from '../../kernels/stats/trajStats';
import { whitenCpu } from '../../kernels/advantage/whiten';
import { createRng } from '../../workers/core/rng';
import { expectClose } from '../helpers/expectClose';

const f32 = (xs: number[]) => Float32Array.from(xs);
const TOL = { atol: 1e-6, rtol: 1e-6 };
const EPS_TOL = { atol: 1e-5, rtol: 1e-5 };
const ones = (n: number) => new Float32Array(n).fill(1);

/** Trajectory-level inputs: rewards, group sizes, one turn each, all rows masked unless given. */
function traj(rewards: number[], sizes: number[], tp = 1, extra: Partial<AdvantageInputs> = {}): AdvantageInputs {
  const N = rewards.length;
  return { reward: f32(rewards), ...groupLayout(sizes), turns: new Uint32Array(N).fill(1), mask: ones(N * tp), ...extra };
}
const shapeOf = (N: number, tp = 1, extra: Partial<AdvantageShape> = {}): AdvantageShape => ({
  numTraj: N, tp, maxTurns: 1, actionLen: tp, nRoles: 0, ...extra,
});
const opts = (o: Partial<AdvantageOptions>): AdvantageOptions => ({ ...ADVANTAGE_DEFAULTS, ...o });
const stats = (p: Partial<Record<keyof TrajStats, number[]>>, N: number): TrajStats => ({
  len: p.len ? f32(p.len) : ones(N),
  entMean: p.entMean ? f32(p.entMean) : ones(N),
  logIS: p.logIS ? f32(p.logIS) : new Float32Array(N),
  g2: p.g2 ? f32(p.g2) : ones(N),
});

describe('group, rloo, raw with variable group sizes', () => {
  // Groups [1, 0, 0, 0] | [2, 2] | [5]: sizes 4, 2 and 1.
  const inp = traj([1, 0, 0, 0, 2, 2, 5], [4, 2, 1]);
  it('group: unbiased std 0.5 gives [1.5, -0.5 x3]; the equal pair gives exactly 0; size 1 uses mean 0, std 1', () => {
    const a = advantageCpu(inp, opts({ estimator: 'group' }), shapeOf(7));
    expectClose(a, [1.5, -0.5, -0.5, -0.5, 0, 0, 5], EPS_TOL);
    expect(a[4]).toBe(0);
    expect(a[5]).toBe(0);
    // Population std sqrt(0.1875) and Dr. GRPO's no-std form.
    const pop = advantageCpu(inp, opts({ unbiasedStd: false }), shapeOf(7));
    expect(pop[0]).toBeCloseTo(0.75 / Math.sqrt(0.1875), 5);
    const dr = advantageCpu(inp, opts({ scaleStd: false }), shapeOf(7));
    expectClose(dr, [0.75, -0.25, -0.25, -0.25, 0, 0, 5], TOL);
  });
  it('rloo: 1 - 0 = 1, 0 - 1/3; the equal pair gives exactly 0; size 1 gives R', () => {
    const a = advantageCpu(inp, opts({ estimator: 'rloo' }), shapeOf(7));
    expectClose(a, [1, -1 / 3, -1 / 3, -1 / 3, 0, 0, 5], TOL);
    expect(a[4]).toBe(0);
  });
  it('raw: A = R', () => {
    expectClose(advantageCpu(inp, opts({ estimator: 'raw' }), shapeOf(7)), [1, 0, 0, 0, 2, 2, 5], TOL);
  });
  it('broadcast over the trajectory rows, times the mask', () => {
    const a = advantageCpu(traj([1, 0, 0, 0], [4], 2, { mask: f32([1, 1, 1, 0, 1, 1, 0, 0]) }), opts({}), shapeOf(4, 2));
    expectClose(a, [1.5, 1.5, -0.5, 0, -0.5, -0.5, 0, 0], EPS_TOL);
  });
  it('grpoAdvantageCpu is advantageCpu with uniform groups', () => {
    const r = f32([1, 0, 0.5, 0.5, 0.2, 0.9]);
    const m = f32([1, 1, 0, 1, 1, 1, 1, 0, 1, 1, 1, 1]);
    const o = { group: 3, scaleStd: true, unbiasedStd: true, eps: 1e-6 };
    const ref = advantageCpu(traj(Array.from(r), [3, 3], 2, { mask: m }), opts(o), shapeOf(6, 2));
    expect(Array.from(grpoAdvantageCpu(r, m, 2, o))).toEqual(Array.from(ref));
    expect(() => grpoAdvantageCpu(r, m, 2, { ...o, group: 4 })).toThrow(/whole groups/);
  });
});

describe('Advantage Collapse', () => {
  it('all-equal rewards give exactly 0 under group, rloo, reinforce-baseline, gigpo with equal steps, and OTB', () => {
    for (const r of [0, 1, 0.1, 0.7]) {
      const inp = traj([r, r, r, r, r], [5], 3, {
        trajStats: stats({ g2: [1, 2, 3, 4, 5], logIS: [0, 0.5, -1, 2, 0] }, 5),
        turnReward: f32([0, 0, 0, 0, 0]),
        turnKey: new Uint32Array(5),
      });
      for (const estimator of ['group', 'rloo', 'opob'] as const) {
        for (const scaleStd of [true, false]) {
          const a = advantageCpu(inp, opts({ estimator, scaleStd, isCap: 10 }), shapeOf(5, 3));
          expect(Array.from(a), `${estimator} r=${r}`).toEqual(new Array(15).fill(0));
        }
      }
      const rb = advantageCpu(inp, opts({ estimator: 'reinforce', baseline: true }), shapeOf(5, 3));
      expect(Array.from(rb)).toEqual(new Array(15).fill(0));
      const gi = advantageCpu(inp, opts({ estimator: 'gigpo' }), shapeOf(5, 3));
      expect(Array.from(gi)).toEqual(new Array(15).fill(0)); // +0: toEqual tells -0 apart
      const otb = tokenBaselineCpu(
        { ...inp, logpOld: new Float32Array(15).fill(Math.log(0.5)), sumP2Old: new Float32Array(15).fill(0.3) },
        3,
      );
      expect(Array.from(otb)).toEqual(new Array(15).fill(0));
    }
  });
  it('IGPO (turn) is not collapsed when the outcomes are equal but the information gains differ', () => {
    // Two all-fail rollouts (F1 = 0): GRPO gives 0, IGPO does not.
    const inp = turnCase();
    const grpo = advantageCpu({ ...inp, reward: f32([0, 0]) }, opts({ estimator: 'group' }), inp.shape);
    expect(Array.from(grpo).every((x) => x === 0)).toBe(true);
    const igpo = advantageCpu(inp, opts({ estimator: 'turn', gamma: 1 }), inp.shape);
    expect(igpo.filter((x) => x !== 0).length).toBe(5);
  });
});

/**
 * Group of two, T = 3, one row per turn. Trajectory 0 took 3 turns: IG 0.2, IG 0.1, final F1 0;
 * trajectory 1 took 2: IG 0.4, final 0; its third row belongs to a turn it did not take.
 */
function turnCase() {
  const shape = shapeOf(2, 3, { maxTurns: 3, actionLen: 1 });
  return {
    ...traj([0, 0], [2], 3, { turns: Uint32Array.from([3, 2]), turnReward: f32([0.2, 0.1, 0, 0.4, 0, 0]) }),
    shape,
  };
}

describe('turn (IGPO)', () => {
  it('joint pool: mean 0.14, var_pop 0.0224, std sqrt(0.0224 + 1e-8) + 1e-6 = 0.1496673; gamma 1 sums backwards', () => {
    // r^ = [0.06, -0.04, -0.14 | 0.26, -0.14] / 0.1496673 = [0.40089, -0.26726, -0.93541 | 1.73719, -0.93541]
    const inp = turnCase();
    const a = advantageCpu(inp, opts({ estimator: 'turn', gamma: 1 }), inp.shape);
    expectClose(a, [-0.8017782, -1.2026673, -0.9354079, 0.8017782, -0.9354079, 0], TOL);
  });
  it('gamma 0.5: A~_t = r^_t + 0.5 A~_{t+1}', () => {
    const inp = turnCase();
    const a = advantageCpu(inp, opts({ estimator: 'turn', gamma: 0.5 }), inp.shape);
    // traj 0: A2 = -0.93541, A1 = -0.26726 - 0.46770 = -0.73496, A0 = 0.40089 - 0.36748 = 0.03341
    // traj 1: A1 = -0.93541, A0 = 1.73719 - 0.46770 = 1.26948
    expectClose(a, [0.0334074, -0.7349633, -0.9354079, 1.2694821, -0.9354079, 0], TOL);
  });
  it('separate pools: the equal finals normalize to exactly 0; IG pool mean 0.23333, std 0.1247230', () => {
    const inp = turnCase();
    const a = advantageCpu(inp, opts({ estimator: 'turn', gamma: 1, separate: true }), inp.shape);
    // IG r^ = [-0.26726, -1.06904 | 1.33630]
    expectClose(a, [-1.3362951, -1.0690361, 0, 1.3362951, 0, 0], TOL);
    expect(a[2]).toBe(0);
    expect(a[4]).toBe(0);
  });
  it('a pool of one value normalizes to 0 (its own mean, std 1), as the reference does', () => {
    const inp = { ...traj([0], [1], 2, { turns: Uint32Array.from([1]), turnReward: f32([0.7, 0]) }) };
    const a = advantageCpu(inp, opts({ estimator: 'turn' }), shapeOf(1, 2, { maxTurns: 2, actionLen: 1 }));
    expect(Array.from(a)).toEqual([0, 0]);
  });
  it('a gain of exactly 0 leaves the pool and is no turn boundary: that turn takes the next one\'s advantage', () => {
    // traj 0: v = [0.3, 0, 1] (turn 1 gained nothing); traj 1: v = [0.1, 0.2, 0]. Joint pool
    // {0.3, 1, 0.1, 0.2, 0}: mean 0.32, var_pop 0.1256, std sqrt(0.1256 + 1e-8) + 1e-6.
    const inp = traj([0, 0], [2], 3, { turns: Uint32Array.from([3, 3]), turnReward: f32([0.3, 0, 1, 0.1, 0.2, 0]) });
    const sd = Math.sqrt(0.1256 + 1e-8) + 1e-6;
    const r = (x: number) => (x - 0.32) / sd;
    const a = advantageCpu(inp, opts({ estimator: 'turn', gamma: 1 }), shapeOf(2, 3, { maxTurns: 3, actionLen: 1 }));
    expectClose(a, [r(0.3) + r(1), r(1), r(1), r(0.1) + r(0.2) + r(0), r(0.2) + r(0), r(0)], TOL);
  });
  it('a value that normalizes to exactly 0 is no turn boundary either: with gamma < 1 its turn takes the next advantage, undiscounted', () => {
    // Separate pools, gamma 0.5. traj 0: v = [0.3 (gain), 1 (final)]; traj 1: v = [0 (no gain), 0 (final)].
    // The gain pool {0.3} has one value, so 0.3 normalizes to 0 and turn 0 is no boundary (the
    // reference marks boundaries where the normalized reward is nonzero): it takes A~_1, not
    // 0 + 0.5 A~_1. Finals {1, 0}: mean 0.5, std sqrt(0.25 + 1e-8) + 1e-6.
    const inp = traj([0, 0], [2], 2, { turns: Uint32Array.from([2, 2]), turnReward: f32([0.3, 1, 0, 0]) });
    const f = 0.5 / (Math.sqrt(0.25 + 1e-8) + 1e-6);
    const a = advantageCpu(inp, opts({ estimator: 'turn', gamma: 0.5, separate: true }), shapeOf(2, 2, { maxTurns: 2, actionLen: 1 }));
    expectClose(a, [f, f, -f, -f], TOL);
  });
});

describe('turnGroup (CM2 turn level)', () => {
  // Group of three, T = 2, one row per turn; turns taken [2, 2, 1]; v: t0 [1, 0, 0.5], t1 [1, 0, -].
  const shape = shapeOf(3, 2, { maxTurns: 2, actionLen: 1 });
  const inp = traj([0, 0, 0], [3], 2, { turns: Uint32Array.from([2, 2, 1]), turnReward: f32([1, 1, 0, 0, 0.5, 9]) });
  it('without std: t0 mean 0.5, t1 mean 0.5 over the two members that took it', () => {
    const a = advantageCpu(inp, opts({ estimator: 'turnGroup', scaleStd: false }), shape);
    expectClose(a, [0.5, 0.5, -0.5, -0.5, 0, 0], TOL);
  });
  it('with unbiased std: t0 std 0.5, t1 std 0.70711', () => {
    const a = advantageCpu(inp, opts({ estimator: 'turnGroup' }), shape);
    expectClose(a, [1, Math.SQRT1_2, -1, -Math.SQRT1_2, 0, 0], EPS_TOL);
  });
  it('a turn only one member took uses mean 0 and std 1', () => {
    const one = traj([0, 0], [2], 2, { turns: Uint32Array.from([2, 1]), turnReward: f32([1, 0.3, 0, 0]) });
    const a = advantageCpu(one, opts({ estimator: 'turnGroup', scaleStd: false }), shapeOf(2, 2, { maxTurns: 2, actionLen: 1 }));
    expectClose(a, [0.5, 0.3, -0.5, 0], TOL);
  });
});

describe('gigpo', () => {
  it('A^E (no std) plus the anchor-group step advantage; an anchor set of one is its own mean', () => {
    // R = [1, 0] -> A^E = [0.5, -0.5]. v: traj 0 [0, 1], traj 1 [0, 0]; keys [7, 8], [7, 9]; gamma 0.5.
    // R^S: traj 0 [0.5, 1], traj 1 [0, 0]. Anchor 7 = {0.5, 0}, mean 0.25 -> A^S = +-0.25; keys 8, 9
    // are alone, each its own mean -> A^S = 0 (ARL-Arena's step_norm_reward). A = [0.75, 0.5 | -0.75, -0.5].
    const inp = traj([1, 0], [2], 2, {
      turns: Uint32Array.from([2, 2]),
      turnReward: f32([0, 1, 0, 0]),
      turnKey: Uint32Array.from([7, 8, 7, 9]),
    });
    const shape = shapeOf(2, 2, { maxTurns: 2, actionLen: 1 });
    const a = advantageCpu(inp, opts({ estimator: 'gigpo', scaleStd: false, gamma: 0.5 }), shape);
    expectClose(a, [0.75, 0.5, -0.75, -0.5], TOL);
    const w2 = advantageCpu(inp, opts({ estimator: 'gigpo', scaleStd: false, gamma: 0.5, stepWeight: 2 }), shape);
    expectClose(w2, [1, 0.5, -1, -0.5], TOL);
  });
  it('A^E is taken over the step rows: a member counts once per turn it took', () => {
    // traj 0 took 1 turn (R = 1), traj 1 took 3 (R = 0): rows {1, 0, 0, 0}, mean 0.25, not 0.5.
    // No step rewards and distinct keys: A^S = R^S = 0 everywhere.
    const inp = traj([1, 0], [2], 3, {
      turns: Uint32Array.from([1, 3]),
      turnReward: new Float32Array(6),
      turnKey: Uint32Array.from([1, 0, 0, 2, 3, 4]),
    });
    const a = advantageCpu(inp, opts({ estimator: 'gigpo', scaleStd: false }), shapeOf(2, 3, { maxTurns: 3, actionLen: 1 }));
    expectClose(a, [0.75, 0, 0, -0.25, -0.25, -0.25], TOL);
  });
});

describe('reinforce (REINFORCE++)', () => {
  // tp 4, mask [1, 1, 0, 1], R = 2, gamma 0.5, beta 0.1, logpOld - logpRef = [0.5, -1, x, 1]:
  // token rewards [-0.05, 0.1, -, -0.1 + 2]; returns G3 = 1.9, G1 = 0.1 + 0.95 = 1.05,
  // G0 = -0.05 + 0.525 = 0.475. With the baseline (group [2, 0], mean 1) R' = 1: G3 = 0.9, G1 = 0.55,
  // G0 = 0.225. Trajectory 1 (R = 0, rows [0.2, 0, 0, 0] kl) gets its own returns.
  const inp = traj([2, 0], [2], 4, {
    mask: f32([1, 1, 0, 1, 1, 0, 0, 0]),
    logpOld: f32([0.5, -1, 123, 1, 0.2, 0, 0, 0]),
    logpRef: new Float32Array(8),
  });
  const o = opts({ estimator: 'reinforce', gamma: 0.5, klInReward: 0.1 });
  it('KL-shaped reward-to-go over the masked rows', () => {
    expectClose(advantageCpu(inp, o, shapeOf(2, 4)), [0.475, 1.05, 0, 1.9, -0.02, 0, 0, 0], TOL);
  });
  it('with the group-mean baseline', () => {
    const a = advantageCpu(inp, { ...o, baseline: true }, shapeOf(2, 4));
    expectClose(a, [0.225, 0.55, 0, 0.9, -1.02, 0, 0, 0], TOL);
  });
});

describe('byRole (Dr. MAS)', () => {
  // Group of four, turns: role 0, role 1, none. Role 1 rewards are 5 x role 0 + 3.
  const base = [1, 0, 0.5, 0.2];
  const roleRewards = f32(base.flatMap((x) => [x, 5 * x + 3]));
  const shape = shapeOf(4, 3, { maxTurns: 3, actionLen: 1, nRoles: 2 });
  const inp = traj([0, 0, 0, 0], [4], 3, {
    turns: new Uint32Array(4).fill(3),
    turnRole: Int32Array.from([0, 1, -1, 0, 1, -1, 0, 1, -1, 0, 1, -1]),
    roleRewards,
  });
  for (const estimator of ['group', 'rloo', 'raw'] as const) {
    it(`${estimator}: each role normalized by its own column`, () => {
      const a = advantageCpu(inp, opts({ estimator, byRole: true }), shape);
      const solo = advantageCpu(traj(base, [4]), opts({ estimator }), shapeOf(4));
      for (let n = 0; n < 4; n++) {
        expect(a[n * 3]).toBeCloseTo(solo[n]!, 6);
        expect(a[n * 3 + 2]).toBe(0); // no role
        if (estimator === 'group') expect(a[n * 3 + 1]).toBeCloseTo(a[n * 3]!, 5); // scale and offset removed
        if (estimator === 'rloo') expect(a[n * 3 + 1]).toBeCloseTo(5 * a[n * 3]!, 5);
        if (estimator === 'raw') expect(a[n * 3 + 1]).toBeCloseTo(5 * base[n]! + 3, 5);
      }
    });
  }
  it('pools per agent step: a member counts once per turn it acted in the role', () => {
    // Roles: traj 0 [0, 0, 1], traj 1 [0, 1, 1]; role rewards traj 0 [1, 2], traj 1 [0, 4].
    // Role 0 pool {1, 1, 0}: mean 2/3, unbiased std sqrt(1/3). Role 1 pool {2, 4, 4}: mean 10/3,
    // std sqrt(4/3). So +-sqrt(1/3) and -2 sqrt(1/3) (the pool per trajectory would give +-0.70711).
    const two = traj([0, 0], [2], 3, {
      turns: Uint32Array.from([3, 3]),
      turnRole: Int32Array.from([0, 0, 1, 0, 1, 1]),
      roleRewards: f32([1, 2, 0, 4]),
    });
    const shape = shapeOf(2, 3, { maxTurns: 3, actionLen: 1, nRoles: 2 });
    const s = Math.sqrt(1 / 3);
    expectClose(advantageCpu(two, opts({ byRole: true }), shape), [s, s, -2 * s, -2 * s, s, s], EPS_TOL);
    // RLOO over the steps: x - (sum - x) / (c - 1); role 0: 1 - 1/2, 0 - 1; role 1: 2 - 4, 4 - 3.
    expectClose(advantageCpu(two, opts({ estimator: 'rloo', byRole: true }), shape), [0.5, 0.5, -2, -1, 1, 1], TOL);
  });
  it('hand case: column [1, 0] -> +-0.70711 and column [8, 3] -> +-0.70711', () => {
    const two = traj([0, 0], [2], 2, {
      turns: Uint32Array.from([2, 2]),
      turnRole: Int32Array.from([0, 1, 0, 1]),
      roleRewards: f32([1, 8, 0, 3]),
    });
    const a = advantageCpu(two, opts({ byRole: true }), shapeOf(2, 2, { maxTurns: 2, actionLen: 1, nRoles: 2 }));
    expectClose(a, [Math.SQRT1_2, Math.SQRT1_2, -Math.SQRT1_2, -Math.SQRT1_2], EPS_TOL);
  });
});

describe('entropyScale (EDGE-GRPO EDA)', () => {
  it('times Pbar / P_n, Pbar over the members with tokens; clamped to [0.1, 10] only as the variant', () => {
    // Group [1, 0] -> +-0.70711; P = [1, 4], Pbar 2.5 -> factors 2.5 and 0.625.
    const a = advantageCpu(traj([1, 0], [2], 1, { trajStats: stats({ entMean: [1, 4] }, 2) }), opts({ entropyScale: true }), shapeOf(2));
    expectClose(a, [2.5 * Math.SQRT1_2, -0.625 * Math.SQRT1_2], EPS_TOL);
    // A third, empty member (len 0, P 100) is left out of Pbar; P = 0.01 gives factor 200.5, or 10
    // with the clamp.
    const inp = traj([1, 0, 0.5], [3], 1, { mask: f32([1, 1, 0]), trajStats: stats({ entMean: [0.01, 4, 100], len: [1, 1, 0] }, 3) });
    const b = advantageCpu(inp, opts({ entropyScale: true, scaleStd: false }), shapeOf(3));
    expectClose(b, [0.5 * 200.5, -0.5 * (2.005 / 4), 0], TOL);
    const c = advantageCpu(inp, opts({ entropyScale: true, entropyClamp: true, scaleStd: false }), shapeOf(3));
    expectClose(c, [0.5 * 10, -0.5 * (2.005 / 4), 0], TOL);
  });
  it('applies to rloo and opob too', () => {
    const inp = traj([1, 0], [2], 1, { trajStats: stats({ entMean: [1, 4] }, 2) });
    expectClose(advantageCpu(inp, opts({ estimator: 'rloo', entropyScale: true }), shapeOf(2)), [2.5, -0.625], TOL);
    expectClose(advantageCpu(inp, opts({ estimator: 'opob', scaleStd: false, entropyScale: true }), shapeOf(2)), [1.25, -0.3125], TOL);
  });
});

describe('opob (VCPO)', () => {
  // R = [1, 0, 0], g2 = [1, 2, 1], logIS = [0, ln 2, 0], no std scaling.
  const inp = traj([1, 0, 0], [3], 1, { trajStats: stats({ g2: [1, 2, 1], logIS: [0, Math.log(2), 0] }, 3) });
  const o = opts({ estimator: 'opob', scaleStd: false });
  it('isCap 0: W = g2 = [1, 2, 1], b = 1/4, no IS factor', () => {
    expectClose(advantageCpu(inp, { ...o, isCap: 0 }, shapeOf(3)), [0.75, -0.25, -0.25], TOL);
  });
  it('isCap 4: W = w^2 g2 = [1, 8, 1], b = 0.1, then times min(w, 4) = [1, 2, 1]', () => {
    expectClose(advantageCpu(inp, { ...o, isCap: 4 }, shapeOf(3)), [0.9, -0.2, -0.1], TOL);
  });
  it('isCap 1.5 caps the IS factor at 1.5', () => {
    expectClose(advantageCpu(inp, { ...o, isCap: 1.5 }, shapeOf(3)), [0.9, -0.15, -0.1], TOL);
  });
  it('every g2 = 0: the plain group mean; a member with g2 = 0 has weight 0', () => {
    const z = traj([1, 0, 0], [3], 1, { trajStats: stats({ g2: [0, 0, 0] }, 3) });
    expectClose(advantageCpu(z, o, shapeOf(3)), [2 / 3, -1 / 3, -1 / 3], TOL);
    const one = traj([1, 0, 0], [3], 1, { trajStats: stats({ g2: [0, 1, 1], logIS: [50, 0, 0] }, 3) });
    expectClose(advantageCpu(one, { ...o, isCap: 2 }, shapeOf(3)), [1 * 2, 0, 0], TOL);
  });
  it('equal IS weights and equal g2 give the group-mean baseline (GRPO), with and without std', () => {
    const rng = createRng(5);
    const r = Array.from({ length: 12 }, () => rng.normal());
    const ts = stats({ g2: new Array(12).fill(0.7), logIS: new Array(12).fill(0) }, 12);
    for (const scaleStd of [true, false]) {
      const grpo = advantageCpu(traj(r, [4, 5, 3]), opts({ scaleStd }), shapeOf(12));
      for (const isCap of [0, 3]) {
        const a = advantageCpu(traj(r, [4, 5, 3], 1, { trajStats: ts }), opts({ estimator: 'opob', scaleStd, isCap }), shapeOf(12));
        expectClose(a, grpo, TOL);
      }
    }
  });
  it("VCPO's statistics: population std, no epsilon, no division where the std is at most 1e-8", () => {
    const o = opts({ estimator: 'opob', unbiasedStd: false, eps: 0, stdMin: 1e-8 });
    // [1, 0]: b 0.5, population std 0.5 -> exactly +-1.
    expect(Array.from(advantageCpu(traj([1, 0], [2], 1, { trajStats: stats({}, 2) }), o, shapeOf(2)))).toEqual([1, -1]);
    // [0, 1e-8]: std 5e-9 is below the floor, so A = R - b = +-5e-9, not +-1.
    expectClose(advantageCpu(traj([0, 1e-8], [2], 1, { trajStats: stats({}, 2) }), o, shapeOf(2)), [-5e-9, 5e-9], { atol: 1e-15, rtol: 1e-6 });
  });
  it('a group of one: b = 0, std 1', () => {
    expectClose(advantageCpu(traj([3], [1], 1, { trajStats: stats({}, 1) }), o, shapeOf(1)), [3], TOL);
  });
});

describe('trajStatsCpu', () => {
  it('count, mean entropy, clamped log IS and the gradient proxy over masked rows', () => {
    // Row 0: pi 0.5, sum p^2 0.5 -> w 0.5; row 1: pi 0.25, sum p^2 0.25 -> w 0.75; row 2 masked.
    // log IS: 0.1 + clamp(-30) = -19.9. Trajectory 1 has no masked rows.
    const s = trajStatsCpu(
      {
        mask: f32([1, 1, 0, 0, 0, 0]),
        logpOld: f32([Math.log(0.5), Math.log(0.25), 0, 0, 0, 0]),
        logpRollout: f32([Math.log(0.5) - 0.1, Math.log(0.25) + 30, 5, 0, 0, 0]),
        entropyOld: f32([1, 2, 9, 9, 9, 9]),
        sumP2Old: f32([0.5, 0.25, 0, 0, 0, 0]),
      },
      3,
    );
    expectClose(s.len, [2, 0], TOL);
    expectClose(s.entMean, [1.5, 0], TOL);
    expectClose(s.logIS, [-19.9, 0], TOL);
    expectClose(s.g2, [1.25, 0], TOL);
    const round = unpackTrajStats(packTrajStats(s), 2);
    expect(Array.from(round.g2)).toEqual(Array.from(s.g2));
  });
});

describe('tokenBaselineCpu (OTB)', () => {
  // R = [1, 0]; traj 0 masks [1, 1, 1] with w 0.5 (pi 0.5, sum p^2 0.5): W = [0.5, 1, 1.5];
  // traj 1 masks [1, 0, 1] with w 0.25 (pi 0.5, sum p^2 0.25): W = [0.25, 0.5] at positions 0, 1.
  // p0: B = 0.5 / 0.75 = 2/3; p1: B = 1 / 1.5 = 2/3; p2: only traj 0, B = 1.
  const h = Math.log(0.5);
  const inp = {
    reward: f32([1, 0]),
    ...groupLayout([2]),
    mask: f32([1, 1, 1, 1, 0, 1]),
    logpOld: f32([h, h, h, h, h, h]),
    sumP2Old: f32([0.5, 0.5, 0.5, 0.25, 0.25, 0.25]),
  };
  it('per-position weighted baseline over valid-token positions', () => {
    expectClose(tokenBaselineCpu(inp, 3), [1 / 3, 1 / 3, 0, -2 / 3, 0, -2 / 3], TOL);
  });
  it("zero tail (verl's multi-turn default): past the second-longest length the longest has baseline 0", () => {
    // Position 2 is traj 0's alone: A = R_0 - 0 = 1 instead of R_0 - R_0 = 0.
    expectClose(tokenBaselineCpu(inp, 3, true), [1 / 3, 1 / 3, 1, -2 / 3, 0, -2 / 3], TOL);
    // Two members of equal longest length: no tail to zero.
    const tie = { ...inp, mask: f32([1, 1, 1, 1, 1, 1]) };
    expect(Array.from(tokenBaselineCpu(tie, 3, true))).toEqual(Array.from(tokenBaselineCpu(tie, 3)));
  });
  it('a group of one gives A = R; an empty mask gives 0', () => {
    const one = { ...inp, ...groupLayout([1, 1]) };
    expectClose(tokenBaselineCpu(one, 3), [1, 1, 1, 0, 0, 0], TOL);
    expect(Array.from(tokenBaselineCpu({ ...inp, mask: new Float32Array(6) }, 3))).toEqual([0, 0, 0, 0, 0, 0]);
  });
});

describe('whitenCpu', () => {
  it('masked mean 2, unbiased var 1: [-1, 0, 1] / sqrt(1 + 1e-8); unmasked rows 0', () => {
    expectClose(whitenCpu(f32([1, 2, 3, 100]), f32([1, 1, 1, 0])), [-1, 0, 1, 0], TOL);
  });
  it('one masked row keeps A - mean = 0; none gives all 0', () => {
    expect(Array.from(whitenCpu(f32([5, 7]), f32([0, 1])))).toEqual([0, 0]);
    expect(Array.from(whitenCpu(f32([5, 7]), f32([0, 0])))).toEqual([0, 0]);
  });
});

describe('every estimator', () => {
  /** Two real groups (sizes 3 and 2) and one padding trajectory: a group of one with no mask. */
  function mixed(rewardScale: number, logIS: number, g2: number): { inp: AdvantageInputs; shape: AdvantageShape } {
    const rng = createRng(11);
    const N = 6;
    const T = 2;
    const aL = 2;
    const tp = T * aL;
    const mask = Float32Array.from({ length: N * tp }, (_, i) => (i >= 5 * tp ? 0 : rng.next() < 0.8 ? 1 : 0));
    const inp: AdvantageInputs = {
      reward: Float32Array.from({ length: N }, (_, n) => (n % 2 ? -1 : 1) * rewardScale * (n < 5 ? 1 : 0)),
      ...groupLayout([3, 2, 1]),
      turns: Uint32Array.from([2, 1, 2, 2, 2, 0]),
      turnReward: Float32Array.from({ length: N * T }, () => rewardScale * (rng.next() - 0.5)),
      turnRole: Int32Array.from({ length: N * T }, () => rng.int(2)),
      turnKey: Uint32Array.from({ length: N * T }, () => rng.int(2)),
      roleRewards: Float32Array.from({ length: N * 2 }, () => rewardScale * rng.normal()),
      trajStats: stats({ logIS: [logIS, -logIS, 0, logIS, -logIS, 0], g2: new Array(N).fill(g2), entMean: [0, 1, 2, 0, 5, 0] }, N),
      mask,
      logpOld: Float32Array.from({ length: N * tp }, () => -20 * rng.next()),
      logpRef: Float32Array.from({ length: N * tp }, () => -20 * rng.next()),
    };
    return { inp, shape: { numTraj: N, tp, maxTurns: T, actionLen: aL, nRoles: 2 } };
  }
  const variants: Array<Partial<AdvantageOptions>> = ADV_ESTIMATORS.flatMap((estimator) => [
    { estimator },
    { estimator, scaleStd: false, byRole: true, entropyScale: true, separate: true, baseline: true, klInReward: 0.5, isCap: 5, gamma: 0.9 },
  ]);
  it('the padding trajectory (group of one, empty mask) and masked rows are exactly 0', () => {
    const { inp, shape } = mixed(1, 3, 1);
    for (const v of variants) {
      const a = advantageCpu(inp, opts(v), shape);
      for (let i = 0; i < a.length; i++) if (inp.mask[i] === 0) expect(a[i], `${JSON.stringify(v)} row ${i}`).toBe(0);
    }
  });
  it('extremes stay finite: rewards +-1e4, log IS +-1000, g2 = 0 or 1e-30, entropy 0', () => {
    for (const [scale, lis, g2] of [[1e4, 1000, 0], [1e4, -1000, 1e-30], [1e-4, 1000, 1e30]] as const) {
      const { inp, shape } = mixed(scale, lis, g2);
      for (const v of variants) {
        const a = advantageCpu(inp, opts(v), shape);
        expect(a.every(Number.isFinite), `${JSON.stringify(v)} scale ${scale} logIS ${lis} g2 ${g2}`).toBe(true);
      }
    }
  });
  it('rejects missing inputs and trajectories outside their group', () => {
    const { inp, shape } = mixed(1, 0, 1);
    expect(() => advantageCpu({ ...inp, turnReward: undefined }, opts({ estimator: 'turn' }), shape)).toThrow(/turnReward/);
    expect(() => advantageCpu({ ...inp, trajStats: undefined }, opts({ estimator: 'opob' }), shape)).toThrow(/trajStats/);
    const bad = { ...inp, groupStart: Uint32Array.from([0, 0, 0, 3, 3, 4]) };
    expect(() => advantageCpu(bad, opts({}), shape)).toThrow(/not in its group/);
  });
});

describe('packing', () => {
  it('packTrajIn and packTurnIn lay out the WGSL structs', () => {
    const w = packTrajIn({ reward: f32([1.5, -2]), ...groupLayout([2]), turns: Uint32Array.from([3, 1]) });
    const f = new Float32Array(w.buffer);
    expect([f[0], w[1], w[2], w[3], f[4], w[5], w[6], w[7]]).toEqual([1.5, 0, 2, 3, -2, 0, 2, 1]);
    const t = packTurnIn({ turnReward: f32([0.25]), turnRole: Int32Array.from([-1]), turnKey: Uint32Array.from([9]) }, 1, 1);
    expect([new Float32Array(t.buffer)[0], new Int32Array(t.buffer)[1], t[2]]).toEqual([0.25, -1, 9]);
  });
});
