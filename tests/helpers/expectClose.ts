/**
 * Float comparison with absolute and relative tolerance (|a - e| <= atol + rtol |e|), reporting the
 * first mismatching index and the largest error, as tfjs's test helper does.
 */
export interface CloseOptions {
  atol: number;
  rtol: number;
  label?: string;
}

export interface CloseReport {
  maxAbs: number;
  maxRel: number;
}

export function compareClose(actual: ArrayLike<number>, expected: ArrayLike<number>, o: CloseOptions): CloseReport & { firstBad: number } {
  if (actual.length !== expected.length) {
    throw new Error(`${o.label ?? 'arrays'}: length ${actual.length} != expected ${expected.length}`);
  }
  let maxAbs = 0;
  let maxRel = 0;
  let firstBad = -1;
  for (let i = 0; i < actual.length; i++) {
    const a = actual[i]!;
    const e = expected[i]!;
    const err = Math.abs(a - e);
    const ok = Number.isFinite(a) === Number.isFinite(e) && (a === e || err <= o.atol + o.rtol * Math.abs(e));
    if (!ok && firstBad < 0) firstBad = i;
    if (Number.isFinite(err)) {
      maxAbs = Math.max(maxAbs, err);
      if (e !== 0) maxRel = Math.max(maxRel, err / Math.abs(e));
    }
  }
  return { maxAbs, maxRel, firstBad };
}

export function expectClose(actual: ArrayLike<number>, expected: ArrayLike<number>, o: CloseOptions): CloseReport {
  const r = compareClose(actual, expected, o);
  if (r.firstBad >= 0) {
    const i = r.firstBad;
    throw new Error(
      `${o.label ?? 'arrays'} differ at index ${i}: got ${actual[i]}, expected ${expected[i]} ` +
        `(atol ${o.atol}, rtol ${o.rtol}; max abs err ${r.maxAbs.toExponential(2)}, max rel err ${r.maxRel.toExponential(2)})`,
    );
  }
  return r;
}
