/**
 * Just enough of a WebAssembly assembler to write the CPU backend's fixed-shape loops
 * (backwardKernels.ts) as TypeScript: every helper returns the instruction bytes of an expression or
 * a statement, so code reads as nested calls (`set(x, add(get(a), get(b)))`), and `wasmModule`
 * wraps functions over one imported memory into a module's bytes. Only the opcodes those loops use
 * are here; each is named as in the WebAssembly spec (0x6a is i32.add, SIMD ops follow 0xfd).
 */

export type Bytes = number[];

function uleb(n: number): Bytes {
  const out: Bytes = [];
  do {
    let b = n & 0x7f;
    n >>>= 7;
    if (n !== 0) b |= 0x80;
    out.push(b);
  } while (n !== 0);
  return out;
}

function sleb(n: number): Bytes {
  const out: Bytes = [];
  for (;;) {
    const b = n & 0x7f;
    n >>= 7;
    if ((n === 0 && (b & 0x40) === 0) || (n === -1 && (b & 0x40) !== 0)) return [...out, b];
    out.push(b | 0x80);
  }
}

const vec = (items: Bytes[]): Bytes => [...uleb(items.length), ...items.flat()];
const name = (s: string): Bytes => vec([...s].map((c) => [c.charCodeAt(0)]));
const section = (id: number, body: Bytes): Bytes => [id, ...uleb(body.length), ...body];

const I32 = 0x7f;
const F64 = 0x7c;
const V128 = 0x7b;

// ---- locals and constants
export const get = (i: number): Bytes => [0x20, ...uleb(i)];
export const set = (i: number, ...value: Bytes[]): Bytes => [...value.flat(), 0x21, ...uleb(i)];
export const i32 = (n: number): Bytes => [0x41, ...sleb(n)];
export const f64zero: Bytes = [0x44, 0, 0, 0, 0, 0, 0, 0, 0];
export const f64one: Bytes = [0x44, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f];

// ---- i32 arithmetic and comparisons (signed: every index here is below 2^31)
const bin = (op: number) => (a: Bytes, b: Bytes): Bytes => [...a, ...b, op];
export const add = bin(0x6a);
export const sub = bin(0x6b);
export const mul = bin(0x6c);
export const shl = bin(0x74);
export const ltS = bin(0x48);
export const ltU = bin(0x49);
const gtS = bin(0x4a);
export const remU = bin(0x70);
export const or = bin(0x72);
export const eqz = (a: Bytes): Bytes => [...a, 0x45];

// ---- floats: f64 arithmetic; comparisons as JavaScript's (-0 equals +0, NaN equals nothing)
export const fadd = bin(0xa0);
export const fsub = bin(0xa1);
export const fmul = bin(0xa2);
export const fne = bin(0x62);
export const f32ne = bin(0x5c);
export const f32zero: Bytes = [0x43, 0, 0, 0, 0];
/** |x| < Infinity for an f32: false for ±Infinity and NaN (Number.isFinite). */
export const f32finite = (x: Bytes): Bytes => [...x, 0x8b, 0x43, 0, 0, 0x80, 0x7f, 0x5d];

// ---- memory: byte addresses; the static offset is 0 and the alignment hint the type's own
const memop = (op: number, align: number) => (addr: Bytes): Bytes => [...addr, op, align, 0];
const storeop = (op: number, align: number) => (addr: Bytes, value: Bytes): Bytes => [...addr, ...value, op, align, 0];
export const loadI32 = memop(0x28, 2);
export const loadF32 = memop(0x2a, 2);
export const loadF64 = memop(0x2b, 3);
export const loadU8 = memop(0x2d, 0);
export const storeI32 = storeop(0x36, 2);
export const storeU8 = storeop(0x3a, 0);
export const storeF32 = storeop(0x38, 2);
export const storeF64 = storeop(0x39, 3);
/** f32 -> f64, exact. */
export const promote = (a: Bytes): Bytes => [...a, 0xbb];
/** f64 -> f32, round to nearest even: what a store into a Float32Array does. */
export const demote = (a: Bytes): Bytes => [...a, 0xb6];

