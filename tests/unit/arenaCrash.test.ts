/** The crash definition (workers/content/arena/crash.ts, docs/ARENA.md) on hand-made success series. */
import { describe, expect, it } from 'vitest';
import { detectCrash, type CrashRow } from '../../workers/content/arena/crash';

const rows = (success: number[], extra: Partial<Record<number, Partial<CrashRow>>> = {}): CrashRow[] =>
  success.map((s, i) => ({ iter: i + 1, success_rate: s, entropy: 0.5, loss: 0.1, grad_norm: 1, ...extra[i + 1] }));

describe('detectCrash', () => {
  it('a climb to 0.8 then a fall to 0.1 that lasts: crashed at the first fallen smoothed iteration', () => {
    const s = [...Array(10).fill(0.8), ...Array(10).fill(0.1)];
    const c = detectCrash(rows(s));
    // Window 5: iteration 12's mean is (0.8 x 3 + 0.1 x 2) / 5 = 0.52, 13's is 0.38 < 0.5 x 0.8.
    expect(c).toMatchObject({ crashed: true, at: 13 });
    expect(c.why).toMatch(/best 0\.800/);
  });
  it('a dip shorter than the hold, then recovery: no crash', () => {
    const s = [...Array(10).fill(0.8), 0, 0, 0, ...Array(10).fill(0.8)];
    // Smoothed: 13 -> 0.32, 14 -> 0.32, 15 -> 0.32, 16 -> 0.48, 17 -> 0.64: three fallen iterations.
    expect(detectCrash(rows(s)).crashed).toBe(false);
    expect(detectCrash(rows(s), { hold: 3 })).toMatchObject({ crashed: true, at: 13 });
  });
  it('a run that never learned does not crash, however it wobbles', () => {
    expect(detectCrash(rows(Array(40).fill(0))).crashed).toBe(false);
    expect(detectCrash(rows(Array.from({ length: 40 }, (_, i) => (i % 3 === 0 ? 0.25 : 0.02)))).crashed).toBe(false);
  });
  it('a fall after the run ends too soon to hold is not a crash', () => {
    expect(detectCrash(rows([...Array(10).fill(0.8), 0, 0, 0, 0])).crashed).toBe(false);
  });
  it('a non-finite loss or gradient norm, or the trainer stopping on one, is a crash at that iteration', () => {
    const s = Array(12).fill(0.5);
    expect(detectCrash(rows(s, { 7: { loss: NaN } }))).toMatchObject({ crashed: true, at: 7 });
    expect(detectCrash(rows(s, { 9: { grad_norm: Infinity } }))).toMatchObject({ crashed: true, at: 9 });
    expect(detectCrash(rows(s), { nonFiniteAt: 13 })).toMatchObject({ crashed: true, at: 13, why: expect.stringMatching(/non-finite/) });
    // A fall that came first is the crash.
    expect(detectCrash(rows([...Array(10).fill(0.8), ...Array(10).fill(0)]), { nonFiniteAt: 20 }).at).toBe(13);
  });
  it('an entropy collapse with low success is a crash; one on right answers is convergence', () => {
    const collapse = (success: number) => rows(Array(20).fill(success)).map((r, i) => ({ ...r, entropy: i < 6 ? 0.8 : 0.01 }));
    // Entropy 0.01 from iteration 7; window 5: the mean is (0.8 + 4 x 0.01) / 5 = 0.168 at 10, 0.01 at 11.
    expect(detectCrash(collapse(0.1))).toMatchObject({ crashed: true, at: 11, why: expect.stringMatching(/entropy/) });
    expect(detectCrash(collapse(0.9)).crashed).toBe(false);
    // Low entropy for fewer than hold iterations: no crash.
    expect(detectCrash(rows(Array(20).fill(0.1)).map((r, i) => ({ ...r, entropy: i >= 8 && i < 12 ? 0 : 0.5 }))).crashed).toBe(false);
  });
  it('refuses options that define nothing', () => {
    expect(() => detectCrash(rows([0.5]), { frac: 1 })).toThrow(/frac/);
    expect(() => detectCrash(rows([0.5]), { hold: 0 })).toThrow(/hold/);
  });
});
