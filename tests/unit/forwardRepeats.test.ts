/**
 * forwardCpu computes each distinct row once (its context tokens and previous token, rowContext in
 * kernels/model/mlp.ts) and copies the result to the rows that repeat it. Checked bit for bit against the
 * textbook forward: on rows that repeat most of the time, on rows that differ only in what the
 * copy must not ignore (the previous token, a context token past the vocabulary, the start of a
 * sequence), and on two different contexts whose hashes collide. tokenStatsCpu, given firstOf,
 * computes a repeated row's log-sum-exp, entropy and sum of squares once: the same bits too. With a
 * row memo (the CPU backend keeps one per parameter set), a row an earlier call computed is copied
 * from it: the same bits again, also when the earlier call read other sequences.
 */
import { describe, expect, it } from 'vitest';
import { backwardCpu, forwardCpu, initParams, rowContext, rowMemo, type MlpDims } from '../../kernels/model/mlp';
import { tokenStatsCpu } from '../../kernels/softmax/tokenStats';
import { createRng } from '../../workers/core/rng';
import { forwardPlain } from '../../kernels/model/mlpPlain';
import { expectSameBits } from '../helpers/expectClose';

function setup(dims: MlpDims, seed: number) {
  const rng = createRng(seed);
  const p = initParams(dims, rng);
  for (let i = 0; i < p.length; i++) p[i]! += 0.3 * rng.normal();
  // Token 0 (PAD) is allowed after anything, so no row is fully masked; the rest at random.
  const grammar = new Uint8Array((dims.V + 3) * dims.V).map((_, i) => (i % dims.V === 0 || rng.next() < 0.6 ? 1 : 0));
  return { p, rng, grammar };
}

/** N random sequences of length L, and a row for every position after the first. */
function randomRows(rng: ReturnType<typeof createRng>, V: number, N: number, L: number) {
  const seq = new Int32Array(N * L).map(() => rng.int(V));
  const rowPos = Uint32Array.from({ length: N * (L - 1) }, (_, r) => Math.floor(r / (L - 1)) * L + 1 + (r % (L - 1)));
  return { seq, rowPos };
}

describe('forwardCpu: repeated rows', () => {
  it('rows that mostly repeat (3 tokens, 2 of context): the textbook forward, bit for bit', () => {
    const dims: MlpDims = { V: 3, K: 2, D: 3, H: 11 };
    const { p, rng, grammar } = setup(dims, 7);
    const L = 10;
    const { seq, rowPos } = randomRows(rng, dims.V, 40, L);
    const got = forwardCpu(p, dims, seq, L, rowPos, grammar, 0.9);
    const want = forwardPlain(p, dims, seq, L, rowPos, grammar, 0.9);
    expectSameBits(got.h, want.h, 'h');
    expectSameBits(got.z, want.z, 'z');
    // Most rows here are repeats: at most 3^2 distinct contexts (the previous token is the last
    // context token) in 360 rows.
    const firsts = new Set(got.firstOf);
    expect(firsts.size).toBeLessThanOrEqual(9);
    got.firstOf.forEach((f, r) => expect(f).toBeLessThanOrEqual(r));
    const once = tokenStatsCpu(got.z, dims.V, seq, rowPos, got.firstOf);
    const every = tokenStatsCpu(got.z, dims.V, seq, rowPos);
    expectSameBits(once.logp, every.logp, 'logp');
    expectSameBits(once.entropy, every.entropy, 'entropy');
    expectSameBits(once.sumP2, every.sumP2, 'sumP2');
  });

  it('a row repeats another only if every token it reads is the same', () => {
    const dims: MlpDims = { V: 5, K: 2, D: 2, H: 6 };
    const { p, grammar } = setup(dims, 11);
    // Grammar rows 5 and 7 (tokens past the vocabulary): everything allowed, only PAD allowed.
    grammar.fill(1, 5 * 5, 6 * 5);
    grammar.fill(0, 7 * 5, 8 * 5);
    grammar[7 * 5] = 1;
    const L = 6;
    // Rows 0 and 1 differ only in their previous token, outside the vocabulary (5 and 7 both read
    // as PAD in the context, but choose different grammar rows). The others repeat one another:
    // a sequence's start read as PAD against a written PAD (positions 1 and 15), and the same
    // tokens in other sequences.
    const seq = Int32Array.from([
      0, 2, 5, 1, 2, 3,
      0, 2, 7, 1, 2, 3,
      4, 0, 0, 1, 2, 3,
      4, 1, 0, 1, 2, 3,
    ]);
    const rowPos = Uint32Array.from([3, 9, 1, 13, 15, 19, 5, 11, 23]);
    const got = forwardCpu(p, dims, seq, L, rowPos, grammar, 1);
    const want = forwardPlain(p, dims, seq, L, rowPos, grammar, 1);
    expectSameBits(got.h, want.h, 'h');
    expectSameBits(got.z, want.z, 'z');
    // Rows 0 and 1 (positions 3 and 9) share h but not z.
    expectSameBits(got.h.subarray(6, 12), got.h.subarray(0, 6), 'rows 0 and 1, h');
    expect(Array.from(got.z.subarray(5, 10))).not.toEqual(Array.from(got.z.subarray(0, 5)));
  });

  it('two different contexts with the same hash are both computed', () => {
    const dims: MlpDims = { V: 1024, K: 3, D: 2, H: 5 };
    const { p, rng, grammar } = setup(dims, 13);
    const L = 8;
    // A birthday search for two contexts with one 32-bit hash: ~5 expected in 2e5 random ones
    // out of 1024^3.
    const probe = new Int32Array(L);
    const ctx = new Int32Array(dims.K + 1);
    const byHash = new Map<number, number[]>();
    let pair: [number[], number[]] | null = null;
    for (let i = 0; i < 400_000 && !pair; i++) {
      const t = [rng.int(dims.V), rng.int(dims.V), rng.int(dims.V)];
      probe.set(t, 0);
      const key = rowContext(probe, 3, L, dims.K, dims.V, ctx);
      const seen = byHash.get(key);
      if (seen && seen.join() !== t.join()) pair = [seen, t];
      else byHash.set(key, t);
    }
    expect(pair, 'a hash collision among 400,000 random contexts').not.toBeNull();
    const [a, b] = pair!;
    // Sequence 0 holds context a, sequence 1 context b; rows: a, b, a again, b again.
    const seq = Int32Array.from([...a, 1, 2, 3, 4, 5, ...b, 1, 2, 3, 4, 5]);
    const rowPos = Uint32Array.from([3, L + 3, 3, L + 3]);
    expect(rowContext(seq, 3, L, dims.K, dims.V, ctx)).toBe(rowContext(seq, L + 3, L, dims.K, dims.V, ctx));
    const got = forwardCpu(p, dims, seq, L, rowPos, grammar, 1);
    const want = forwardPlain(p, dims, seq, L, rowPos, grammar, 1);
    expectSameBits(got.h, want.h, 'h');
    expectSameBits(got.z, want.z, 'z');
    expect(Array.from(got.h.subarray(5, 10))).not.toEqual(Array.from(got.h.subarray(0, 5)));
  });
});

