/**
 * The CPU backward pass's loops (kernels/model/mlp.ts: headGradCpu, hiddenDaCpu, slotGradCpu,
 * firstLayerGradCpu) as WebAssembly with two-lane f64 SIMD. Every output is still its own float64
 * sum, taking its terms in the order the TypeScript adds them, so the results are the same bits:
 * a lane of f64x2.add or f64x2.mul is the scalar f64 operation, an f32 promotes to f64 exactly,
 * and f32x4.demote_f64x2_zero rounds as a store into a Float32Array does. The lanes run along a
 * dimension of independent outputs (a row of W2, a pair of hidden units, a pair of embedding
 * columns), never along a sum.
 *
 * The rows, (slot, token) blocks and tokens that add nothing are left out as backwardCpu leaves them
 * out (liveRows, zeroRow, zeroBlock there), decided here too, so that the TypeScript around the
 * module (backward.ts) is copies and calls: a loop left in it would be compiled again by each
 * worker's JIT. Arguments are byte addresses in the module's memory and counts; every array is
 * row-major.
 */
import {
  add, anyOf, byteAt, frame, demote, demoteV, eqz, f32finite, f32ne, f32zero, f64one, f64zero, fadd, fmul, fne, forStep, fsub, get, i32, ifElse, ifThen, loadF32,
  loadF32x2, loadF64, loadI32, loadU8, loadV, ltS, ltU, mul, or, promote, promoteV, remU, set, shl, splat, storeF32, storeF64, storeI32, storeLow64,
  storeU8, storeV, sub, vadd, vmul, vsub, vzero, type Bytes, type WasmFunction,
} from './asm';

/**
 * headGrad over the live rows live[0..n): w2[j, v] += h[r, j] dz[r, v], b2[v] += dz[r, v], rows in
 * list order, four rows per pass over w2 and then one (each accumulator still adds row by row).
 */
function headGrad(): WasmFunction {
  const q4 = [0, 1, 2, 3];
  const f = frame(
    ['live', 'n', 'h', 'dz', 'w2', 'b2', 'H', 'V'],
    ['i', 'j', 'v', 'wp', 'hr0', 'hr1', 'hr2', 'hr3', 'dr0', 'dr1', 'dr2', 'dr3'],
    ['hs0', 'hs1', 'hs2', 'hs3'],
    ['s0', 's1', 's2', 's3', 'acc'],
  );
  const L = f.at;
  const rows = (m: number): Bytes => {
    const qs = q4.slice(0, m);
    const rowOf = (q: number) => loadI32(byteAt(get(L.live!), add(get(L.i!), i32(q)), 2));
    return [
      ...qs.flatMap((q) => [
        ...set(L[`hr${q}`]!, add(get(L.h!), mul(rowOf(q), shl(get(L.H!), i32(2))))),
        ...set(L[`dr${q}`]!, add(get(L.dz!), mul(rowOf(q), shl(get(L.V!), i32(2))))),
      ]),
      ...forStep(L.j!, i32(0), get(L.H!), 1,
        ...qs.map((q) => set(L[`hs${q}`]!, promote(loadF32(byteAt(get(L[`hr${q}`]!), get(L.j!), 2))))),
        ...qs.map((q) => set(L[`s${q}`]!, splat(get(L[`hs${q}`]!)))),
        set(L.wp!, byteAt(get(L.w2!), mul(get(L.j!), get(L.V!)), 3)),
        forStep(L.v!, i32(0), get(L.V!), 2,
          set(L.acc!, loadV(byteAt(get(L.wp!), get(L.v!), 3))),
          ...qs.map((q) => set(L.acc!, vadd(get(L.acc!), vmul(get(L[`s${q}`]!), promoteV(loadF32x2(byteAt(get(L[`dr${q}`]!), get(L.v!), 2))))))),
          storeV(byteAt(get(L.wp!), get(L.v!), 3), get(L.acc!)),
        ),
        forStep(L.v!, null, get(L.V!), 1,
          storeF64(byteAt(get(L.wp!), get(L.v!), 3), qs.reduce(
            (w, q) => fadd(w, fmul(get(L[`hs${q}`]!), promote(loadF32(byteAt(get(L[`dr${q}`]!), get(L.v!), 2))))),
            loadF64(byteAt(get(L.wp!), get(L.v!), 3)),
          )),
        ),
      ),
      ...forStep(L.v!, i32(0), get(L.V!), 2,
        storeV(byteAt(get(L.b2!), get(L.v!), 3), qs.reduce(
          (b, q) => vadd(b, promoteV(loadF32x2(byteAt(get(L[`dr${q}`]!), get(L.v!), 2)))),
          loadV(byteAt(get(L.b2!), get(L.v!), 3)),
        )),
      ),
      ...forStep(L.v!, null, get(L.V!), 1,
        storeF64(byteAt(get(L.b2!), get(L.v!), 3), qs.reduce(
          (b, q) => fadd(b, promote(loadF32(byteAt(get(L[`dr${q}`]!), get(L.v!), 2)))),
          loadF64(byteAt(get(L.b2!), get(L.v!), 3)),
        )),
      ),
    ];
  };
  const body = [...forStep(L.i!, i32(0), get(L.n!), 4, rows(4)), ...forStep(L.i!, null, get(L.n!), 1, rows(1))];
  return { name: 'headGrad', params: f.params, locals: f.locals, body };
}

