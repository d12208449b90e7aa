/**
 * What each chart engine draws, as numbers, from the chart's props: the SVG chart's every
 * coordinate (plotLayout) and the rows and axes Recharts is handed (rechartsInput). Pure, so a
 * property test can feed both any values a file or a run may hold (±1e308, the largest double,
 * subnormals, infinities, NaN) and check that everything lands inside the plot area.
 *
 * The mechanism: each axis goes through drawableDomain (finite, bounded, wide enough to divide),
 * each value through plotScale or clampToDomain (held at the axis's end), ticks through
 * drawableTicks (finite and inside), and markers outside the x domain are not drawn at all, so
 * whatever a caller computed (a histogram's ticks from edges of ±1e308 are NaN), nothing is drawn
 * outside the chart and no NaN or Infinity reaches the SVG.
 */
import { tickFmt } from './format';
import { clampToDomain, drawableDomain, drawableTicks, lonePoints, linePath, plotScale, rangePath, stepPath, ticksWithin } from './scale';
import type { XYAxis, XYBand, XYMarker, XYSeries } from './XYChart';

export const PLOT = { top: 4, right: 12, yAxis: 56, xAxis: 30 } as const;

export interface PlotInput {
  data: readonly object[];
  xKey: string;
  series: readonly XYSeries[];
  x: XYAxis;
  y: XYAxis;
  height: number;
  markers?: readonly XYMarker[];
  bands?: readonly XYBand[];
}

export interface PlotLayout {
  left: number;
  right: number;
  top: number;
  bottom: number;
  xDomain: [number, number];
  yDomain: [number, number];
  sx: (v: number) => number;
  sy: (v: number) => number;
  xTicks: Array<{ value: number; at: number; label: string }>;
  yTicks: Array<{ value: number; at: number; label: string }>;
  /** Per series: its line (or step line), its step area, its band, its lone points. */
  paths: Array<{ line: string; area: string; band: string; dots: Array<[number, number]> }>;
  markers: Array<{ marker: XYMarker; at: number }>;
  bands: Array<{ band: XYBand; x: number; width: number }>;
}

/** Longest tick label, in characters, that fits beside the y axis (56 px at 11 px type). */
export const MAX_TICK_CHARS = 9;

/** A tick's label by the axis's format, or the short form where that one would run past the axis. */
export function fitLabel(format: (v: number) => string, v: number): string {
  const text = format(v);
  return text.length <= MAX_TICK_CHARS ? text : tickFmt(v);
}

/**
 * Ticks at least `gap` (a fraction of the axis) apart, the first kept: ticks a caller placed by its
 * own arithmetic (a histogram's quarters of subnormal edges) can fall on one spot, labels on labels.
 */
export function spacedTicks(ticks: readonly number[], domain: readonly [number, number], gap: number): number[] {
  const span = domain[1] - domain[0];
  const out: number[] = [];
  for (const t of ticks) if (out.length === 0 || (t - out[out.length - 1]!) / span >= gap) out.push(t);
  return out;
}

/** Least spacing of x ticks (a label is up to 9 characters) and y ticks, as fractions of the axis. */
const X_TICK_GAP = 0.06;
const Y_TICK_GAP = 0.05;

