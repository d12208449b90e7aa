/** Small statistics for the benchmarks: summaries of repeated timings and log-log slopes. */

export interface Summary {
  /** Timed repetitions summarised (warm-up excluded). */
  n: number;
  median: number;
  min: number;
  max: number;
  mean: number;
}

export function summarize(xs: readonly number[]): Summary {
  const v = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  const n = v.length;
  if (n === 0) return { n: 0, median: NaN, min: NaN, max: NaN, mean: NaN };
  const median = n % 2 ? v[(n - 1) / 2]! : (v[n / 2 - 1]! + v[n / 2]!) / 2;
  return { n, median, min: v[0]!, max: v[n - 1]!, mean: v.reduce((a, b) => a + b, 0) / n };
}

/** Least-squares slope of log(y) against log(x): y ~ x^slope. NaN with fewer than 2 usable points. */
export function logLogSlope(xs: readonly number[], ys: readonly number[]): number {
  const pts: Array<[number, number]> = [];
  xs.forEach((x, i) => {
    const y = ys[i]!;
    if (x > 0 && y > 0 && Number.isFinite(x) && Number.isFinite(y)) pts.push([Math.log(x), Math.log(y)]);
  });
  if (pts.length < 2) return NaN;
  const mx = pts.reduce((a, [x]) => a + x, 0) / pts.length;
  const my = pts.reduce((a, [, y]) => a + y, 0) / pts.length;
  let sxy = 0;
  let sxx = 0;
  for (const [x, y] of pts) {
    sxy += (x - mx) * (y - my);
    sxx += (x - mx) ** 2;
  }
  return sxx > 0 ? sxy / sxx : NaN;
}

/** Slopes between consecutive points (to locate the knee where fixed overhead stops dominating). */
export function segmentSlopes(xs: readonly number[], ys: readonly number[]): number[] {
  const out: number[] = [];
  for (let i = 1; i < xs.length; i++) out.push(logLogSlope([xs[i - 1]!, xs[i]!], [ys[i - 1]!, ys[i]!]));
  return out;
}

/** Words for a log-log slope. */
export function growthWord(slope: number): string {
  if (!Number.isFinite(slope)) return 'n/a';
  if (slope < 0.25) return 'flat (fixed overhead dominates)';
  if (slope < 0.8) return 'sublinear (partly overhead-bound)';
  if (slope <= 1.2) return 'about linear';
  if (slope < 1.8) return 'superlinear';
  if (slope <= 2.2) return 'about quadratic';
  return 'faster than quadratic';
}

export const now = (): number => (typeof performance !== 'undefined' ? performance.now() : Date.now());
