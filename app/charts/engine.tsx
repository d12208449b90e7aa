/**
 * Which library draws an x/y chart: the hand-written SVG chart (XYChart.tsx) or Recharts
 * (RechartsXY.tsx). Each view has its default, the engine that came closer to a main thread free
 * of long tasks (> 50 ms) in the page bench (bench/pageCharts.ts; BENCHMARKS.md "Charts: Recharts
 * against the hand-written SVG chart"). All three views are on the SVG chart: Recharts, animation
 * off, thinned, memoised and staggered, still spent 3-5x the SVG chart's main-thread time on the
 * live charts (86-87 long tasks in 20 s of training against 0-1) and on the Compare view; on the
 * lesson summary charts (their min-max bands a ranged Area) 3-6x, with long tasks in their
 * own drawing on 6 of 9 step loads against none. A view moves to Recharts here once a measurement
 * shows it at 0. The page's `?charts=recharts` or `?charts=svg` puts every view on one engine,
 * `?charts=lesson:recharts` one view (the bench compares them that way). Recharts loads as its own
 * chunk, only where a chart uses it.
 */
import { lazy, Suspense } from 'react';
import { XYChart, type XYChartProps } from './XYChart';

export type ChartEngine = 'svg' | 'recharts';
/** The views that draw x/y charts. */
export type ChartView = 'live' | 'compare' | 'lesson';

/** Each view's engine when the address names none. */
export const VIEW_ENGINE: Record<ChartView, ChartEngine> = { live: 'svg', compare: 'svg', lesson: 'svg' };

/** What a page address forces: an engine on every view, and engines on named views (these win). */
export interface ChartOverride {
  all: ChartEngine | null;
  views: Partial<Record<ChartView, ChartEngine>>;
}

const isEngine = (v: string | undefined): v is ChartEngine => v === 'recharts' || v === 'svg';
const isView = (v: string | undefined): v is ChartView => v === 'live' || v === 'compare' || v === 'lesson';

/**
 * The engines a page address forces: `?charts=recharts` (or `svg`) on every view,
 * `?charts=lesson:recharts` on one view, `?charts=svg,lesson:recharts` both, the named view winning
 * (so the bench can put one view on Recharts with the others on the SVG chart). Entries that name
 * no engine or view are ignored, as is an address without `charts`.
 */
export function chartEngineFrom(search: string): ChartOverride {
  const out: ChartOverride = { all: null, views: {} };
  for (const part of (new URLSearchParams(search).get('charts') ?? '').split(',')) {
    const [a, b] = part.split(':');
    if (b === undefined && isEngine(a)) out.all = a;
    else if (isView(a) && isEngine(b)) out.views[a] = b;
  }
  return out;
}

const forced: ChartOverride = typeof location === 'undefined' ? { all: null, views: {} } : chartEngineFrom(location.search);

/** The engine that draws `view`'s charts on this page. */
export function chartEngineFor(view: ChartView, override: ChartOverride = forced): ChartEngine {
  return override.views[view] ?? override.all ?? VIEW_ENGINE[view];
}

const RechartsXY = lazy(() => import('./RechartsXY'));

/** An x/y chart drawn by its view's engine. */
export function Chart(props: XYChartProps & { view: ChartView }) {
  const { view, ...chart } = props;
  if (chartEngineFor(view) === 'svg') return <XYChart {...chart} />;
  return (
    <Suspense fallback={<div className="xy-chart" style={{ height: chart.height }} />}>
      <RechartsXY {...chart} />
    </Suspense>
  );
}