/**
 * hiddenDa for rows r0..r1: da[r, j] = (sum_v W2[j, v] dz[r, v]) (1 - h[r, j]^2), from W2
 * transposed (w2T [V, H] f64, so that a pair of hidden units is one load), eight units per pass
 * over v, then two, then one. With skipZero (W2 finite) a row of dz that is all zero has every sum
 * +0, and only the factor 0 (1 - h^2) is written.
 */
function hiddenDa(): WasmFunction {
  const f = frame(
    ['r0', 'r1', 'h', 'dz', 'w2T', 'da', 'H', 'V', 'skipZero'],
    ['r', 'j', 'v', 'hr', 'dr', 'ar', 'wp', 'nz'],
    ['acc', 'hj'],
    ['a0', 'a1', 'a2', 'a3', 'xs', 'hv'],
  );
  const L = f.at;
  const tanhFactor = (sum: Bytes): Bytes => [
    ...set(L.hj!, promote(loadF32(byteAt(get(L.hr!), get(L.j!), 2)))),
    ...storeF32(byteAt(get(L.ar!), get(L.j!), 2), demote(fmul(sum, fsub(f64one, fmul(get(L.hj!), get(L.hj!)))))),
  ];
  const units = (pairs: number): Bytes => {
    const qs = [0, 1, 2, 3].slice(0, pairs);
    return forStep(L.j!, pairs === 4 ? i32(0) : null, get(L.H!), 2 * pairs,
      ...qs.map((q) => set(L[`a${q}`]!, vzero)),
      forStep(L.v!, i32(0), get(L.V!), 1,
        set(L.xs!, splat(promote(loadF32(byteAt(get(L.dr!), get(L.v!), 2))))),
        set(L.wp!, byteAt(get(L.w2T!), add(mul(get(L.v!), get(L.H!)), get(L.j!)), 3)),
        ...qs.map((q) => set(L[`a${q}`]!, vadd(get(L[`a${q}`]!), vmul(loadV(add(get(L.wp!), i32(16 * q))), get(L.xs!))))),
      ),
      ...qs.map((q) => [
        ...set(L.hv!, promoteV(loadF32x2(byteAt(get(L.hr!), add(get(L.j!), i32(2 * q)), 2)))),
        ...storeLow64(
          byteAt(get(L.ar!), add(get(L.j!), i32(2 * q)), 2),
          demoteV(vmul(get(L[`a${q}`]!), vsub(splat(f64one), vmul(get(L.hv!), get(L.hv!))))),
        ),
      ]),
    );
  };
  const body = forStep(L.r!, get(L.r0!), get(L.r1!), 1,
    set(L.dr!, add(get(L.dz!), mul(get(L.r!), shl(get(L.V!), i32(2))))),
    set(L.ar!, add(get(L.da!), mul(get(L.r!), shl(get(L.H!), i32(2))))),
    set(L.hr!, add(get(L.h!), mul(get(L.r!), shl(get(L.H!), i32(2))))),
    set(L.nz!, i32(1)),
    ifThen(get(L.skipZero!), anyOf(L.v!, i32(0), get(L.V!), f32ne(loadF32(byteAt(get(L.dr!), get(L.v!), 2)), f32zero), L.nz!)),
    ifElse(get(L.nz!), [
      units(4),
      units(1),
      forStep(L.j!, null, get(L.H!), 1,
        set(L.acc!, f64zero),
        forStep(L.v!, i32(0), get(L.V!), 1,
          set(L.acc!, fadd(get(L.acc!), fmul(loadF64(byteAt(get(L.w2T!), add(mul(get(L.v!), get(L.H!)), get(L.j!)), 3)), promote(loadF32(byteAt(get(L.dr!), get(L.v!), 2)))))),
        ),
        tanhFactor(get(L.acc!)),
      ),
    ], [
      forStep(L.j!, i32(0), get(L.H!), 1, tanhFactor(f64zero)),
    ]),
  );
  return { name: 'hiddenDa', params: f.params, locals: f.locals, body };
}