describe('forwardCpu: rows kept from earlier calls (rowMemo)', () => {
  it('calls over overlapping rows of changing sequences: the textbook forward, bit for bit', () => {
    const dims: MlpDims = { V: 4, K: 2, D: 3, H: 9 };
    const { p, rng, grammar } = setup(dims, 17);
    const L = 9;
    const memo = rowMemo();
    let hits = 0;
    for (let call = 0; call < 12; call++) {
      // Fresh sequences each call, as a rollout writes tokens between its forwards.
      const { seq, rowPos } = randomRows(rng, dims.V, 3 + (call % 4), L);
      const before = memo.n;
      const got = forwardCpu(p, dims, seq, L, rowPos, grammar, 0.8, undefined, undefined, memo);
      const want = forwardPlain(p, dims, seq, L, rowPos, grammar, 0.8);
      expectSameBits(got.h, want.h, `call ${call} h`);
      expectSameBits(got.z, want.z, `call ${call} z`);
      const distinct = new Set(got.firstOf).size;
      hits += distinct - (memo.n - before);
    }
    // The previous token is the last context token: at most 4^2 distinct rows.
    expect(memo.n).toBeLessThanOrEqual(16);
    expect(hits).toBeGreaterThan(0);
  });

  it('a kept row with the same hash but other tokens is not copied', () => {
    const dims: MlpDims = { V: 1024, K: 3, D: 2, H: 5 };
    const { p, rng, grammar } = setup(dims, 19);
    const L = 8;
    const probe = new Int32Array(L);
    const ctx = new Int32Array(dims.K + 1);
    const byHash = new Map<number, number[]>();
    let pair: [number[], number[]] | null = null;
    for (let i = 0; i < 400_000 && !pair; i++) {
      const t = [rng.int(dims.V), rng.int(dims.V), rng.int(dims.V)];
      probe.set(t, 0);
      const key = rowContext(probe, 3, L, dims.K, dims.V, ctx);
      const seen = byHash.get(key);
      if (seen && seen.join() !== t.join()) pair = [seen, t];
      else byHash.set(key, t);
    }
    expect(pair, 'a hash collision among 400,000 random contexts').not.toBeNull();
    const memo = rowMemo();
    // One call keeps context a; the next reads b (same hash), then a.
    for (const [first, rows] of [[pair![0], [3]], [pair![1], [3]], [pair![0], [3, 3]]] as Array<[number[], number[]]>) {
      const seq = Int32Array.from([...first, 1, 2, 3, 4, 5]);
      const rowPos = Uint32Array.from(rows);
      const got = forwardCpu(p, dims, seq, L, rowPos, grammar, 1, undefined, undefined, memo);
      const want = forwardPlain(p, dims, seq, L, rowPos, grammar, 1);
      expectSameBits(got.h, want.h, `${first} h`);
      expectSameBits(got.z, want.z, `${first} z`);
    }
  });
});

describe('progress of the long CPU loops', () => {
  it('forward and backward call progress every 1,024 rows (repeated rows included) and give the same bits', () => {
    const dims: MlpDims = { V: 4, K: 2, D: 3, H: 8 };
    const { p, rng, grammar } = setup(dims, 5);
    const L = 11;
    const { seq, rowPos } = randomRows(rng, dims.V, 300, L);
    const R = rowPos.length;
    let calls = 0;
    const f = forwardCpu(p, dims, seq, L, rowPos, grammar, 1, undefined, () => calls++);
    expect(calls).toBe(Math.floor(R / 1024));
    const quiet = forwardCpu(p, dims, seq, L, rowPos, grammar, 1);
    expectSameBits(f.z, quiet.z, 'z');
    // Every row's gradient nonzero: headGrad, hiddenDa and slotGrad each report per 1,024 rows.
    const dz = new Float32Array(R * dims.V).map(() => rng.normal());
    calls = 0;
    const g = backwardCpu(p, dims, seq, L, rowPos, f.h, dz, () => calls++);
    expect(calls).toBe(3 * Math.floor(R / 1024));
    expectSameBits(g, backwardCpu(p, dims, seq, L, rowPos, f.h, dz), 'gradient');
  });
});
