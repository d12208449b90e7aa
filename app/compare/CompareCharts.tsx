/**
 * Runs A and B overlaid, one line chart per metric (drawn by the Compare view's engine,
 * app/charts/engine.tsx): A solid blue, B dashed orange (told apart by dash as well as colour), the
 * legend naming what differs. The metrics and their axes are the live charts' own list
 * (app/charts/chartGroups.ts compareCharts). Each chart can show its data as a table (iteration,
 * A, B) and download as PNG or SVG. Containers carry data-points-a / data-points-b for the e2e tests.
 */
import { memo, useId, useMemo, useRef, useState } from 'react';
import { ChartExport } from '../charts/ChartExport';
import { compareCharts, groupYScale, type CompareChartSpec } from '../charts/chartGroups';
import { extent } from '../charts/scale';
import { chartSvg } from '../exporters';
import { fmt, thin, tickFmt } from '../charts/format';
import { Chart } from '../charts/engine';
import { useStaggeredSeries } from '../charts/stagger';
import type { XYSeries } from '../charts/XYChart';
import { METRIC_DOCS, type MetricRow, type ScalarMetric } from '../../workers/meta';
import './CompareCharts.css';

/** The two runs' line styles: colour and dash both differ (colour-blind and greyscale safe). */
export const RUN_STYLE = {
  a: { color: '#3b82f6', dash: undefined, width: 2, look: 'solid blue' },
  b: { color: '#f97316', dash: '7 4', width: 2.5, look: 'dashed orange' },
} as const;

/** The compared metrics: the live charts' list. */
export const COMPARED: CompareChartSpec[] = compareCharts();

/** Points drawn per chart at most; longer runs are thinned (every k-th iteration, the last kept). */
const MAX_DRAWN = 400;
const TABLE_ROWS = 100;

interface Point {
  iter: number;
  a?: number;
  b?: number;
}

/** Both runs' values of `metric`, by iteration. */
function merge(a: MetricRow[], b: MetricRow[], metric: ScalarMetric): Point[] {
  const byIter = new Map<number, Point>();
  for (const r of a) byIter.set(r.iter, { iter: r.iter, a: r[metric] });
  for (const r of b) byIter.set(r.iter, { ...(byIter.get(r.iter) ?? { iter: r.iter }), b: r[metric] });
  return [...byIter.values()].sort((x, y) => x.iter - y.iter);
}

const iterTitle = (x: number) => `iteration ${x}`;

const CompareChart = memo(function CompareChart(props: { spec: CompareChartSpec; slot: number; a: MetricRow[]; b: MetricRow[]; legendA: string; legendB: string }) {
  const { spec, slot, a, b, legendA, legendB } = props;
  const figure = useRef<HTMLElement>(null);
  const tableId = useId();
  const [table, setTable] = useState(false);
  const points = useMemo(() => merge(a, b, spec.metric), [a, b, spec.metric]);
  // While the pair trains, each chart takes new rows at its own slot of the stagger period, so the
  // eight charts redraw in eight tasks rather than one (as the live charts do).
  const drawn = useStaggeredSeries(
    useMemo(() => thin(points, MAX_DRAWN), [points]),
    slot,
    COMPARED.length,
  );
  const series = useMemo<XYSeries[]>(
    () =>
      (['a', 'b'] as const).map((side) => ({
        key: side,
        name: side === 'a' ? legendA : legendB,
        color: RUN_STYLE[side].color,
        dash: RUN_STYLE[side].dash,
        width: RUN_STYLE[side].width,
      })),
    [legendA, legendB],
  );
  const axes = useMemo(() => {
    let [lo, hi] = extent(drawn, ['iter']);
    if (Number.isNaN(lo)) [lo, hi] = [0, 1];
    if (hi <= lo) hi = lo + 1;
    const [ylo, yhi] = extent(drawn, ['a', 'b']);
    const y = groupYScale(spec.domain, ylo, yhi);
    return { x: { domain: [lo, hi] as [number, number], format: String }, y: { ...y, format: tickFmt } };
  }, [drawn, spec.domain]);
  const shown = points.slice(-TABLE_ROWS);
  const caption = `${spec.title}: A ${a.length} iterations, B ${b.length} iterations${shown.length < points.length ? ` (the last ${shown.length} shown)` : ''}`;
  return (
    <figure className="chart" data-testid={`compare-${spec.metric}`} data-points-a={a.length} data-points-b={b.length} title={`${spec.metric}: ${METRIC_DOCS[spec.metric]}`} ref={figure}>
      <figcaption>
        <span>{spec.title}</span>
        <span className="chart-tools">
          <button
            type="button"
            className="mini"
            aria-expanded={table}
            aria-controls={tableId}
            aria-label={`${table ? 'Hide' : 'Show'} the ${spec.title} data as a table`}
            onClick={() => setTable(!table)}
          >
            Table
          </button>
          <ChartExport
            title={spec.title}
            render={() => (figure.current ? chartSvg(figure.current, spec.title, series.map((x) => ({ name: x.name, color: x.color }))) : null)}
            fileName={() => `rl-playground-compare-${spec.metric}`}
          />
        </span>
      </figcaption>
      <p className="chart-doc">{METRIC_DOCS[spec.metric]}</p>
      <Chart
        view="compare"
        data={drawn}
        xKey="iter"
        series={series}
        x={axes.x}
        y={axes.y}
        height={170}
        tooltipTitle={iterTitle}
        valueFormat={fmt}
        label={`${spec.title} chart: A ${a.length} iterations, B ${b.length} iterations`}
        legend
      />
      {table && (
        <div className="data-table-wrap" id={tableId}>
          <table className="data-table" data-testid="data-table">
            <caption>{caption}</caption>
            <thead>
              <tr>
                <th scope="col">iter</th>
                <th scope="col">A</th>
                <th scope="col">B</th>
              </tr>
            </thead>
            <tbody>
              {shown.map((p) => (
                <tr key={p.iter}>
                  <th scope="row">{p.iter}</th>
                  <td className="num">{fmt(p.a)}</td>
                  <td className="num">{fmt(p.b)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </figure>
  );
});

export function CompareCharts(props: { a: MetricRow[]; b: MetricRow[]; legendA: string; legendB: string }) {
  return (
    <div className="chart-grid compare-charts">
      {COMPARED.map((spec, i) => (
        <CompareChart key={spec.metric} spec={spec} slot={i} {...props} />
      ))}
    </div>
  );
}