/**
 * slotGrad for rows r0..r1: G[k, t, :] += da[r, :] for each of the row's K context tokens t
 * (contextToken and vocabToken in mlp.ts: PAD before the sequence's start and for a token outside
 * the vocabulary), rows in order; a row of da that is all zero is left out (G is never -0).
 */
function slotGrad(): WasmFunction {
  const f = frame(
    ['r0', 'r1', 'seq', 'rowPos', 'L', 'K', 'V', 'da', 'G', 'H'],
    ['r', 'k', 'j', 'ar', 'out', 'pos', 'p', 't', 'nz'],
    [],
    [],
  );
  const L = f.at;
  const at = (base: number, log2: number) => byteAt(get(base), get(L.j!), log2);
  const body = forStep(L.r!, get(L.r0!), get(L.r1!), 1,
    set(L.ar!, add(get(L.da!), mul(get(L.r!), shl(get(L.H!), i32(2))))),
    anyOf(L.j!, i32(0), get(L.H!), f32ne(loadF32(at(L.ar!, 2)), f32zero), L.nz!),
    ifThen(get(L.nz!),
      set(L.pos!, loadI32(byteAt(get(L.rowPos!), get(L.r!), 2))),
      set(L.p!, remU(get(L.pos!), get(L.L!))),
      forStep(L.k!, i32(0), get(L.K!), 1,
        set(L.t!, i32(0)),
        ifThen(eqz(ltS(add(sub(get(L.p!), get(L.K!)), get(L.k!)), i32(0))),
          set(L.t!, loadI32(byteAt(get(L.seq!), add(sub(get(L.pos!), get(L.K!)), get(L.k!)), 2)))),
        ifThen(eqz(ltU(get(L.t!), get(L.V!))), set(L.t!, i32(0))),
        set(L.out!, byteAt(get(L.G!), mul(add(mul(get(L.k!), get(L.V!)), get(L.t!)), get(L.H!)), 3)),
        forStep(L.j!, i32(0), get(L.H!), 2, storeV(at(L.out!, 3), vadd(loadV(at(L.out!, 3)), promoteV(loadF32x2(at(L.ar!, 2)))))),
        forStep(L.j!, null, get(L.H!), 1, storeF64(at(L.out!, 3), fadd(loadF64(at(L.out!, 3)), promote(loadF32(at(L.ar!, 2)))))),
      ),
    ),
  );
  return { name: 'slotGrad', params: f.params, locals: f.locals, body };
}

/**
 * The rows headGrad adds, into out[0..n) (returns n): a row of dz with a nonzero entry, or whose h
 * has a non-finite one (NaN * 0 is NaN): liveRows in mlp.ts.
 */