// ---- SIMD: two f64 lanes, each an ordinary f64 operation (the same bits as the scalar one); the
// vectors here are 8-byte aligned, and the alignment hints say so
const simd = (op: number): Bytes => [0xfd, ...uleb(op)];
export const loadV = (addr: Bytes): Bytes => [...addr, ...simd(0x00), 3, 0];
export const storeV = (addr: Bytes, value: Bytes): Bytes => [...addr, ...value, ...simd(0x0b), 3, 0];
/** Two f32 at addr as the low lanes of a vector (v128.load64_zero), for promoteV. */
export const loadF32x2 = (addr: Bytes): Bytes => [...addr, ...simd(0x5d), 3, 0];
/** The low two f32 lanes as two f64 (f64x2.promote_low_f32x4). */
export const promoteV = (a: Bytes): Bytes => [...a, ...simd(0x5f)];
/** Two f64 lanes to f32 in the low two lanes, the others zero (f32x4.demote_f64x2_zero). */
export const demoteV = (a: Bytes): Bytes => [...a, ...simd(0x5e)];
/** Stores the low 8 bytes of a vector (v128.store64_lane, lane 0). */
export const storeLow64 = (addr: Bytes, value: Bytes): Bytes => [...addr, ...value, ...simd(0x5b), 3, 0, 0];
export const splat = (a: Bytes): Bytes => [...a, ...simd(0x14)];
export const vadd = (a: Bytes, b: Bytes): Bytes => [...a, ...b, ...simd(0xf0)];
export const vsub = (a: Bytes, b: Bytes): Bytes => [...a, ...b, ...simd(0xf1)];
export const vmul = (a: Bytes, b: Bytes): Bytes => [...a, ...b, ...simd(0xf2)];
export const vzero: Bytes = [...i32(0), ...simd(0x11)]; // i32x4.splat 0

// ---- control
export const ifThen = (cond: Bytes, ...body: Bytes[]): Bytes => [...cond, 0x04, 0x40, ...body.flat(), 0x0b];
export const ifElse = (cond: Bytes, then: Bytes[], otherwise: Bytes[]): Bytes => [...cond, 0x04, 0x40, ...then.flat(), 0x05, ...otherwise.flat(), 0x0b];

/**
 * 1 if cond(i) holds for some i in [from, to), else 0, into the local `flag`; the scan stops at
 * the first i that does.
 */
export function anyOf(i: number, from: Bytes, to: Bytes, cond: Bytes, flag: number): Bytes {
  return [
    ...set(flag, i32(0)),
    ...set(i, from),
    0x02, 0x40, 0x03, 0x40,
    ...eqz(ltS(get(i), to)), 0x0d, 1,
    ...cond, 0x04, 0x40, ...set(flag, i32(1)), 0x0c, 2, 0x0b,
    ...set(i, add(get(i), i32(1))),
    0x0c, 0,
    0x0b, 0x0b,
  ];
}

/**
 * for (i = from; i + step <= to; i += step) body — `to` is read every test, so a loop can go on
 * from where a wider one stopped (the same local) with a narrower step.
 */
export function forStep(i: number, from: Bytes | null, to: Bytes, step: number, ...body: Bytes[]): Bytes {
  return [
    ...(from ? set(i, from) : []),
    0x02, 0x40, 0x03, 0x40,
    ...gtS(add(get(i), i32(step)), to), 0x0d, 1, // br_if out
    ...body.flat(),
    ...set(i, add(get(i), i32(step))),
    0x0c, 0, // br loop
    0x0b, 0x0b,
  ];
}

export interface WasmFunction {
  name: string;
  /** Every parameter is an i32 (a count or a byte address). */
  params: number;
  /** Extra locals, in order after the parameters: i32, then f64, then v128. */
  locals: { i32?: number; f64?: number; v128?: number };
  /** An i32 result, left on the stack at the end of the body; none if absent. */
  returnsI32?: boolean;
  body: Bytes;
}

/** Locals numbered in the order wasmModule declares them: parameters, then i32, f64, v128. */
export function frame(params: string[], ints: string[], floats: string[], vecs: string[]) {
  const names = [...params, ...ints, ...floats, ...vecs];
  const at: Record<string, number> = Object.fromEntries(names.map((n, i) => [n, i]));
  return { at, params: params.length, locals: { i32: ints.length, f64: floats.length, v128: vecs.length } };
}

/** base + index * 2^log2Size: the byte address of an element. */
export const byteAt = (base: Bytes, index: Bytes, log2Size: number): Bytes => add(base, shl(index, i32(log2Size)));

/** A module of the given functions, exported by name, over one memory imported as env.memory. */
export function wasmModule(fns: WasmFunction[]): Uint8Array<ArrayBuffer> {
  const types = fns.map((f) => [0x60, ...vec(Array.from({ length: f.params }, () => [I32])), ...(f.returnsI32 ? [1, I32] : [0])]);
  const code = fns.map((f) => {
    const groups = ([[f.locals.i32, I32], [f.locals.f64, F64], [f.locals.v128, V128]] as const).filter(([n]) => n);
    const body = [...vec(groups.map(([n, t]) => [...uleb(n!), t])), ...f.body, 0x0b];
    return [...uleb(body.length), ...body];
  });
  return new Uint8Array([
    0x00, 0x61, 0x73, 0x6d, 1, 0, 0, 0,
    ...section(1, vec(types)),
    ...section(2, vec([[...name('env'), ...name('memory'), 0x02, 0x00, 0x01]])),
    ...section(3, vec(fns.map((_, i) => uleb(i)))),
    ...section(7, vec(fns.map((f, i) => [...name(f.name), 0x00, ...uleb(i)]))),
    ...section(10, vec(code)),
  ]);
}
