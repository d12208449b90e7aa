/**
 * The CPU backend's backward runs as WebAssembly (kernels/model/wasm/backward.ts: mlpBackward) and
 * must give backwardCpu's bits, so a run, a lesson's numbers and a share link do not depend on
 * which ran. Compared with Object.is on every entry (NaN, -0 and +0 included), on shapes that
 * straddle each of its loops' steps (rows 4 then 1; hidden units 8, 2, 1; embedding columns 4, 2,
 * 1; logits 2 then 1), with terms built to cancel so that any other order of a sum shows, and on
 * the rows, blocks and tokens left out as adding nothing.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { backwardCpu, initParams, paramLayout, type MlpDims } from '../../kernels/model/mlp';
import { mlpBackward } from '../../kernels/model/wasm/backward';
import { wasmAvailable } from '../../kernels/model/wasm/engine';
import { createRng } from '../../workers/core/rng';
import { expectSameBits } from '../helpers/expectClose';

const BIG = 2 ** 20;
const SMALL = 2 ** -20;

/**
 * Along a summed index i every third term is the first of its triple negated and the middle one
 * 2^-40 its size, so the small term survives or is rounded away depending on the order of the adds.
 */
function cancelling(i: number, base: (i: number) => number): number {
  if (i % 3 === 2) return -BIG * base(i - 2);
  return i % 3 === 1 ? base(i) * SMALL : base(i) * BIG;
}

/**
 * Inputs for R rows. headGrad's sums (over rows) and hiddenDa's (over v) cancel as above; every
 * input is also scaled by its own power of two in 2^-30..2^30 (`wild`), so that the other sums
 * (slotGrad's over rows, the first layer's over k, j and t) round at almost every add and any
 * other order changes their bits too. Every fifth row of dz is zero, some -0.
 */
function fixture(dims: MlpDims, R: number, seed: number, zeroEvery = 5, wild = true) {
  const { V, H } = dims;
  const rng = createRng(seed);
  const params = initParams(dims, rng);
  const P = paramLayout(dims);
  // hiddenDa sums over v: W2's column v = 2 mod 3 cancels column v - 2.
  for (let j = 0; j < H; j++) {
    const row = Float32Array.from(params.subarray(P.w2 + j * V, P.w2 + (j + 1) * V));
    for (let v = 0; v < V; v++) params[P.w2 + j * V + v] = cancelling(v, (vv) => row[vv]!);
  }
  const L = 9;
  const seq = new Int32Array(Math.ceil(R / (L - 1)) * L + L).map(() => rng.int(V + 2)); // some tokens outside V read as PAD
  const rowPos = Uint32Array.from({ length: R }, (_, r) => Math.floor(r / (L - 1)) * L + 1 + (r % (L - 1)));
  // headGrad sums over rows: row r = 2 mod 3 has row r - 2's h and cancels its dz.
  const hBase = new Float32Array(R * H).map(() => Math.tanh(rng.normal()));
  const dzBase = new Float32Array(R * V).map(() => (rng.next() < 0.2 ? 0 : rng.normal()));
  const h = new Float32Array(R * H);
  const dz = new Float32Array(R * V);
  for (let r = 0; r < R; r++) {
    for (let j = 0; j < H; j++) h[r * H + j] = hBase[(r - (r % 3 === 2 ? 2 : 0)) * H + j]!;
    for (let v = 0; v < V; v++) dz[r * V + v] = cancelling(r, (rr) => dzBase[rr * V + v]!);
    // Rows of zeros (a masked row, a zero advantage), some of them -0.
    if (r % zeroEvery === zeroEvery - 1) dz.fill(r % 2 ? -0 : 0, r * V, (r + 1) * V);
  }
  if (wild) {
    const scale = (a: Float32Array) => a.forEach((x, i) => (a[i] = x * 2 ** (rng.int(61) - 30)));
    scale(params);
    scale(h);
    scale(dz);
  }
  return { params, seq, L, rowPos, h, dz };
}

/** `backward` (mlpBackward, or a copy of it imported afresh under a stubbed WebAssembly) against backwardCpu. */
function same(dims: MlpDims, f: ReturnType<typeof fixture>, what: string, backward: typeof backwardCpu = mlpBackward) {
  const want = backwardCpu(f.params, dims, f.seq, f.L, f.rowPos, f.h, f.dz);
  const got = backward(f.params, dims, f.seq, f.L, f.rowPos, f.h, f.dz);
  expectSameBits(got, want, what);
}