function liveRows(): WasmFunction {
  const f = frame(['dz', 'V', 'h', 'H', 'R', 'out'], ['r', 'i', 'n', 'nz'], [], []);
  const L = f.at;
  const body = [
    ...set(L.n!, i32(0)),
    ...forStep(L.r!, i32(0), get(L.R!), 1,
      anyOf(L.i!, i32(0), get(L.V!), f32ne(loadF32(byteAt(get(L.dz!), add(mul(get(L.r!), get(L.V!)), get(L.i!)), 2)), f32zero), L.nz!),
      ifThen(eqz(get(L.nz!)),
        anyOf(L.i!, i32(0), get(L.H!), eqz(f32finite(loadF32(byteAt(get(L.h!), add(mul(get(L.r!), get(L.H!)), get(L.i!)), 2)))), L.nz!)),
      ifThen(get(L.nz!), storeI32(byteAt(get(L.out!), get(L.n!), 2), get(L.r!)), set(L.n!, add(get(L.n!), i32(1)))),
    ),
    ...get(L.n!),
  ];
  return { name: 'liveRows', params: f.params, locals: f.locals, body, returnsI32: true };
}

/** 1 if a[0..n) (f32) holds ±Infinity or NaN, else 0. */
function nonFinite(): WasmFunction {
  const f = frame(['a', 'n'], ['i', 'bad'], [], []);
  const L = f.at;
  const body = [...anyOf(L.i!, i32(0), get(L.n!), eqz(f32finite(loadF32(byteAt(get(L.a!), get(L.i!), 2)))), L.bad!), ...get(L.bad!)];
  return { name: 'nonFinite', params: f.params, locals: f.locals, body, returnsI32: true };
}

/** dst[c, r] = src[r, c] for an f32 [rows, cols] src, as f64 (exact). */
function transpose(): WasmFunction {
  const f = frame(['src', 'rows', 'cols', 'dst'], ['r', 'c'], [], []);
  const L = f.at;
  const body = forStep(L.r!, i32(0), get(L.rows!), 1,
    forStep(L.c!, i32(0), get(L.cols!), 1,
      storeF64(
        byteAt(get(L.dst!), add(mul(get(L.c!), get(L.rows!)), get(L.r!)), 3),
        promote(loadF32(byteAt(get(L.src!), add(mul(get(L.r!), get(L.cols!)), get(L.c!)), 2))),
      ),
    ),
  );
  return { name: 'transpose', params: f.params, locals: f.locals, body };
}

/**
 * Which (slot, token) blocks of G the first layer's sums read (firstLayerGradCpu): live[k V + t] is
 * 1 where the block has a nonzero entry or W1 is not finite (demb), and slot k's tokens list
 * tokens[k V + 0..counts[k]) those with a nonzero entry, or every token where the embeddings are
 * not finite (dW1).
 */
function blocks(): WasmFunction {
  const f = frame(['G', 'w1Finite', 'embFinite', 'live', 'tokens', 'counts', 'V', 'K', 'H'], ['k', 't', 's', 'j', 'c', 'nz'], [], []);
  const L = f.at;
  const body = forStep(L.k!, i32(0), get(L.K!), 1,
    set(L.c!, i32(0)),
    forStep(L.t!, i32(0), get(L.V!), 1,
      set(L.s!, add(mul(get(L.k!), get(L.V!)), get(L.t!))),
      anyOf(L.j!, i32(0), get(L.H!), fne(loadF64(byteAt(get(L.G!), add(mul(get(L.s!), get(L.H!)), get(L.j!)), 3)), f64zero), L.nz!),
      storeU8(add(get(L.live!), get(L.s!)), or(eqz(get(L.w1Finite!)), get(L.nz!))),
      ifThen(or(eqz(get(L.embFinite!)), get(L.nz!)),
        storeI32(byteAt(get(L.tokens!), add(mul(get(L.k!), get(L.V!)), get(L.c!)), 2), get(L.t!)),
        set(L.c!, add(get(L.c!), i32(1))),
      ),
    ),
    storeI32(byteAt(get(L.counts!), get(L.k!), 2), get(L.c!)),
  );
  return { name: 'blocks', params: f.params, locals: f.locals, body };
}

