/**
 * Seeded randomness. Two kinds:
 * - `createRng(seed)`: a sequential generator (mulberry32) for the CPU side (task sampling, init).
 * - `hashUniform(seed, a, b, c)`: a counter-based uniform in [0, 1) from PCG hashes, the same bits
 *   as `hashUniform` in kernels/common.wgsl, so the GPU and CPU backends sample the same tokens.
 */

/** PCG-RXS-M-XS 32-bit hash (Jarzynski & Olano, "Hash Functions for GPU Rendering", 2020). */
export function pcgHash(v: number): number {
  const state = (Math.imul(v >>> 0, 747796405) + 2891336453) >>> 0;
  const word = Math.imul(((state >>> ((state >>> 28) + 4)) ^ state) >>> 0, 277803737) >>> 0;
  return ((word >>> 22) ^ word) >>> 0;
}

/** Uniform in [0, 1) with 24 bits, exactly representable in f32 on both backends. */
export function hashUniform(seed: number, a: number, b: number, c: number): number {
  let h = pcgHash((seed >>> 0) ^ 0x9e3779b9);
  h = pcgHash((h + (a >>> 0)) >>> 0);
  h = pcgHash((h + (b >>> 0)) >>> 0);
  h = pcgHash((h + (c >>> 0)) >>> 0);
  return (h >>> 8) * (1 / 16777216);
}

export interface Rng {
  /** Uniform in [0, 1). */
  next(): number;
  /** Integer in [0, n). */
  int(n: number): number;
  /** Standard normal (Box-Muller). */
  normal(): number;
  /** A new independent stream derived from this one and a label. */
  fork(label: number): Rng;
}

/** mulberry32: small, fast and good enough for toy task sampling and weight init. */
export function createRng(seed: number): Rng {
  let s = seed >>> 0;
  const next = (): number => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (n) => Math.floor(next() * n),
    normal: () => {
      const u = Math.max(next(), 1e-12);
      const v = next();
      return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
    },
    fork: (label) => createRng(pcgHash((seed ^ pcgHash(label)) >>> 0)),
  };
}
