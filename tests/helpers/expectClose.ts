import { expect } from 'vitest';

/**
 * Float comparison in the tfjs style: |a - e| <= atol + rtol * |e| elementwise. On failure the
 * message names the first mismatching index and the largest error; on success the largest errors
 * are returned (and logged when `label` is given) so the report can quote them.
 */
export interface CloseOptions {
  atol: number;
  rtol: number;
  label?: string;
}

export interface CloseReport {
  maxAbs: number;
  maxRel: number;
  /** Index of the largest absolute error. */
  at: number;
}

/** The comparison without throwing: errors and the first index outside tolerance (-1 if none). */
export function compareClose(
  actual: ArrayLike<number>,
  expected: ArrayLike<number>,
  o: CloseOptions,
): CloseReport & { firstBad: number; bad: number } {
  if (actual.length !== expected.length) {
    throw new Error(`${o.label ?? 'values'}: length ${actual.length}, expected ${expected.length}`);
  }
  let maxAbs = 0;
  let maxRel = 0;
  let at = -1;
  let firstBad = -1;
  let bad = 0;
  for (let i = 0; i < actual.length; i++) {
    const a = actual[i]!;
    const e = expected[i]!;
    const same = a === e || (Number.isNaN(a) && Number.isNaN(e));
    const err = same ? 0 : Math.abs(a - e);
    // NaN or an infinity against a finite value gives err NaN/Infinity: never within tolerance.
    const ok = same || err <= o.atol + o.rtol * Math.abs(e);
    if (!same && !Number.isFinite(err)) {
      maxAbs = Infinity;
      at = i;
    } else if (err > maxAbs) {
      maxAbs = err;
      at = i;
    }
    if (!same && Math.abs(e) > 0) maxRel = Math.max(maxRel, err / Math.abs(e));
    if (!ok) {
      bad++;
      if (firstBad < 0) firstBad = i;
    }
  }
  return { maxAbs, maxRel, at, firstBad, bad };
}

export function expectClose(actual: ArrayLike<number>, expected: ArrayLike<number>, o: CloseOptions): CloseReport {
  const name = o.label ?? 'values';
  const { maxAbs, maxRel, at, firstBad: first, bad } = compareClose(actual, expected, o);
  if (bad > 0) {
    throw new Error(
      `${name}: ${bad} of ${actual.length} differ (atol ${o.atol}, rtol ${o.rtol}); first at [${first}]: ` +
        `got ${actual[first]}, expected ${expected[first]}; max |err| ${maxAbs} at [${at}] ` +
        `(got ${actual[at]}, expected ${expected[at]})`,
    );
  }
  if (o.label) console.info(`[close] ${o.label}: max |err| ${maxAbs.toExponential(2)}, max rel ${maxRel.toExponential(2)} (n=${actual.length})`);
  return { maxAbs, maxRel, at };
}

/** Exact equality with the first mismatch named. */
export function expectEqualArrays(actual: ArrayLike<number>, expected: ArrayLike<number>, label = 'values'): void {
  if (actual.length !== expected.length) throw new Error(`${label}: length ${actual.length}, expected ${expected.length}`);
  for (let i = 0; i < actual.length; i++) {
    if (actual[i] !== expected[i]) {
      let count = 0;
      for (let j = 0; j < actual.length; j++) if (actual[j] !== expected[j]) count++;
      throw new Error(`${label}: ${count} of ${actual.length} differ; first at [${i}]: got ${actual[i]}, expected ${expected[i]}`);
    }
  }
}

/** The same length and bit for bit the same values (NaN equals NaN), naming the first that differs. */
export function expectSameBits(got: Float32Array | Float64Array, want: Float32Array | Float64Array, what: string) {
  expect(got.length, what).toBe(want.length);
  const first = want.findIndex((w, i) => !Object.is(w, got[i]));
  expect(first, `${what}: first entry that differs (got ${got[first]}, want ${want[first]})`).toBe(-1);
}
