/**
 * Property test (seeded, so a failure reproduces) over extreme series for every chart kind: the
 * line charts (the live metrics, the Compare view's bands), the histograms (step areas over bin
 * edges, with their clip bands and zero line), both engines (the SVG chart's coordinates and what
 * Recharts is handed), the heatmaps' guide lines, and the labels and summaries beside them. Values
 * are ±1e308, the largest double, subnormals, ±Infinity, NaN and random magnitudes; whatever the
 * caller computed from them (a NaN tick, an overflowing domain), nothing may be drawn outside the
 * plot area and no NaN or Infinity may reach a coordinate or a label.
 */
import { describe, expect, it } from 'vitest';
import { fmt, percentText, tickFmt } from '../../app/charts/format';
import { plotLayout, rechartsInput, type PlotInput } from '../../app/charts/plot';
import { extent, fractionAlong, midpoint, niceScale } from '../../app/charts/scale';
import type { XYSeries } from '../../app/charts/XYChart';
import { createRng, type Rng } from '../../workers/core/rng';

const EXTREMES = [1e308, -1e308, Number.MAX_VALUE, -Number.MAX_VALUE, Number.MIN_VALUE, -Number.MIN_VALUE, Infinity, -Infinity, NaN, 0, -0, 1e-300, 1e300, 2 ** 53, 1e-7];

function value(rng: Rng): number {
  const r = rng.next();
  if (r < 0.5) return EXTREMES[rng.int(EXTREMES.length)]!;
  if (r < 0.8) return (rng.next() - 0.5) * 10 ** (rng.int(617) - 308);
  return rng.next();
}

const WIDTH = 640;
const HEIGHT = 200;
const num = /-?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?|NaN|-?Infinity/gi;

/** Every number of an SVG path or coordinate list, finite and inside the rectangle (with `slack` px); what is not, into `bad`. */
function inside(bad: string[], what: string, numbers: number[], xs: boolean[], box: { left: number; right: number; top: number; bottom: number }, slack = 0.51): void {
  numbers.forEach((n, i) => {
    const [a, b] = xs[i] ? [box.left, box.right] : [box.top, box.bottom];
    if (!(n >= a - slack && n <= b + slack)) bad.push(`${what}: ${n} outside [${a}, ${b}]`);
  });
}

function pathNumbers(d: string): { numbers: number[]; xs: boolean[] } {
  const numbers = (d.match(num) ?? []).map(Number);
  return { numbers, xs: numbers.map((_, i) => i % 2 === 0) };
}

/** The chart kinds as their callers build them (app/panels/MetricsCharts.tsx, app/compare, app/lessons). */
function lineChart(rng: Rng, withBand: boolean): PlotInput {
  const n = 1 + rng.int(60);
  const rows = Array.from({ length: n }, (_, i) => ({ iter: i + 1, a: value(rng), b: value(rng), lo: value(rng), hi: value(rng) }));
  const [ylo, yhi] = extent(rows, ['a', 'b']);
  const y = niceScale(ylo, yhi);
  const series: XYSeries[] = [
    { key: 'a', name: 'a', color: '#000', ...(withBand ? { range: ['lo', 'hi'] as [string, string] } : {}) },
    { key: 'b', name: 'b', color: '#111' },
  ];
  const markers = Array.from({ length: rng.int(4) }, () => ({ x: rng.next() < 0.5 ? value(rng) : 1 + rng.int(n), color: '#f00', label: 'm' }));
  return { data: rows, xKey: 'iter', series, x: { domain: [1, Math.max(2, n)], format: String }, y: { ...y, format: tickFmt }, height: HEIGHT, markers };
}