/** db1[j] = sum_t G[0, t, j] (every row has one token in slot 0), as f32 at out. */
function b1Grad(): WasmFunction {
  const f = frame(['G', 'V', 'H', 'out'], ['j', 't'], ['acc'], []);
  const L = f.at;
  const body = forStep(L.j!, i32(0), get(L.H!), 1,
    set(L.acc!, f64zero),
    forStep(L.t!, i32(0), get(L.V!), 1, set(L.acc!, fadd(get(L.acc!), loadF64(byteAt(get(L.G!), add(mul(get(L.t!), get(L.H!)), get(L.j!)), 3))))),
    storeF32(byteAt(get(L.out!), get(L.j!), 2), demote(get(L.acc!))),
  );
  return { name: 'b1Grad', params: f.params, locals: f.locals, body };
}

/**
 * demb[t, d] = sum_k sum_j W1[k D + d, j] G[k, t, j] over the blocks (k, t) marked in `live`
 * (one byte each), from W1 transposed (w1T [H, K D] f64), four columns d per pass, then two,
 * then one; written as f32 at out + (t D + d) * 4.
 */
function embGrad(): WasmFunction {
  const f = frame(['G', 'w1T', 'live', 'out', 'V', 'K', 'D', 'H'], ['t', 'd', 'k', 'j', 's', 'wp'], ['acc'], ['a', 'b', 'xs']);
  const L = f.at;
  const blocks = (...inner: Bytes[]): Bytes => forStep(L.k!, i32(0), get(L.K!), 1,
    set(L.s!, add(mul(get(L.k!), get(L.V!)), get(L.t!))),
    ifThen(loadU8(add(get(L.live!), get(L.s!))),
      forStep(L.j!, i32(0), get(L.H!), 1,
        set(L.wp!, byteAt(get(L.w1T!), add(mul(add(mul(get(L.j!), get(L.K!)), get(L.k!)), get(L.D!)), get(L.d!)), 3)),
        ...inner,
      ),
    ),
  );
  const gAt = loadF64(byteAt(get(L.G!), add(mul(get(L.s!), get(L.H!)), get(L.j!)), 3));
  const outAt = (plus: number) => byteAt(get(L.out!), add(add(mul(get(L.t!), get(L.D!)), get(L.d!)), i32(plus)), 2);
  const body = forStep(L.t!, i32(0), get(L.V!), 1,
    forStep(L.d!, i32(0), get(L.D!), 4,
      set(L.a!, vzero),
      set(L.b!, vzero),
      blocks(
        set(L.xs!, splat(gAt)),
        set(L.a!, vadd(get(L.a!), vmul(loadV(get(L.wp!)), get(L.xs!)))),
        set(L.b!, vadd(get(L.b!), vmul(loadV(add(get(L.wp!), i32(16))), get(L.xs!)))),
      ),
      storeLow64(outAt(0), demoteV(get(L.a!))),
      storeLow64(outAt(2), demoteV(get(L.b!))),
    ),
    forStep(L.d!, null, get(L.D!), 2,
      set(L.a!, vzero),
      blocks(set(L.a!, vadd(get(L.a!), vmul(loadV(get(L.wp!)), splat(gAt))))),
      storeLow64(outAt(0), demoteV(get(L.a!))),
    ),
    forStep(L.d!, null, get(L.D!), 1,
      set(L.acc!, f64zero),
      blocks(set(L.acc!, fadd(get(L.acc!), fmul(loadF64(get(L.wp!)), gAt)))),
      storeF32(outAt(0), demote(get(L.acc!))),
    ),
  );
  return { name: 'embGrad', params: f.params, locals: f.locals, body };
}

/**
 * dW1[k D + d, j] = sum over the tokens t of slot k's list (tokens[k V + i], i < counts[k]) of
 * emb[t, d] G[k, t, j], eight units j per pass, then two, then one; written as f32 at
 * out + (V D + (k D + d) H + j) * 4 (W1 follows the embeddings in the parameter layout).
 */
