/**
 * A lesson step's charts over its seeds: for each metric the step's lines read, every run those
 * lines compare, as the mean over the lesson's seeds (line) with the min-max range over the seeds
 * (band). A run is drawn once all its seeds are measured, so the picture and the ✓/✗ beside it
 * come from the same runs.
 */
import { memo, useMemo } from 'react';
import { isDumpStat, lessonRun, lessonSeeds, METRIC_DOCS, METRIC_NAMES, type Lesson, type LessonStep, type RunResult, type ScalarMetric, type SeriesStat } from '../../workers/meta';
import { seriesStyle } from '../charts/chartGroups';
import { fmt, tickFmt } from '../charts/format';
import { extent, niceScale } from '../charts/scale';
import { Chart } from '../charts/engine';
import type { XYSeries } from '../charts/XYChart';
import { allSeedsIn, runsOf } from './lessonResults';
import { seedBands } from './seedStats';

type ByRun = Record<string, Record<number, RunResult>>;

const iterTitle = (x: number) => `iteration ${x}`;
const intFmt = (v: number) => String(Math.round(v));

const MetricChart = memo(function MetricChart(props: { lesson: Lesson; byRun: ByRun; runs: string[]; metric: ScalarMetric }) {
  const { lesson, byRun, runs, metric } = props;
  const data = useMemo(() => seedBands(lesson, byRun, runs, metric), [lesson, byRun, runs, metric]);
  const series = useMemo<XYSeries[]>(
    () =>
      runs.map((run, i) => {
        const { color, dash } = seriesStyle(i);
        return { key: run, name: lessonRun(lesson, run).label, color, dash, width: 2, range: [`${run}_lo`, `${run}_hi`] };
      }),
    [lesson, runs],
  );
  const [lo, hi] = extent(data, runs.flatMap((r) => [`${r}_lo`, `${r}_hi`]));
  const y = niceScale(Number.isFinite(lo) ? lo : 0, Number.isFinite(hi) ? hi : 1, 4);
  const n = lessonSeeds(lesson).length;
  return (
    <figure className="lesson-seeds-chart" data-testid={`lesson-seeds-chart-${metric}`} data-runs={runs.join(',')} data-seeds={n} data-points={data.length} title={`${metric}: ${METRIC_DOCS[metric]}`}>
      <figcaption>
        {METRIC_NAMES[metric]}: mean over {n} seeds, band min-max
      </figcaption>
      <Chart
        view="lesson"
        data={data}
        xKey="iter"
        series={series}
        x={{ domain: [1, Math.max(2, data.length)], format: intFmt }}
        y={{ ...y, format: tickFmt }}
        height={120}
        tooltipTitle={iterTitle}
        valueFormat={fmt}
        label={`${METRIC_NAMES[metric]} over iterations, mean over ${n} seeds with the min-max band, for ${series.map((s) => s.name).join(' and ')}`}
        legend
      />
    </figure>
  );
});

/** The step's metric charts over seeds, for the runs its lines compare that have every seed. */
export function SeedsCharts({ lesson, step, byRun }: { lesson: Lesson; step: LessonStep; byRun: ByRun | undefined }) {
  const stats = step.claims.flatMap((id) => {
    const c = lesson.claims.find((x) => x.id === id)!;
    return [c.a, c.b];
  });
  const metrics = [...new Set(stats.flatMap((s) => (typeof s === 'object' && !isDumpStat(s) ? [(s as SeriesStat).metric] : [])))];
  const runs = runsOf(stats).filter((r) => allSeedsIn(lesson, byRun, r));
  const runsKey = runs.join(',');
  // The same array while the set of runs is the same: the charts redraw only when a run is added.
  const stableRuns = useMemo(() => runs, [runsKey]);
  if (!byRun || runs.length === 0 || metrics.length === 0) return null;
  return (
    <div className="lesson-seeds-charts">
      {metrics.map((m) => (
        <MetricChart key={m} lesson={lesson} byRun={byRun} runs={stableRuns} metric={m} />
      ))}
    </div>
  );
}
