/**
 * The ratio plan (workers/core/plan.ts RatioPlan): each ratio mode carries its own parameters under
 * their own names, and ratioSlots is the one place they become the loss kernel's three numbers.
 */
import { describe, expect, it } from 'vitest';
import { defaultConfig, withFieldText } from '../../workers/core/config';
import { logRatioBounds, ratioSlots, resolvePlan, type RatioPlan } from '../../workers/core/plan';

const planOf = (methods: string) => resolvePlan(withFieldText(defaultConfig(), 'methods', methods)).ratio;

describe('the ratio plan of each ratio mode', () => {
  it("each method's mode has its own fields", () => {
    expect(planOf('grpo')).toEqual({ mode: 'token', clipLow: 0.2, clipHigh: 0.2, dualClip: 3 });
    expect(planOf('grpo,dapo')).toEqual({ mode: 'token', clipLow: 0.2, clipHigh: 0.28, dualClip: 3 });
    expect(planOf('vcpo')).toEqual({ mode: 'token', clipLow: 1, clipHigh: 1e9, dualClip: 1e9 });
    expect(planOf('grpo,gspo')).toEqual({ mode: 'sequence', clipLow: 3e-4, clipHigh: 4e-4 });
    expect(planOf('sampo')).toEqual({ mode: 'step', clipLow: 0.003, clipHigh: 0.004 });
    expect(planOf('grpo,seeupo')).toEqual({ mode: 'turn', clipLow: 0.2, clipHigh: 0.2 });
    expect(planOf('grpo,gmpo')).toEqual({ mode: 'geometric', logClipLow: 0.4, logClipHigh: 0.4 });
    expect(planOf('grpo,cispo')).toEqual({ mode: 'cispo', weightLow: 0.2, weightHigh: 0.2 });
    expect(planOf('grpo,sapo')).toEqual({ mode: 'sapo', tauPos: 1, tauNeg: 1.05 });
  });

  it('ratioSlots puts each mode in the slots its kernel mode reads; only the token mode has a dual clip', () => {
    const cases: Array<[RatioPlan, [number, number, number]]> = [
      [{ mode: 'token', clipLow: 0.2, clipHigh: 0.28, dualClip: 3 }, [0.2, 0.28, 3]],
      [{ mode: 'sequence', clipLow: 3e-4, clipHigh: 4e-4 }, [3e-4, 4e-4, 1e9]],
      [{ mode: 'geometric', logClipLow: 0.4, logClipHigh: 0.5 }, [0.4, 0.5, 1e9]],
      [{ mode: 'cispo', weightLow: 0.1, weightHigh: 0.3 }, [0.1, 0.3, 1e9]],
      [{ mode: 'sapo', tauPos: 1, tauNeg: 1.05 }, [1, 1.05, 1e9]],
    ];
    for (const [r, [clipLow, clipHigh, dualClip]] of cases) expect(ratioSlots(r), r.mode).toEqual({ clipLow, clipHigh, dualClip });
  });

  it('logRatioBounds: the ratio clips in log space, GMPO its own bounds, SAPO none', () => {
    expect(logRatioBounds({ mode: 'token', clipLow: 0.2, clipHigh: 0.28, dualClip: 3 })).toEqual([Math.log(0.8), Math.log(1.28)]);
    expect(logRatioBounds({ mode: 'token', clipLow: 1, clipHigh: 1e9, dualClip: 1e9 })[0]).toBe(-Infinity);
    expect(logRatioBounds({ mode: 'cispo', weightLow: 0.1, weightHigh: 0.3 })).toEqual([Math.log(0.9), Math.log(1.3)]);
    expect(logRatioBounds({ mode: 'geometric', logClipLow: 0.4, logClipHigh: 0.5 })).toEqual([-0.4, 0.5]);
    expect(logRatioBounds({ mode: 'sapo', tauPos: 1, tauNeg: 1.05 })).toEqual([-Infinity, Infinity]);
  });
});
