/**
 * The reward stage's inputs built on the host (workers/core/turnRewards.ts) against their plain
 * definitions: PPO's critic state keys (the hash chain over the row's last `context` tokens of its
 * own trajectory, 0 before its start, modulo the table size; rows outside the loss mask get 0) and
 * IGPO's teacher-forced answer contexts (each row's tokens before turn k, then the answer in turn
 * k's action slots, PAD after; the answer span's flat positions).
 */
import { describe, expect, it } from 'vitest';
import { PAD } from '../../workers/core/envs/types';
import { createRng, pcgHash } from '../../workers/core/rng';
import { answerContexts, stateKeys } from '../../workers/core/turnRewards';

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

describe('answerContexts', () => {
  it('each (row, turn) context: the row before the turn, then the answer; the span\'s positions', () => {
    const l = { N: 5, L: 4 + 3 * (3 + 2), Tp: 9, maxTurns: 3, actionLen: 3, obsLen: 2, promptLen: 4 };
    const rng = createRng(3);
    const seq = Int32Array.from({ length: l.N * l.L }, () => 1 + rng.int(20));
    const answer = Int32Array.from({ length: l.N * l.actionLen }, () => 30 + rng.int(5));
    const span = Uint8Array.of(0, 1, 1);
    const got = answerContexts(seq, answer, span, l);
    expect(got.spanLen).toBe(2);
    for (let n = 0; n < l.N; n++) {
      for (let k = 0; k < l.maxTurns; k++) {
        const c = n * l.maxTurns + k;
        const start = l.promptLen + k * (l.actionLen + l.obsLen);
        const want = [
          ...seq.subarray(n * l.L, n * l.L + start),
          ...answer.subarray(n * l.actionLen, (n + 1) * l.actionLen),
          ...new Array<number>(l.L - start - l.actionLen).fill(PAD),
        ];
        expect(Array.from(got.seqs.subarray(c * l.L, (c + 1) * l.L)), `row ${n} turn ${k}`).toEqual(want);
        expect(Array.from(got.rows.subarray(2 * c, 2 * c + 2))).toEqual([c * l.L + start + 1, c * l.L + start + 2]);
      }
    }
  });
});