describe('mlpBackward (WebAssembly) gives backwardCpu, bit for bit', () => {
  it('runs as WebAssembly here (else the tests below compare backwardCpu with itself)', () => {
    expect(wasmAvailable()).toBe(true);
  });

  it('on shapes straddling every loop step, with cancelling sums', () => {
    let n = 0;
    for (const V of [1, 2, 3, 5, 8, 19]) {
      for (const H of [1, 2, 3, 7, 8, 9, 17]) {
        for (const D of [1, 2, 3, 4, 5, 7]) {
          for (const [K, R] of [[1, 1], [3, 5], [2, 9], [4, 14]] as const) {
            const dims = { V, K, D, H };
            same(dims, fixture(dims, R, ++n), `V ${V} H ${H} D ${D} K ${K} R ${R}`);
            same(dims, fixture(dims, R, ++n, 5, false), `V ${V} H ${H} D ${D} K ${K} R ${R}, unscaled`);
          }
        }
      }
    }
  });

  it('at a lesson size and at scales where products round (40, 1e15)', () => {
    const dims = { V: 46, K: 8, D: 16, H: 64 };
    const f = fixture(dims, 448, 7);
    same(dims, f, 'lesson size');
    for (const scale of [40, 1e15]) {
      const g = fixture(dims, 96, 8);
      g.params.forEach((x, i) => (g.params[i] = x * scale));
      g.dz.forEach((x, i) => (g.dz[i] = x * scale));
      same(dims, g, `scale ${scale}`);
    }
  });

  it('rows left out and kept as backwardCpu leaves and keeps them: non-finite values, every row zero, no rows', () => {
    const dims = { V: 7, K: 3, D: 5, H: 9 };
    const P = paramLayout(dims);
    const R = 12;
    // A NaN h on a zero row of dz: headGrad keeps that row (NaN * 0 is NaN).
    const a = fixture(dims, R, 21);
    a.dz.fill(0, 2 * 7, 3 * 7);
    a.h[2 * 9 + 4] = NaN;
    same(dims, a, 'NaN h on a zero row');
    // An infinite W2: no row of dz is left out of hiddenDa.
    const b = fixture(dims, R, 22);
    b.params[P.w2 + 3] = Infinity;
    same(dims, b, 'infinite W2');
    // A NaN in W1: every (slot, token) block stays in demb. A NaN embedding: every token stays in dW1.
    const c = fixture(dims, R, 23);
    c.params[P.w1 + 11] = NaN;
    same(dims, c, 'NaN W1');
    const d = fixture(dims, R, 24);
    d.params[P.emb + 6] = -Infinity;
    same(dims, d, 'infinite embedding');
    // Every row zero, and a batch of no rows.
    const e = fixture(dims, R, 25, 1);
    same(dims, e, 'every row zero');
    const none = fixture(dims, 0, 26);
    same(dims, none, 'no rows');
  });

  it('over more rows than one progress chunk, and after a larger call (the memory kept between calls)', () => {
    const dims = { V: 5, K: 2, D: 3, H: 10 };
    const big = fixture(dims, 2600, 31, 5);
    let told = 0;
    const got = mlpBackward(big.params, dims, big.seq, big.L, big.rowPos, big.h, big.dz, () => told++);
    expectSameBits(got, backwardCpu(big.params, dims, big.seq, big.L, big.rowPos, big.h, big.dz), '2,600 rows');
    expect(told).toBeGreaterThanOrEqual(3);
    same(dims, fixture(dims, 7, 32), 'a small call after it');
  });
});

describe('without WebAssembly', () => {
  afterEach(() => {
    vi.unstubAllGlobals();
    vi.resetModules();
  });

  it('where compiling is refused (a Content-Security-Policy without wasm-unsafe-eval), runs backwardCpu', async () => {
    const real = WebAssembly;
    let tried = 0;
    const refusing = {
      validate: real.validate,
      Memory: real.Memory,
      Instance: real.Instance,
      CompileError: real.CompileError,
      Module: function Module() {
        tried++;
        throw new real.CompileError("WebAssembly.Module(): Refused to compile or instantiate WebAssembly module because 'wasm-unsafe-eval' is not an allowed source");
      },
    };
    vi.stubGlobal('WebAssembly', refusing);
    vi.resetModules();
    const fresh = await import('../../kernels/model/wasm/backward');
    expect((await import('../../kernels/model/wasm/engine')).wasmAvailable()).toBe(false);
    expect(tried).toBe(1);
    const dims = { V: 6, K: 2, D: 3, H: 5 };
    same(dims, fixture(dims, 10, 42), 'compile refused', fresh.mlpBackward);
  });

  it('where the memory cannot grow for a call, runs backwardCpu for it', async () => {
    const real = WebAssembly;
    class NoGrowth extends real.Memory {
      override grow(): number {
        throw new RangeError('WebAssembly.Memory.grow(): Unable to grow instance memory');
      }
    }
    vi.stubGlobal('WebAssembly', { validate: real.validate, Module: real.Module, Instance: real.Instance, Memory: NoGrowth });
    vi.resetModules();
    const fresh = await import('../../kernels/model/wasm/backward');
    const engine = await import('../../kernels/model/wasm/engine');
    expect(engine.wasmAvailable()).toBe(true);
    // The first memory is 1 MiB: a small call fits it, this one (h, da and dz alone 1.3 MB) does not.
    const dims = { V: 30, K: 4, D: 8, H: 64 };
    expect(engine.engineFor(2 * 2 ** 20)).toBeNull();
    same(dims, fixture(dims, 2000, 43), 'no growth', fresh.mlpBackward);
    const small = { V: 5, K: 2, D: 3, H: 4 };
    same(small, fixture(small, 6, 44), 'a small call, in the module', fresh.mlpBackward);
  });

  it('runs backwardCpu, the same bits', async () => {
    vi.stubGlobal('WebAssembly', undefined);
    vi.resetModules();
    const fresh = await import('../../kernels/model/wasm/backward');
    expect((await import('../../kernels/model/wasm/engine')).wasmAvailable()).toBe(false);
    const dims = { V: 6, K: 2, D: 3, H: 5 };
    same(dims, fixture(dims, 10, 41), 'no WebAssembly', fresh.mlpBackward);
  });
});