/** Every coordinate the SVG chart draws at `width` px (0: nothing yet). */
export function plotLayout(p: PlotInput, width: number): PlotLayout {
  const left = PLOT.yAxis;
  const right = Math.max(left + 1, width - PLOT.right);
  const top = PLOT.top;
  const bottom = Math.max(top + 1, p.height - PLOT.xAxis);
  const xDomain = drawableDomain(p.x.domain);
  const yDomain = drawableDomain(p.y.domain);
  const sx = plotScale(xDomain[0], xDomain[1], left, right);
  const sy = plotScale(yDomain[0], yDomain[1], bottom, top);
  let xt: number[];
  if (p.x.ticks) xt = drawableTicks(p.x.ticks, xDomain);
  else {
    // As many integer ticks as labels of this length fit (about 7 px a digit, 20 px apart).
    const chars = Math.max(p.x.format(xDomain[0]).length, p.x.format(xDomain[1]).length);
    xt = drawableTicks(ticksWithin(xDomain[0], xDomain[1], 1 + Math.max(1, Math.floor((right - left) / (chars * 7 + 20))), true), xDomain);
  }
  if (p.x.ticks && xt.length === 0) xt = drawableTicks(ticksWithin(xDomain[0], xDomain[1], 5), xDomain);
  let yt = drawableTicks(p.y.ticks ?? [], yDomain);
  if (p.y.ticks && p.y.ticks.length > 0 && yt.length === 0) yt = drawableTicks(ticksWithin(yDomain[0], yDomain[1], 5), yDomain);
  const paths =
    width > 0
      ? p.series.map((s) => {
          if (!s.stepArea) {
            const band = s.range ? rangePath(p.data, p.xKey, s.range[0], s.range[1], sx, sy) : '';
            return { line: linePath(p.data, p.xKey, s.key, sx, sy), area: '', band, dots: lonePoints(p.data, p.xKey, s.key, sx, sy) };
          }
          const line = stepPath(p.data, p.xKey, s.key, sx, sy);
          const xs = p.data.map((r) => (r as Record<string, unknown>)[p.xKey]).filter((v): v is number => typeof v === 'number' && Number.isFinite(v));
          if (xs.length === 0) return { line, area: '', band: '', dots: [] };
          const base = Math.min(bottom, Math.max(top, sy(0)));
          return { line, area: `${line}L${sx(xs[xs.length - 1]!)},${base}L${sx(xs[0]!)},${base}Z`, band: '', dots: [] };
        })
      : [];
  const inX = (v: number) => Number.isFinite(v) && v >= xDomain[0] && v <= xDomain[1];
  return {
    left,
    right,
    top,
    bottom,
    xDomain,
    yDomain,
    sx,
    sy,
    xTicks: spacedTicks(xt, xDomain, X_TICK_GAP).map((value) => ({ value, at: sx(value), label: fitLabel(p.x.format, value) })),
    yTicks: spacedTicks(yt, yDomain, Y_TICK_GAP).map((value) => ({ value, at: sy(value), label: fitLabel(p.y.format, value) })),
    paths,
    // A marker outside the x axis is not drawn: held at the edge it would point at the wrong iteration.
    markers: (p.markers ?? []).filter((m) => inX(m.x)).map((marker) => ({ marker, at: sx(marker.x) })),
    bands: (p.bands ?? [])
      .filter((b) => !Number.isNaN(b.x1) && !Number.isNaN(b.x2))
      .map((band) => {
        const a = sx(Math.min(band.x1, band.x2));
        return { band, x: a, width: Math.max(0, sx(Math.max(band.x1, band.x2)) - a) };
      }),
  };
}

export interface RechartsInput {
  data: object[];
  xDomain: [number, number];
  yDomain: [number, number];
  xTicks: number[] | undefined;
  yTicks: number[] | undefined;
  markers: XYMarker[];
  bands: XYBand[];
}

/**
 * What Recharts is handed: the same drawable axes, each row's x and series values held inside
 * them (a non-finite value becomes a gap), markers outside the x axis left out, bands clamped.
 */
export function rechartsInput(p: PlotInput): RechartsInput {
  const xDomain = drawableDomain(p.x.domain);
  const yDomain = drawableDomain(p.y.domain);
  const keys = new Set<string>();
  for (const s of p.series) {
    keys.add(s.key);
    if (s.range) for (const k of s.range) keys.add(k);
  }
  const data: object[] = [];
  for (const row of p.data) {
    const r = row as Record<string, unknown>;
    const x = r[p.xKey];
    if (typeof x !== 'number' || !Number.isFinite(x)) continue;
    const out: Record<string, unknown> = { ...r, [p.xKey]: clampToDomain(x, xDomain[0], xDomain[1]) };
    for (const k of keys) out[k] = clampToDomain(r[k], yDomain[0], yDomain[1]);
    data.push(out);
  }
  const xt = p.x.ticks ? drawableTicks(p.x.ticks, xDomain) : undefined;
  const yt = p.y.ticks ? drawableTicks(p.y.ticks, yDomain) : undefined;
  return {
    data,
    xDomain,
    yDomain,
    xTicks: xt && (xt.length === 0 ? drawableTicks(ticksWithin(xDomain[0], xDomain[1], 5), xDomain) : spacedTicks(xt, xDomain, X_TICK_GAP)),
    yTicks: yt && (yt.length === 0 && (p.y.ticks?.length ?? 0) > 0 ? drawableTicks(ticksWithin(yDomain[0], yDomain[1], 5), yDomain) : spacedTicks(yt, yDomain, Y_TICK_GAP)),
    markers: (p.markers ?? []).filter((m) => Number.isFinite(m.x) && m.x >= xDomain[0] && m.x <= xDomain[1]),
    bands: (p.bands ?? [])
      .filter((b) => !Number.isNaN(b.x1) && !Number.isNaN(b.x2))
      .map((b) => ({ ...b, x1: clampToDomain(b.x1, xDomain[0], xDomain[1])!, x2: clampToDomain(b.x2, xDomain[0], xDomain[1])! })),
  };
}