function w1Grad(): WasmFunction {
  const f = frame(
    ['G', 'emb', 'tokens', 'counts', 'out', 'V', 'K', 'D', 'H'],
    ['k', 'd', 'j', 'i', 'n', 'outp', 'gp'],
    ['acc'],
    ['a0', 'a1', 'a2', 'a3', 'x'],
  );
  const L = f.at;
  const token = loadI32(byteAt(get(L.tokens!), add(mul(get(L.k!), get(L.V!)), get(L.i!)), 2));
  const overTokens = (...inner: Bytes[]): Bytes => forStep(L.i!, i32(0), get(L.n!), 1,
    set(L.gp!, token), // the token, then its emb and G addresses
    set(L.x!, splat(promote(loadF32(byteAt(get(L.emb!), add(mul(get(L.gp!), get(L.D!)), get(L.d!)), 2))))),
    set(L.gp!, byteAt(get(L.G!), add(mul(add(mul(get(L.k!), get(L.V!)), get(L.gp!)), get(L.H!)), get(L.j!)), 3)),
    ...inner,
  );
  const units = (pairs: number): Bytes => {
    const qs = [0, 1, 2, 3].slice(0, pairs);
    return forStep(L.j!, pairs === 4 ? i32(0) : null, get(L.H!), 2 * pairs,
      ...qs.map((q) => set(L[`a${q}`]!, vzero)),
      overTokens(...qs.map((q) => set(L[`a${q}`]!, vadd(get(L[`a${q}`]!), vmul(get(L.x!), loadV(add(get(L.gp!), i32(16 * q)))))))),
      ...qs.map((q) => storeLow64(byteAt(get(L.outp!), add(get(L.j!), i32(2 * q)), 2), demoteV(get(L[`a${q}`]!)))),
    );
  };
  const body = forStep(L.k!, i32(0), get(L.K!), 1,
    set(L.n!, loadI32(byteAt(get(L.counts!), get(L.k!), 2))),
    forStep(L.d!, i32(0), get(L.D!), 1,
      set(L.outp!, byteAt(get(L.out!), add(mul(get(L.V!), get(L.D!)), mul(add(mul(get(L.k!), get(L.D!)), get(L.d!)), get(L.H!))), 2)),
      units(4),
      units(1),
      forStep(L.j!, null, get(L.H!), 1,
        set(L.acc!, f64zero),
        overTokens(set(L.acc!, fadd(get(L.acc!), fmul(promote(loadF32(byteAt(get(L.emb!), add(mul(token, get(L.D!)), get(L.d!)), 2))), loadF64(get(L.gp!)))))),
        storeF32(byteAt(get(L.outp!), get(L.j!), 2), demote(get(L.acc!))),
      ),
    ),
  );
  return { name: 'w1Grad', params: f.params, locals: f.locals, body };
}

export const BACKWARD_FUNCTIONS = [liveRows, headGrad, hiddenDa, slotGrad, nonFinite, transpose, blocks, embGrad, w1Grad, b1Grad];

export interface BackwardExports {
  liveRows(dz: number, V: number, h: number, H: number, R: number, out: number): number;
  headGrad(live: number, n: number, h: number, dz: number, w2: number, b2: number, H: number, V: number): void;
  hiddenDa(r0: number, r1: number, h: number, dz: number, w2T: number, da: number, H: number, V: number, skipZero: number): void;
  slotGrad(r0: number, r1: number, seq: number, rowPos: number, L: number, K: number, V: number, da: number, G: number, H: number): void;
  nonFinite(a: number, n: number): number;
  transpose(src: number, rows: number, cols: number, dst: number): void;
  blocks(G: number, w1Finite: number, embFinite: number, live: number, tokens: number, counts: number, V: number, K: number, H: number): void;
  embGrad(G: number, w1T: number, live: number, out: number, V: number, K: number, D: number, H: number): void;
  w1Grad(G: number, emb: number, tokens: number, counts: number, out: number, V: number, K: number, D: number, H: number): void;
  b1Grad(G: number, V: number, H: number, out: number): void;
}
