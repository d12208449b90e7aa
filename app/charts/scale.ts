/**
 * Axis arithmetic for the SVG charts (app/charts/XYChart.tsx): "nice" domains and ticks, linear
 * scales, and SVG paths from rows. Pure functions, no DOM.
 */

/** A step of 1, 2, 2.5 or 5 times a power of ten, about `span / intervals`. */
export function niceStep(span: number, intervals: number): number {
  const raw = span / Math.max(1, intervals);
  if (!(raw > 0) || !Number.isFinite(raw)) return 1;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const n = (raw / mag) * (1 - 1e-9);
  return (n <= 1 ? 1 : n <= 2 ? 2 : n <= 2.5 ? 2.5 : n <= 5 ? 5 : 10) * mag;
}

/**
 * Largest magnitude an axis spans. Values beyond it (an imported 1e308) are drawn at the edge: a
 * span of two such values is not a finite number, and no step divides it into a few ticks.
 */
export const AXIS_LIMIT = 1e300;
/** Most ticks one axis gets, whatever its domain and step: a bound on the tick loop. */
export const MAX_TICKS = 1000;

const clampAxis = (v: number) => Math.min(AXIS_LIMIT, Math.max(-AXIS_LIMIT, v));

/** Multiples of `step` from `lo` to `hi` (both on the grid), without floating-point dust. */
function steps(lo: number, hi: number, step: number): number[] {
  const n = Math.round(hi / step - lo / step);
  if (!(n >= 0 && n <= MAX_TICKS)) return lo < hi ? [lo, hi] : Number.isFinite(lo) ? [lo] : [];
  const out: number[] = [];
  for (let i = 0; i <= n; i++) out.push(Number((lo + i * step).toPrecision(12)));
  return out;
}

export interface AxisScale {
  domain: [number, number];
  ticks: number[];
}

/**
 * A domain that holds [lo, hi], widened to multiples of a nice step, with its ticks (about `count`).
 * An empty or one-value range is padded first, so a constant series sits in the middle.
 */
export function niceScale(lo: number, hi: number, count = 5, integer = false): AxisScale {
  if (Number.isNaN(lo) || Number.isNaN(hi)) [lo, hi] = [0, 1];
  [lo, hi] = [clampAxis(lo), clampAxis(hi)];
  if (lo > hi) [lo, hi] = [hi, lo];
  if (lo === hi) {
    const pad = lo === 0 ? 1 : Math.abs(lo) * 0.2;
    [lo, hi] = [lo - pad, hi + pad];
  }
  let step = niceStep(hi - lo, count - 1);
  if (integer) step = Math.max(1, Math.ceil(step));
  const ticks = steps(Math.floor(lo / step) * step, Math.ceil(hi / step) * step, step);
  return { domain: [ticks[0]!, ticks[ticks.length - 1]!], ticks };
}

/** Ticks at multiples of a nice step inside [lo, hi] (the domain is kept as it is). */
export function ticksWithin(lo: number, hi: number, count: number, integer = false): number[] {
  if (Number.isNaN(lo) || Number.isNaN(hi)) return [];
  [lo, hi] = [clampAxis(lo), clampAxis(hi)];
  if (!(hi > lo)) return [lo];
  let step = niceStep(hi - lo, Math.max(1, count - 1));
  if (integer) step = Math.max(1, Math.ceil(step));
  const a = Math.ceil(lo / step - 1e-9) * step;
  const b = Math.floor(hi / step + 1e-9) * step;
  return b < a ? [] : steps(a, b, step);
}

/** The smallest and largest finite value of `keys` over `rows`; [NaN, NaN] when there is none. */
export function extent(rows: readonly object[], keys: readonly string[]): [number, number] {
  let lo = Infinity;
  let hi = -Infinity;
  for (const r of rows) {
    for (const k of keys) {
      const v = (r as Record<string, unknown>)[k];
      if (typeof v === 'number' && Number.isFinite(v)) {
        if (v < lo) lo = v;
        if (v > hi) hi = v;
      }
    }
  }
  return lo <= hi ? [lo, hi] : [NaN, NaN];
}