function histogram(rng: Rng): PlotInput {
  const bins = 1 + rng.int(30);
  const kind = rng.int(4);
  const a = value(rng);
  const b = value(rng);
  // Edges as a file may hold them: extreme, subnormal, all equal, or random.
  const edges = Array.from({ length: bins + 1 }, (_, i) =>
    kind === 0 ? (i / bins - 0.5) * 2e308 : kind === 1 ? i * Number.MIN_VALUE : kind === 2 ? a : Math.min(a, b) + (i / bins) * (Math.max(a, b) - Math.min(a, b)),
  );
  const counts = Array.from({ length: bins }, () => (rng.next() < 0.2 ? value(rng) : rng.int(1000)));
  const data = edges.map((x, i) => ({ x, count: counts[Math.min(i, counts.length - 1)]! }));
  const lo = edges[0]!;
  const hi = edges[edges.length - 1]!;
  // The histogram's own tick arithmetic, which overflows on such edges: the engine must cope.
  const ticks = [lo, (lo + hi) / 2 - (hi - lo) / 4, (lo + hi) / 2, (lo + hi) / 2 + (hi - lo) / 4, hi];
  const y = niceScale(0, Math.max(...counts.filter(Number.isFinite), 1), 5, true);
  const clip: [number, number] = [value(rng), value(rng)];
  return {
    data,
    xKey: 'x',
    series: [{ key: 'count', name: 'count', color: '#00f', stepArea: true }],
    x: { domain: [lo, hi], ticks, format: tickFmt },
    y: { ...y, format: String },
    height: 170,
    markers: [{ x: 0, color: '#999' }],
    bands: [
      { x1: lo, x2: clip[0], fill: '#f00', opacity: 0.1, label: 'clipped' },
      { x1: clip[1], x2: hi, fill: '#f00', opacity: 0.1 },
    ],
  };
}

function checkSvgChart(input: PlotInput, what: string): void {
  const l = plotLayout(input, WIDTH);
  const box = { left: l.left, right: l.right, top: l.top, bottom: l.bottom };
  const bad: string[] = [];
  if (!(l.xDomain.every(Number.isFinite) && l.yDomain.every(Number.isFinite) && l.xDomain[1] > l.xDomain[0] && l.yDomain[1] > l.yDomain[0])) bad.push(`domains ${l.xDomain} ${l.yDomain}`);
  for (const p of l.paths) {
    for (const d of [p.line, p.area, p.band]) {
      if (/NaN|Infinity/.test(d)) bad.push(`path ${d.slice(0, 80)}`);
      const { numbers, xs } = pathNumbers(d);
      inside(bad, `path ${d.slice(0, 60)}`, numbers, xs, box);
    }
    for (const [cx, cy] of p.dots) inside(bad, 'dot', [cx, cy], [true, false], box);
  }
  for (const t of [...l.xTicks, ...l.yTicks]) if (/NaN|Infinity/.test(t.label) || t.label.length > 9) bad.push(`tick label "${t.label}"`);
  for (const t of l.xTicks) inside(bad, `x tick ${t.value}`, [t.at], [true], box);
  // Labels do not fall on labels: ticks at least a few percent of the axis apart.
  l.xTicks.forEach((t, i) => i > 0 && t.at - l.xTicks[i - 1]!.at < 0.05 * (l.right - l.left) && bad.push(`x ticks ${l.xTicks[i - 1]!.label} and ${t.label} overlap`));
  for (const t of l.yTicks) inside(bad, `y tick ${t.value}`, [t.at], [false], box);
  for (const m of l.markers) inside(bad, 'marker', [m.at], [true], box);
  for (const b of l.bands) inside(bad, 'band', [b.x, b.x + b.width], [true, true], box);
  expect(bad, what).toEqual([]);
}

function checkRecharts(input: PlotInput, what: string): void {
  const r = rechartsInput(input);
  const [x0, x1] = r.xDomain;
  const [y0, y1] = r.yDomain;
  const bad: string[] = [];
  if (![x0, x1, y0, y1].every(Number.isFinite)) bad.push(`domains ${r.xDomain} ${r.yDomain}`);
  const keys = input.series.flatMap((s) => [s.key, ...(s.range ?? [])]);
  for (const row of r.data as Array<Record<string, number | null>>) {
    const x = row[input.xKey];
    if (!(typeof x === 'number' && x >= x0 && x <= x1)) bad.push(`x ${x}`);
    for (const k of keys) {
      const v = row[k];
      if (v !== null && !(typeof v === 'number' && v >= y0 && v <= y1)) bad.push(`${k} ${v}`);
    }
  }
  for (const t of r.xTicks ?? []) if (!(t >= x0 && t <= x1)) bad.push(`x tick ${t}`);
  for (const t of r.yTicks ?? []) if (!(t >= y0 && t <= y1)) bad.push(`y tick ${t}`);
  for (const m of r.markers) if (!(m.x >= x0 && m.x <= x1)) bad.push(`marker ${m.x}`);
  for (const b of r.bands) if (!(b.x1 >= x0 && b.x1 <= x1 && b.x2 >= x0 && b.x2 <= x1)) bad.push(`band ${b.x1}..${b.x2}`);
  expect(bad, what).toEqual([]);
}

