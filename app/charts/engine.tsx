/**
 * Which library draws the x/y charts: the hand-written SVG chart (XYChart.tsx, the default) or
 * Recharts (RechartsXY.tsx), chosen by the page's `?charts=recharts` (or `?charts=svg`). The page
 * bench trains with each and counts main-thread long tasks; the default is the one that keeps
 * training free of them. Recharts loads as its own chunk, only when chosen.
 */
import { lazy, Suspense } from 'react';
import { XYChart, type XYChartProps } from './XYChart';

export type ChartEngine = 'svg' | 'recharts';

/** The engine a page address asks for; anything but `charts=recharts` is the SVG chart. */
export function chartEngineFrom(search: string): ChartEngine {
  return new URLSearchParams(search).get('charts') === 'recharts' ? 'recharts' : 'svg';
}

export const chartEngine: ChartEngine = typeof location === 'undefined' ? 'svg' : chartEngineFrom(location.search);

const RechartsXY = lazy(() => import('./RechartsXY'));

/** An x/y chart drawn by the page's engine. */
export function Chart(props: XYChartProps) {
  if (chartEngine === 'svg') return <XYChart {...props} />;
  return (
    <Suspense fallback={<div className="xy-chart" style={{ height: props.height }} />}>
      <RechartsXY {...props} />
    </Suspense>
  );
}