/**
 * Smallest span a drawn domain has: below it (subnormal histogram edges, 0 to 5e-324) the pixels
 * per unit are not a finite number. A narrower domain is widened about its middle.
 */
const MIN_SPAN = 1e-290;

/** Half of a + b without overflow: the middle of two values near the largest double. */
export function midpoint(a: number, b: number): number {
  return a / 2 + b / 2;
}

/**
 * Where `v` lies along [lo, hi], as a fraction (0 at lo, 1 at hi), without overflow: a heatmap's
 * bin edges may span ±1e308, whose difference is not a finite number. NaN when it has no place.
 */
export function fractionAlong(v: number, lo: number, hi: number): number {
  const span = hi - lo;
  if (span > 0 && Number.isFinite(span)) return (v - lo) / span;
  // Halves: the span of ±1e308 overflows, the halves' does not (a subnormal span halves to 0: no place).
  const half = hi / 2 - lo / 2;
  return half > 0 && Number.isFinite(half) ? (v / 2 - lo / 2) / half : NaN;
}

/**
 * A domain that can be drawn: finite, within ±AXIS_LIMIT, ascending, and wide enough that its
 * pixels per unit are finite. Every chart engine maps through this, whatever its caller passed
 * ([-1e308, 1e308], [0, 5e-324], [NaN, 3]).
 */
export function drawableDomain(domain: readonly [number, number]): [number, number] {
  let [lo, hi] = domain;
  if (Number.isNaN(lo) && Number.isNaN(hi)) [lo, hi] = [0, 1];
  else if (Number.isNaN(lo)) lo = hi;
  else if (Number.isNaN(hi)) hi = lo;
  [lo, hi] = [clampAxis(lo), clampAxis(hi)];
  if (lo > hi) [lo, hi] = [hi, lo];
  const min = Math.max(MIN_SPAN, Math.max(Math.abs(lo), Math.abs(hi)) * 1e-12);
  if (!(hi - lo >= min)) {
    const mid = midpoint(lo, hi);
    [lo, hi] = [clampAxis(mid - min / 2), clampAxis(mid + min / 2)];
    if (!(hi > lo)) [lo, hi] = mid > 0 ? [mid - min, mid] : [mid, mid + min];
  }
  return [lo, hi];
}

/** The ticks that can be drawn on `domain` (a drawableDomain): finite, inside it, ascending, once each. */
export function drawableTicks(ticks: readonly number[], domain: readonly [number, number]): number[] {
  const [lo, hi] = domain;
  const slack = (hi - lo) * 1e-9;
  const out = ticks.filter((t) => Number.isFinite(t) && t >= lo - slack && t <= hi + slack).sort((a, b) => a - b);
  return out.filter((t, i) => i === 0 || t !== out[i - 1]);
}

/**
 * Maps [d0, d1] (a drawableDomain) onto [r0, r1], holding values outside the domain at its ends:
 * a value of 1e308 on an axis that stops at 1e300 is drawn at the end of the axis, never 7e9 px
 * away; ±Infinity likewise. NaN stays NaN (the path functions skip it).
 */
export function plotScale(d0: number, d1: number, r0: number, r1: number): (v: number) => number {
  const k = (r1 - r0) / (d1 - d0);
  return (v) => (v <= d0 ? r0 : v >= d1 ? r1 : r0 + (v - d0) * k);
}

/** A value held inside [lo, hi]; non-finite values (NaN, ±Infinity held by the comparison) as null. */
export function clampToDomain(v: unknown, lo: number, hi: number): number | null {
  if (typeof v !== 'number' || Number.isNaN(v)) return null;
  return v < lo ? lo : v > hi ? hi : v;
}

/** Maps [d0, d1] linearly onto [r0, r1]; a zero-width domain maps to the middle. */
export function linear(d0: number, d1: number, r0: number, r1: number): (v: number) => number {
  const k = d1 !== d0 ? (r1 - r0) / (d1 - d0) : 0;
  const mid = (r0 + r1) / 2;
  return d1 !== d0 ? (v) => r0 + (v - d0) * k : () => mid;
}

