/**
 * The CPU backend's first layer runs blocked (embedProjectCpu eight outputs at a time,
 * firstLayerGradCpu four embedding columns and eight weights at a time) and leaves out the
 * (slot, token) blocks of G that are all zero. Neither may change a bit: every sum adds the same
 * float64 terms in the same order as the textbook loops of kernels/model/mlpPlain.ts, so the
 * comparison is exact (Object.is on every entry, NaN included). The shapes straddle the block
 * sizes (D around 4, H around 8), and their terms cancel (below), where any reordering shows.
 */
import { describe, it } from 'vitest';
import { embedProjectCpu, firstLayerGradCpu, forwardCpu, initParams, paramLayout, slotGradCpu, type MlpDims } from '../../kernels/model/mlp';
import { embedProjectPlain, firstLayerGradPlain, forwardPlain, slotGradPlain } from '../../kernels/model/mlpPlain';
import { createRng } from '../../workers/core/rng';
import { expectSameBits } from '../helpers/expectClose';

/**
 * Float64 sums of f32 products are mostly exact in any order, so the fixtures cancel instead: along
 * the summed index i, term i = 2 mod 3 is term i - 2 negated and 2^20 times the size of term i - 1,
 * which is then rounded away or kept depending on where it falls in the order. `along` picks the
 * sum that cancels: embedProject's over d, demb's over j, dW1's over t.
 */
const SCALE = [2 ** 20, 2 ** -20, -(2 ** 20)];
type Along = 'd' | 'j' | 't';

function fixture(V: number, K: number, D: number, H: number, seed: number, along: Along) {
  const dims: MlpDims = { V, K, D, H };
  const rng = createRng(seed);
  const P = paramLayout(dims);
  const p = initParams(dims, rng);
  const G = new Float64Array(K * V * H).map(() => rng.normal());
  const pBase = p.slice();
  const gBase = G.slice();
  const src = (i: number) => (i % 3 === 2 ? i - 2 : i);
  const emb = (t: number, d: number) => P.emb + t * D + d;
  const w1 = (k: number, d: number, j: number) => P.w1 + (k * D + d) * H + j;
  const g = (k: number, t: number, j: number) => (k * V + t) * H + j;
  for (let k = 0; k < K; k++) {
    for (let t = 0; t < V; t++) {
      for (let d = 0; d < D; d++) {
        for (let j = 0; j < H; j++) {
          if (along === 'd') {
            // emb[t, d] W1[k, d, j]: the second factor copies column d - 2, the first scales it.
            p[w1(k, d, j)] = pBase[w1(k, src(d), j)]!;
            if (k === 0 && j === 0) p[emb(t, d)] = SCALE[d % 3]! * pBase[emb(t, src(d))]!;
          } else if (along === 'j') {
            // W1[k, d, j] G[k, t, j]
            G[g(k, t, j)] = gBase[g(k, t, src(j))]!;
            if (t === 0) p[w1(k, d, j)] = SCALE[j % 3]! * pBase[w1(k, d, src(j))]!;
          } else {
            // emb[t, d] G[k, t, j]
            G[g(k, t, j)] = gBase[g(k, src(t), j)]!;
            if (k === 0 && j === 0) p[emb(t, d)] = SCALE[t % 3]! * pBase[emb(src(t), d)]!;
          }
        }
      }
    }
  }
  // Whole (slot, token) blocks of zeros: tokens no row had in that slot.
  for (let b = 0; b < K * V; b++) if (rng.next() < 0.3) G.fill(0, b * H, (b + 1) * H);
  return { dims, P, p, G, rng };
}

function check(p: Float32Array, dims: MlpDims, G: Float64Array, at: string) {
  const P = paramLayout(dims);
  expectSameBits(embedProjectCpu(p, dims), embedProjectPlain(p, dims), `${at} proj`);
  expectSameBits(firstLayerGradCpu(p, dims, G, new Float32Array(P.size)), firstLayerGradPlain(p, dims, G), `${at} grad`);
}

const ALONG: Along[] = ['d', 'j', 't'];

describe('first layer, blocked: the textbook loops, bit for bit', () => {
  const shapes: Array<[number, number, number, number]> = [];
  for (const V of [1, 2, 5, 7]) for (const K of [1, 3]) for (const D of [1, 3, 4, 5, 9]) for (const H of [1, 7, 8, 9, 17]) shapes.push([V, K, D, H]);

  it(`${shapes.length} shapes, G with zero blocks`, () => {
    shapes.forEach(([V, K, D, H], i) => {
      for (const along of ALONG) {
        const f = fixture(V, K, D, H, 1000 + i, along);
        check(f.p, f.dims, f.G, `V ${V} K ${K} D ${D} H ${H}, cancelling along ${along}`);
      }
    });
  });

  it('a non-finite weight or G entry reaches the same outputs: zero blocks are then kept where they multiply it', () => {
    shapes.forEach(([V, K, D, H], i) => {
      for (const where of ['w1', 'emb', 'G'] as const) {
        for (const bad of [NaN, Infinity, -Infinity]) {
          const f = fixture(V, K, D, H, 2000 + i, ALONG[i % 3]!);
          if (where === 'G') f.G[f.rng.int(f.G.length)] = bad;
          else if (where === 'w1') f.p[f.P.w1 + f.rng.int(K * D * H)] = bad;
          else f.p[f.P.emb + f.rng.int(V * D)] = bad;
          check(f.p, f.dims, f.G, `V ${V} K ${K} D ${D} H ${H}, ${bad} in ${where}`);
        }
      }
    });
  });

  it('forward and backward through the factored layer on rows that leave most blocks empty', () => {
    for (let seed = 1; seed <= 20; seed++) {
      const f = fixture(9, 4, 5, 9, seed, ALONG[seed % 3]!);
      const L = 7;
      // Few distinct tokens and short sequences: most context slots read PAD, most blocks stay zero.
      const seq = new Int32Array(3 * L).map(() => f.rng.int(3));
      const rowPos = Uint32Array.from([1, 2, 3, 5, L + 2, L + 6, 2 * L + 4]);
      const grammar = new Uint8Array(9 * 9).fill(1);
      const fast = forwardCpu(f.p, f.dims, seq, L, rowPos, grammar, 0.8);
      const plain = forwardPlain(f.p, f.dims, seq, L, rowPos, grammar, 0.8);
      expectSameBits(fast.h, plain.h, `seed ${seed} h`);
      expectSameBits(fast.z, plain.z, `seed ${seed} z`);
      const da = new Float32Array(rowPos.length * 9).map(() => f.rng.normal());
      const G = slotGradCpu(f.dims, seq, L, rowPos, da);
      expectSameBits(G, slotGradPlain(f.dims, seq, L, rowPos, da), `seed ${seed} G`);
      check(f.p, f.dims, G, `seed ${seed}`);
    }
  });
});
