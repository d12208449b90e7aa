/**
 * PPO's critic state keys (workers/turnRewards.ts stateKeys) against the plain definition: the hash
 * chain over the row's last `context` tokens of its own trajectory (0 before its start), taken
 * modulo the table size; rows outside the loss mask get 0.
 */
import { describe, expect, it } from 'vitest';
import { createRng, pcgHash } from '../../workers/rng';
import { stateKeys } from '../../workers/turnRewards';

function reference(seq: Int32Array, rowPos: Uint32Array, mask: Float32Array, L: number, context: number, size: number): number[] {
  return Array.from(rowPos, (pos, r) => {
    if (mask[r] === 0) return 0;
    const start = pos - (pos % L);
    let h = pcgHash(0x5a7e);
    for (let k = 1; k <= context; k++) h = pcgHash((h ^ (pos - k >= start ? seq[pos - k]! + 1 : 0)) >>> 0);
    return h % size;
  });
}

function batch(N: number, L: number, Tp: number, seed: number) {
  const rng = createRng(seed);
  const seq = Int32Array.from({ length: N * L }, () => rng.int(23) - 1); // PAD (-1) included
  // Policy rows from position 2 on, some near the start of their trajectory (short contexts).
  const rowPos = Uint32Array.from({ length: N * Tp }, (_, r) => Math.floor(r / Tp) * L + 2 + (r % Tp) * 3);
  const mask = Float32Array.from({ length: N * Tp }, () => (rng.next() < 0.7 ? 1 : 0));
  return { seq, rowPos, mask };
}

describe('stateKeys', () => {
  for (const [context, size] of [[8, 4096], [3, 97], [32, 1]] as const) {
    it(`context ${context}, table ${size}: the plain definition's keys, 0 outside the mask`, () => {
      const L = 30;
      const Tp = 9;
      const { seq, rowPos, mask } = batch(50, L, Tp, context * 1000 + size);
      const keys = stateKeys(seq, rowPos, mask, L, context, size);
      expect(Array.from(keys)).toEqual(reference(seq, rowPos, mask, L, context, size));
      expect(keys.every((k) => k < size)).toBe(true);
      expect(keys.filter((_, r) => mask[r] === 0).every((k) => k === 0)).toBe(true);
    });
  }
  it('a row sees only its own trajectory: the previous one\'s tokens do not change its key', () => {
    const L = 10;
    const seq = Int32Array.from({ length: 2 * L }, (_, i) => i % 7);
    const rowPos = Uint32Array.of(L + 1);
    const one = Float32Array.of(1);
    const before = stateKeys(seq, rowPos, one, L, 8, 4096)[0];
    seq.fill(5, 0, L);
    expect(stateKeys(seq, rowPos, one, L, 8, 4096)[0]).toBe(before);
    seq[L] = 6;
    expect(stateKeys(seq, rowPos, one, L, 8, 4096)[0]).not.toBe(before);
  });
  it('no rows: no keys', () => {
    expect(stateKeys(new Int32Array(0), new Uint32Array(0), new Float32Array(0), 10, 8, 4096)).toHaveLength(0);
  });
});