const r1 = (v: number) => Math.round(v * 10) / 10;

/** A polyline through the finite points of `key` (broken where a value is missing or not finite). */
export function linePath(rows: readonly object[], xKey: string, key: string, sx: (v: number) => number, sy: (v: number) => number): string {
  let d = '';
  let pen = false;
  for (const row of rows) {
    const r = row as Record<string, unknown>;
    const x = r[xKey];
    const y = r[key];
    if (typeof x !== 'number' || typeof y !== 'number' || !Number.isFinite(x) || !Number.isFinite(y)) {
      pen = false;
      continue;
    }
    d += `${pen ? 'L' : 'M'}${r1(sx(x))},${r1(sy(y))}`;
    pen = true;
  }
  return d;
}

/**
 * A closed band between `lo` and `hi` (along `hi`, back along `lo`) over the rows where both are
 * finite; '' with fewer than two such rows.
 */
export function rangePath(rows: readonly object[], xKey: string, lo: string, hi: string, sx: (v: number) => number, sy: (v: number) => number): string {
  const pts: Array<[number, number, number]> = [];
  for (const row of rows) {
    const r = row as Record<string, unknown>;
    const x = r[xKey];
    const a = r[lo];
    const b = r[hi];
    if (typeof x === 'number' && typeof a === 'number' && typeof b === 'number' && Number.isFinite(x) && Number.isFinite(a) && Number.isFinite(b)) pts.push([r1(sx(x)), r1(sy(a)), r1(sy(b))]);
  }
  if (pts.length < 2) return '';
  const top = pts.map(([x, , b], i) => `${i ? 'L' : 'M'}${x},${b}`).join('');
  const back = pts.reverse().map(([x, a]) => `L${x},${a}`).join('');
  return `${top}${back}Z`;
}

/**
 * Points with no finite neighbour on either side, which a polyline cannot show (a run's first
 * iteration, a value between two gaps); the chart draws each as a dot.
 */
export function lonePoints(rows: readonly object[], xKey: string, key: string, sx: (v: number) => number, sy: (v: number) => number): Array<[number, number]> {
  const at = (i: number): [number, number] | null => {
    const r = rows[i] as Record<string, unknown> | undefined;
    const x = r?.[xKey];
    const y = r?.[key];
    return typeof x === 'number' && typeof y === 'number' && Number.isFinite(x) && Number.isFinite(y) ? [x, y] : null;
  };
  const out: Array<[number, number]> = [];
  for (let i = 0; i < rows.length; i++) {
    const p = at(i);
    if (p && !at(i - 1) && !at(i + 1)) out.push([r1(sx(p[0])), r1(sy(p[1]))]);
  }
  return out;
}

/** A step line (each value held until the next x) through `key`; non-finite values count as 0, rows without a finite x are left out. */
export function stepPath(rows: readonly object[], xKey: string, key: string, sx: (v: number) => number, sy: (v: number) => number): string {
  let d = '';
  let prevY = 0;
  for (const row of rows) {
    const r = row as Record<string, unknown>;
    const xv = r[xKey];
    if (typeof xv !== 'number' || !Number.isFinite(xv)) continue;
    const x = r1(sx(xv));
    const v = r[key];
    const y = r1(sy(typeof v === 'number' && Number.isFinite(v) ? v : 0));
    d += d === '' ? `M${x},${y}` : `L${x},${prevY}L${x},${y}`;
    prevY = y;
  }
  return d;
}

/** Index of the row whose x is nearest to `x` (`floor`: the last row at or before it); rows ascend in x. */
export function indexAt(rows: readonly object[], xKey: string, x: number, floor = false): number {
  if (rows.length === 0) return -1;
  const xs = (i: number) => (rows[i] as Record<string, number>)[xKey]!;
  let lo = 0;
  let hi = rows.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (xs(mid) <= x) lo = mid;
    else hi = mid - 1;
  }
  if (floor || lo === rows.length - 1) return lo;
  if (xs(lo) > x) return lo;
  return x - xs(lo) <= xs(lo + 1) - x ? lo : lo + 1;
}
