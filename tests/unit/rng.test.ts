import { describe, expect, it } from 'vitest';
import { createRng, hashUniform, pcgHash } from '../../workers/core/rng';

describe('rng', () => {
  it('pcgHash matches the reference PCG-RXS-M-XS values (same bits as the WGSL)', () => {
    // Values from the C reference of Jarzynski & Olano's pcg_hash, computed with uint32 arithmetic.
    const ref = (v: number) => {
      const state = BigInt.asUintN(32, BigInt(v) * 747796405n + 2891336453n);
      const word = BigInt.asUintN(32, ((state >> ((state >> 28n) + 4n)) ^ state) * 277803737n);
      return Number((word >> 22n) ^ word);
    };
    for (const v of [0, 1, 2, 12345, 0xffffffff, 0x80000000]) expect(pcgHash(v)).toBe(ref(v));
  });

  it('hashUniform is in [0, 1), deterministic, and differs across counters', () => {
    const seen = new Set<number>();
    for (let i = 0; i < 1000; i++) {
      const u = hashUniform(7, 3, i, 0);
      expect(u).toBeGreaterThanOrEqual(0);
      expect(u).toBeLessThan(1);
      expect(hashUniform(7, 3, i, 0)).toBe(u);
      seen.add(u);
    }
    expect(seen.size).toBeGreaterThan(990);
    let mean = 0;
    for (let i = 0; i < 10000; i++) mean += hashUniform(1, 2, i, 5) / 10000;
    expect(Math.abs(mean - 0.5)).toBeLessThan(0.02);
  });

  it('createRng streams are reproducible by seed and forks are independent', () => {
    const a = createRng(42);
    const b = createRng(42);
    const xs = Array.from({ length: 5 }, () => a.next());
    expect(Array.from({ length: 5 }, () => b.next())).toEqual(xs);
    expect(createRng(42).fork(1).next()).not.toBe(createRng(42).fork(2).next());
    const r = createRng(1);
    for (let i = 0; i < 100; i++) {
      const k = r.int(5);
      expect(Number.isInteger(k) && k >= 0 && k < 5).toBe(true);
    }
  });
});