describe('charts over extreme series', () => {
  it('line charts, bands, histograms: both engines draw inside the plot area, with finite coordinates and labels', () => {
    const rng = createRng(0xc4a7);
    for (let n = 0; n < 1500; n++) {
      const kind = n % 3;
      const input = kind === 0 ? lineChart(rng, false) : kind === 1 ? lineChart(rng, true) : histogram(rng);
      const what = `${['line', 'band', 'histogram'][kind]} #${n}`;
      checkSvgChart(input, what);
      checkRecharts(input, what);
    }
  });

  it('the reported cases: rows alternating ±1e308, the largest double, 5e-324 bin edges, all-equal bin edges', () => {
    const rows = Array.from({ length: 400 }, (_, i) => ({ iter: i + 1, a: i % 2 ? -1e308 : 1e308, b: i === 399 ? Number.MAX_VALUE : 0 }));
    const y = niceScale(...extent(rows, ['a', 'b']));
    const alternating: PlotInput = { data: rows, xKey: 'iter', series: [{ key: 'a', name: 'a', color: '#000' }, { key: 'b', name: 'b', color: '#000' }], x: { domain: [1, 400], format: String }, y: { ...y, format: tickFmt }, height: 300 };
    checkSvgChart(alternating, 'alternating');
    checkRecharts(alternating, 'alternating');
    for (const edges of [Array.from({ length: 25 }, (_, i) => i * 5e-324), Array.from({ length: 25 }, () => 0.5), Array.from({ length: 25 }, (_, i) => (i / 12 - 1) * 1e308)]) {
      const data = edges.map((x) => ({ x, count: 3 }));
      const lo = edges[0]!;
      const hi = edges[24]!;
      const h: PlotInput = { data, xKey: 'x', series: [{ key: 'count', name: 'count', color: '#00f', stepArea: true }], x: { domain: [lo, hi], ticks: [lo, (lo + hi) / 2 - (hi - lo) / 4, (lo + hi) / 2, hi], format: tickFmt }, y: { ...niceScale(0, 3, 5, true), format: String }, height: 170, markers: [{ x: 0, color: '#999' }] };
      checkSvgChart(h, `edges ${lo}..${hi}`);
      checkRecharts(h, `edges ${lo}..${hi}`);
    }
  });

  it('heatmap guides and labels: a position along any edges is finite, or not drawn', () => {
    const rng = createRng(5);
    for (let n = 0; n < 3000; n++) {
      const a = value(rng);
      const b = value(rng);
      const [lo, hi] = a < b ? [a, b] : [b, a];
      const v = value(rng);
      const f = fractionAlong(v, lo, hi);
      // Inside the edges: a finite place on the map (drawn), or NaN (not drawn); never outside it.
      if (Number.isFinite(lo) && Number.isFinite(hi) && v > lo && v < hi && !Number.isNaN(f)) {
        expect(f >= -1e-9 && f <= 1 + 1e-9, `${v} along ${lo}..${hi}: ${f}`).toBe(true);
      }
      expect(tickFmt(midpoint(lo, hi))).not.toMatch(/NaN|Infinity/);
    }
    expect(midpoint(Number.MAX_VALUE, Number.MAX_VALUE)).toBe(Number.MAX_VALUE);
  });

  it('labels and summaries read as numbers: no "Infinity%", no NaN, short axis labels', () => {
    expect(percentText(Number.MAX_VALUE)).toBe('1.80e+310%');
    expect(percentText(-Number.MAX_VALUE)).toBe('-1.80e+310%');
    expect(percentText(0.256)).toBe('25.6%');
    expect(percentText(Infinity)).toBe('∞');
    expect(percentText(NaN)).toBe('–');
    expect(percentText(5e-324)).toBe('0.0%');
    expect(tickFmt(1e20)).toBe('1e20');
    expect(tickFmt(-Number.MAX_VALUE)).toBe('-1.8e308');
    expect(tickFmt(5e-324)).toBe('4.9e-324');
    expect(fmt(-Infinity)).toBe('−∞');
    const rng = createRng(11);
    for (let n = 0; n < 3000; n++) {
      const v = value(rng);
      for (const text of [percentText(v), fmt(v), tickFmt(v)]) expect(text, String(v)).not.toMatch(/NaN|Infinity/);
      expect(tickFmt(v).length, String(v)).toBeLessThanOrEqual(9);
    }
  });
});
