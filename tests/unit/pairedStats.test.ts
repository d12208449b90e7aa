import { describe, expect, it } from 'vitest';
import { pairedDiff, t975, verdict } from '../../cli/pairedStats';

describe('paired differences over seeds', () => {
  const base = [0.1, 0.2, 0.15, 0.3, 0.25, 0.2, 0.1, 0.05];

  it('t interval: mean ± t(n-1) sd / sqrt(n) of the per-seed differences', () => {
    const d = [0.05, 0.1, 0.02, 0.08, 0.06, 0.04, 0.09, 0.03];
    const r = pairedDiff(base, base.map((b, i) => b + d[i]!), 't');
    const mean = d.reduce((a, b) => a + b, 0) / 8;
    const sd = Math.sqrt(d.reduce((a, x) => a + (x - mean) ** 2, 0) / 7);
    expect(r.mean).toBeCloseTo(mean, 12);
    expect(r.hi - r.mean).toBeCloseTo((2.365 * sd) / Math.sqrt(8), 12);
    expect(verdict(r, 1)).toBe('✓');
    expect(verdict(r, -1)).toBe('✗');
    expect(verdict(r, 0)).toBe('ref');
  });

  it('pairs by seed: a shift shared by both runs of a seed is not noise', () => {
    // Large spread across seeds, the same small gain on each: unpaired it would be within noise.
    const a = [0.1, 0.9, 0.4, 0.6, 0.2, 0.8, 0.3, 0.7];
    const r = pairedDiff(a, a.map((x) => x + 0.01), 't');
    expect(r.lo).toBeGreaterThan(0);
    const noisy = pairedDiff(a, [0.2, 0.8, 0.45, 0.5, 0.3, 0.85, 0.2, 0.75], 't');
    expect(verdict(noisy, 1)).toBe('~');
  });

  it('bootstrap: seeded (the same interval every run), inside the range of the differences', () => {
    const m = [0.2, 0.1, 0.3, 0.35, 0.2, 0.3, 0.15, 0.05];
    const a = pairedDiff(base, m, 'bootstrap');
    expect(pairedDiff(base, m, 'bootstrap')).toEqual(a);
    const d = m.map((x, i) => x - base[i]!);
    expect(a.lo).toBeGreaterThanOrEqual(Math.min(...d));
    expect(a.hi).toBeLessThanOrEqual(Math.max(...d));
    expect(a.lo).toBeLessThanOrEqual(a.mean);
    expect(a.hi).toBeGreaterThanOrEqual(a.mean);
  });

  it('refuses what cannot be paired, by name', () => {
    expect(() => pairedDiff([1, 2], [1], 't')).toThrow(/pair them by seed/);
    expect(() => pairedDiff([1], [1], 't')).toThrow(/at least 2 seeds/);
    expect(() => pairedDiff([1, NaN], [1, 2], 't')).toThrow(/not finite/);
    expect(() => t975(0)).toThrow(/degrees of freedom/);
    expect(t975(7)).toBe(2.365);
  });
});
