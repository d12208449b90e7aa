/**
 * Live charts, rendered from data: one line chart per group of scalar metrics
 * (app/charts/chartGroups.ts over SCALAR_METRICS, with METRIC_DOCS as the explanations), the latest
 * advantage, log-ratio and sampler mismatch histograms (the clipped region shaded), and the three
 * distributions as canvas heatmaps over iterations. Every chart can show its data as a table.
 * Containers carry data-testid, data-points (iterations shown), data-last-iter (the latest iteration
 * shown), data-markers (run events) and data-alarms for the e2e tests.
 * The line charts and histograms are drawn by app/charts/engine.tsx: the plain SVG chart by
 * default (with Recharts, chart re-renders were the main thread's long tasks while training;
 * bench/pageCharts.ts measures both), Recharts with `?charts=recharts`. The first screen holds the
 * key pictures (reward, the two distributions over time, Collapse); the rest is under "More charts".
 */
import { memo, useDeferredValue, useId, useMemo, useRef, useState, type ReactNode, type RefObject } from 'react';
import { ADV_HIST_RANGE, LOGRATIO_HIST_RANGE, logRatioBounds, METRIC_DOCS, METRIC_NAMES, resolvePlan, type MetricRow } from '../../workers/meta';
import { ALARM_DOCS } from '../alarms';
import { chartGroups, groupYScale, seriesStyle, type ChartGroup } from '../charts/chartGroups';
import { fmt, thin, tickFmt } from '../charts/format';
import { HeatmapCanvas, heatmapSvg } from '../charts/Heatmap';
import { useExplainStore } from '../explain/explainStore';
import { EXTRA_CHART_IDS } from '../lessons/charts';
import type { HistName } from '../../workers/explain/types';
import { OnPolicyHint } from './OnPolicyHint';
import './keyCharts.css';
import { extent, midpoint, niceScale } from '../charts/scale';
import { Chart } from '../charts/engine';
import type { XYBand, XYMarker, XYSeries } from '../charts/XYChart';
import { useStaggeredSeries } from '../charts/stagger';
import { ChartExport } from '../charts/ChartExport';
import { chartSvg, fileStem } from '../exporters';
import { useAppStore } from '../store';
import { alarmKindOf, isAlarm, type RunMarker } from '../store/metricsSlice';
import './MetricsCharts.css';

const MARKER_COLORS: Record<RunMarker['kind'], string> = {
  'device-lost': '#d97706',
  'non-finite': '#dc2626',
  restart: '#7c3aed',
  config: '#2563eb',
  'alarm-collapse': '#e11d48',
  'alarm-ess': '#0d9488',
  'alarm-grad': '#9333ea',
  'alarm-entropy': '#ca8a04',
};

/** What each kind of marker means, for the key under the charts. */
const MARKER_NAMES: Record<RunMarker['kind'], string> = {
  'device-lost': 'GPU device lost',
  'non-finite': 'NaN: rolled back',
  restart: 'worker restarted',
  config: 'settings changed',
  'alarm-collapse': ALARM_DOCS.collapse.title,
  'alarm-ess': ALARM_DOCS.ess.title,
  'alarm-grad': ALARM_DOCS.grad.title,
  'alarm-entropy': ALARM_DOCS.entropy.title,
};

/** The key of the vertical markers on the charts: one entry per kind that is marked now. */
function MarkerKey({ markers }: { markers: readonly RunMarker[] }) {
  const kinds = [...new Set(markers.map((m) => m.kind))];
  if (kinds.length === 0) return null;
  return (
    <p className="marker-key" data-testid="marker-key">
      <span className="marker-key-title">Markers:</span>
      {kinds.map((k) => (
        <span key={k} className="marker-key-item" data-kind={k}>
          <svg width="14" height="12" aria-hidden="true">
            <line x1="7" x2="7" y1="0" y2="12" stroke={MARKER_COLORS[k]} strokeWidth="2" strokeDasharray={k.startsWith('alarm-') ? '1 3' : '3 3'} />
          </svg>
          {MARKER_NAMES[k]}
          {k.startsWith('alarm-') ? ' (alarm)' : ''}
        </span>
      ))}
    </p>
  );
}

/** Points a line chart draws at most; longer series are thinned (every k-th point, the last kept). */
const MAX_DRAWN = 400;
/** Rows a data table shows (the latest ones). */
const TABLE_ROWS = 100;
/** Iterations a heatmap's table shows. */
const HEATMAP_TABLE_ROWS = 30;

const GROUPS = chartGroups();
/** The heatmaps take the first update slots, the small charts the ones after. */
const HEATMAP_SLOTS = 3;
/** Charts that take turns to update (the heatmaps and the small charts; the large one is live). */
const SLOTS = HEATMAP_SLOTS + GROUPS.length - 1;

/** PNG and SVG download buttons for the line chart in `figure` (a copy of the chart on screen). */
function LineChartExport(props: { figure: RefObject<HTMLElement | null>; testId: string; title: string; legend: Array<{ name: string; color: string }> }) {
  const { figure, testId, title, legend } = props;
  return <ChartExport title={title} render={() => (figure.current ? chartSvg(figure.current, title, legend) : null)} fileName={() => chartFileName(testId)} />;
}

/** `rl-playground-seed7-iter40-reward` style: the run's seed and iteration, then the chart. */
function chartFileName(testId: string): string {
  const s = useAppStore.getState();
  return `${fileStem(s.config.seed, s.series[s.series.length - 1]?.iter ?? 0)}-${testId.replace(/^chart-/, '')}`;
}

const iterTitle = (x: number) => `iteration ${x}`;
const intFmt = (v: number) => String(v);

/** The caption row of a chart: title, the table toggle, the download buttons. */
function Caption(props: { title: string; tableOpen: boolean; onTable: () => void; tableId: string; children?: ReactNode }) {
  return (
    <figcaption>
      <span>{props.title}</span>
      <span className="chart-tools">
        <button
          type="button"
          className="mini"
          aria-expanded={props.tableOpen}
          aria-controls={props.tableId}
          aria-label={`${props.tableOpen ? 'Hide' : 'Show'} the ${props.title} data as a table`}
          onClick={props.onTable}
        >
          Table
        </button>
        {props.children}
      </span>
    </figcaption>
  );
}

function SeriesTable({ id, title, rows, keys }: { id: string; title: string; rows: MetricRow[]; keys: string[] }) {
  const shown = rows.slice(-TABLE_ROWS);
  return (
    <div className="data-table-wrap" id={id}>
      <table className="data-table" data-testid="data-table">
        <caption>
          {title}: {shown.length < rows.length ? `the last ${shown.length} of ${rows.length} iterations` : `${rows.length} iterations`}
        </caption>
        <thead>
          <tr>
            <th scope="col">iter</th>
            {keys.map((k) => (
              <th key={k} scope="col">
                {k}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {shown.map((r) => (
            <tr key={r.iter}>
              <th scope="row">{r.iter}</th>
              {keys.map((k) => (
                <td key={k} className="num">
                  {fmt(r[k as keyof MetricRow] as number)}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

const SeriesChart = memo(function SeriesChart(props: {
  group: ChartGroup;
  series: MetricRow[];
  markers: RunMarker[];
  height: number;
  slot?: number;
  flush: boolean;
  /** Default `chart-<group id>`; a copy outside the charts panel needs its own. */
  testId?: string;
  /** Without the explanation line (it stays in the chart's title). */
  compact?: boolean;
}) {
  const { group, markers, height, compact } = props;
  const series = useStaggeredSeries(props.series, props.slot ?? 0, SLOTS, props.slot === undefined ? 0 : undefined, props.flush) as MetricRow[];
  const testId = props.testId ?? `chart-${group.id}`;
  const keys = useMemo<XYSeries[]>(
    () =>
      group.metrics.map((m, i) => {
        const { color, dash } = seriesStyle(i);
        return { key: m, name: METRIC_NAMES[m], color, dash, width: dash ? 2 : 1.5 };
      }),
    [group],
  );
  const doc = group.metrics.map((m) => `${METRIC_NAMES[m]} (${m}): ${METRIC_DOCS[m]}`);
  const ref = useRef<HTMLElement>(null);
  const tableId = useId();
  const [table, setTable] = useState(false);
  const drawn = useMemo(() => thin(series, MAX_DRAWN), [series]);
  const events = markers.filter((m) => !isAlarm(m)).length;
  const marks = useMemo<XYMarker[]>(
    () =>
      markers.map((m) => ({
        x: m.iter,
        color: MARKER_COLORS[m.kind],
        dash: isAlarm(m) ? '1 3' : '3 3',
        label: height > 200 && !isAlarm(m) ? m.label : undefined,
      })),
    [markers, height],
  );
  const axes = useMemo(() => {
    // The iterations shown, widened to take in every marker.
    let [lo, hi] = extent(drawn, ['iter']);
    for (const m of markers) {
      lo = Number.isNaN(lo) ? m.iter : Math.min(lo, m.iter);
      hi = Number.isNaN(hi) ? m.iter : Math.max(hi, m.iter);
    }
    if (Number.isNaN(lo)) [lo, hi] = [0, 1];
    if (hi <= lo) hi = lo + 1;
    const [ylo, yhi] = extent(drawn, group.metrics);
    const y = groupYScale(group.domain, ylo, yhi);
    return { x: { domain: [lo, hi] as [number, number], format: intFmt }, y: { ...y, format: tickFmt } };
  }, [drawn, markers, group]);
  const lastRow = series[series.length - 1];
  const label =
    `${group.title} chart: ${group.metrics.map((m) => METRIC_NAMES[m]).join(', ')} over ${series.length} iterations` +
    (lastRow ? `; at iteration ${lastRow.iter}: ${group.metrics.map((m) => `${METRIC_NAMES[m]} ${fmt(lastRow[m] as number)}`).join(', ')}` : '');
  return (
    <figure
      className={`chart ${group.large ? 'chart-large' : ''}`}
      data-testid={testId}
      data-points={series.length}
      data-last-iter={lastRow?.iter ?? 0}
      data-markers={events}
      data-alarms={markers.length - events}
      data-metrics={group.metrics.join(',')}
      title={doc.join('\n')}
      ref={ref}
    >
      <Caption title={group.title} tableOpen={table} onTable={() => setTable(!table)} tableId={tableId}>
        <LineChartExport figure={ref} testId={testId} title={group.title} legend={keys.map((k) => ({ name: k.name, color: k.color }))} />
      </Caption>
      {!compact && <p className="chart-doc">{group.doc ?? (group.metrics.length === 1 ? METRIC_DOCS[group.metrics[0]!] : doc.join(' '))}</p>}
      <Chart
        view="live"
        data={drawn}
        xKey="iter"
        series={keys}
        x={axes.x}
        y={axes.y}
        height={height}
        markers={marks}
        tooltipTitle={iterTitle}
        valueFormat={fmt}
        label={label}
        legend={keys.length > 1}
      />
      {table && <SeriesTable id={tableId} title={group.title} rows={series} keys={group.metrics} />}
    </figure>
  );
});

const CLIPPED = { fill: '#dc2626', opacity: 0.12, label: 'clipped', labelColor: '#b91c1c' };
const ZERO_LINE: XYMarker[] = [{ x: 0, color: '#9ca3af' }];
const binTitle = (x: number) => `from ${tickFmt(x)}`;

function Histogram(props: {
  testId: string;
  title: string;
  doc: string;
  counts: number[] | undefined;
  edges: number[] | undefined;
  /** The histogram's fixed range: the x axis before the first iteration (not 0 to 1). */
  range: readonly [number, number];
  color: string;
  clip?: [number, number];
  /** The iteration the histogram is of (0 before the first). */
  iter: number;
  /** Without the explanation line (it stays in the figure's tooltip). */
  compact?: boolean;
}) {
  const { testId, title, doc, counts, edges, range, color, clip, iter, compact } = props;
  const ref = useRef<HTMLElement>(null);
  const tableId = useId();
  const [table, setTable] = useState(false);
  const ok = counts && edges && edges.length === counts.length + 1;
  const data = ok ? edges.map((x, i) => ({ x, count: counts[Math.min(i, counts.length - 1)]! })) : [];
  const lo = ok ? edges[0]! : range[0];
  const hi = ok ? edges[edges.length - 1]! : range[1];
  const ticks = [lo, (lo + hi) / 2 - (hi - lo) / 4, (lo + hi) / 2, (lo + hi) / 2 + (hi - lo) / 4, hi];
  const y = niceScale(0, ok ? Math.max(...counts) : 1, 5, true);
  const bands: XYBand[] = [];
  if (clip && clip[0] > lo) bands.push({ x1: lo, x2: clip[0], ...CLIPPED });
  if (clip && clip[1] < hi) bands.push({ x1: clip[1], x2: hi, ...CLIPPED });
  const series = useMemo<XYSeries[]>(() => [{ key: 'count', name: 'count', color, stepArea: true }], [color]);
  return (
    <figure
      className="chart"
      data-testid={testId}
      data-points={ok ? counts.length : 0}
      data-last-iter={iter}
      data-clip-low={clip ? clip[0].toFixed(4) : undefined}
      data-clip-high={clip ? clip[1].toFixed(4) : undefined}
      title={doc}
      ref={ref}
    >
      <Caption title={title} tableOpen={table} onTable={() => setTable(!table)} tableId={tableId}>
        <LineChartExport figure={ref} testId={testId} title={title} legend={[{ name: 'count', color }]} />
      </Caption>
      {!compact && <p className="chart-doc">{doc}</p>}
      <Chart
        view="live"
        data={data}
        xKey="x"
        series={series}
        x={{ domain: [lo, hi], ticks, format: tickFmt }}
        y={{ ...y, format: intFmt }}
        height={170}
        markers={ZERO_LINE}
        bands={bands}
        xGrid={false}
        tooltipTitle={binTitle}
        valueFormat={fmt}
        label={ok ? `${title}: token counts in ${counts.length} bins from ${tickFmt(lo)} to ${tickFmt(hi)}; the largest ${Math.max(...counts)}` : `${title}: no data yet`}
      />
      {table && ok && (
        <div className="data-table-wrap" id={tableId}>
          <table className="data-table" data-testid="data-table">
            <caption>{title}</caption>
            <thead>
              <tr>
                <th scope="col">bin from</th>
                <th scope="col">bin to</th>
                <th scope="col">count</th>
              </tr>
            </thead>
            <tbody>
              {counts.map((c, i) => (
                <tr key={i}>
                  <td className="num">{fmt(edges[i])}</td>
                  <td className="num">{fmt(edges[i + 1])}</td>
                  <td className="num">{c}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {table && !ok && (
        <p className="chart-doc" id={tableId}>
          No data yet.
        </p>
      )}
    </figure>
  );
}

/** Each heatmap's histogram in the metric rows: its edges, and the histogram a cell's explanation bins. */
const HEATMAP_KEYS = {
  adv_hist: { edges: 'adv_hist_edges', hist: 'adv' },
  ratio_hist: { edges: 'ratio_hist_edges', hist: 'ratio' },
  mismatch_hist: { edges: 'mismatch_hist_edges', hist: 'mismatch' },
} as const satisfies Record<string, { edges: keyof MetricRow; hist: HistName }>;

function Heatmap(props: {
  testId: string;
  title: string;
  /** One short line under the title; `detail` is the whole explanation, in the figure's tooltip. */
  doc: string;
  detail: string;
  series: MetricRow[];
  slot: number;
  flush: boolean;
  histKey: keyof typeof HEATMAP_KEYS;
  range: readonly [number, number];
  guides: Array<{ value: number; color: string }>;
  /** Without the one-line doc (`detail` stays in the tooltip). */
  compact?: boolean;
}) {
  const { testId, title, doc, detail, histKey, range, guides, compact } = props;
  const series = useStaggeredSeries(props.series, props.slot, SLOTS, undefined, props.flush) as MetricRow[];
  const tableId = useId();
  const [table, setTable] = useState(false);
  const { edges: edgesKey, hist } = HEATMAP_KEYS[histKey];
  // Rows read from older run files may lack a histogram (the sampler's): the map skips them.
  const rows = useMemo(() => series.filter((r) => (r[histKey]?.length ?? 0) > 0), [series, histKey]);
  const edges = rows[rows.length - 1]?.[edgesKey] ?? [range[0], range[1]];
  const columns = useMemo(() => rows.map((r) => r[histKey]!), [rows, histKey]);
  const bins = edges.length - 1;
  const first = rows[0]?.iter;
  const last = rows[rows.length - 1]?.iter;
  // Iterations shown but none with this histogram: say so, not "no iterations yet".
  const absent = rows.length === 0 && series.length > 0 ? `none of the ${series.length} iterations holds this histogram (a run file from before it was recorded, or an imported log)` : undefined;
  // A cell is the count of the iteration's policy tokens in that bin: its explanation lists them.
  const explainCell = (iter: number | undefined, bin: number) => {
    if (iter === undefined) return;
    useExplainStore.getState().open({ source: { kind: 'batch', iter }, ref: { kind: 'hist', hist, iter, bin } });
  };
  const label =
    rows.length === 0
      ? `${title}: ${absent ?? 'no iterations yet'}.`
      : `${title}: ${rows.length} iterations (columns) by ${bins} bins from ${tickFmt(edges[0]!)} (bottom) to ${tickFmt(edges[bins]!)} (top); brighter is more tokens.`;
  return (
    <figure className="chart heatmap" data-testid={testId} data-last-iter={series[series.length - 1]?.iter ?? 0} data-iterations={rows.length} data-bins={rows.length > 0 ? bins : 0} title={detail}>
      <Caption title={title} tableOpen={table} onTable={() => setTable(!table)} tableId={tableId}>
        <ChartExport title={title} render={() => heatmapSvg({ columns, edges, guides, title, first, last })} fileName={() => chartFileName(testId)} />
      </Caption>
      {!compact && <p className="chart-doc">{doc}</p>}
      <div className="heatmap-body">
        <div className="heatmap-y" aria-hidden="true">
          <span>{tickFmt(edges[bins]!)}</span>
          <span>{tickFmt(midpoint(edges[0]!, edges[bins]!))}</span>
          <span>{tickFmt(edges[0]!)}</span>
        </div>
        <HeatmapCanvas columns={columns} edges={edges} guides={guides} height={150} label={label} onCell={(c, b) => explainCell(rows[c]?.iter, b)} empty={absent ? 'No histogram in this run' : undefined} />
      </div>
      <div className="heatmap-x" aria-hidden="true">
        <span>{first !== undefined ? `iteration ${first}` : absent ? 'not in this run' : 'no iterations yet'}</span>
        <span>{last !== undefined && last !== first ? `iteration ${last}` : ''}</span>
      </div>
      {table && (
        <div className="data-table-wrap" id={tableId}>
          <table className="data-table" data-testid="data-table">
            <caption>
              {title}: token counts per bin, the last {Math.min(HEATMAP_TABLE_ROWS, rows.length)} of {rows.length} iterations
            </caption>
            <thead>
              <tr>
                <th scope="col">iter</th>
                {Array.from({ length: bins }, (_, b) => (
                  <th key={b} scope="col">
                    {tickFmt(midpoint(edges[b]!, edges[b + 1]!))}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {rows.slice(-HEATMAP_TABLE_ROWS).map((r) => (
                <tr key={r.iter}>
                  <th scope="row">{r.iter}</th>
                  {r[histKey]!.map((c, b) => (
                    <td key={b} className="num">
                      <button type="button" className="explain-num" title="Explain this number" aria-label={`iteration ${r.iter}, bin ${b + 1}: ${c} tokens: explain`} onClick={() => explainCell(r.iter, b)}>
                        {c}
                      </button>
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </figure>
  );
}

/** The markers a chart shows: every run event, and the alarms that belong to it (all of them on the large chart). */
function markersFor(group: ChartGroup, markers: RunMarker[]): RunMarker[] {
  return markers.filter((m) => {
    const kind = alarmKindOf(m);
    return kind === null || group.large || ALARM_DOCS[kind].chart === group.id;
  });
}

type DistributionId = (typeof EXTRA_CHART_IDS)[number];

const CLIP_GUIDE = '#ffffff';
const ZERO_GUIDE = [{ value: 0, color: 'rgba(255,255,255,0.6)' }];

/** The three heatmaps: one row each, drawn by one case below. */
const HEATMAPS = {
  'adv-heatmap': { title: "Advantage distribution over iterations", doc: "Each column: one iteration's advantages. A bright band at 0: little signal.", detail: "Each column is one iteration's advantage histogram (scaled to its own maximum). A bright band at 0 means many advantages near 0: it is Advantage Collapse only where they are exactly 0 (the Collapse chart's zero-advantage share); under CM2 or IGPO small advantages light it too.", slot: 0, histKey: "adv_hist", range: ADV_HIST_RANGE, guides: 'zero' },
  'ratio-heatmap': { title: "Log IS ratio distribution over iterations", doc: "Each column: one iteration's log IS ratios; dashed: the clip bounds.", detail: "Each column is one iteration's histogram of log importance-sampling (IS) ratios, log(pi/pi_old); dashed lines: the clip bounds. Spread beyond them means clipping, a widening fan means the policy moves fast.", slot: 1, histKey: "ratio_hist", range: LOGRATIO_HIST_RANGE, guides: 'clip' },
  'mismatch-heatmap': { title: "Sampler mismatch distribution over iterations", doc: "Each column: one iteration's log pi_old/pi_rollout; a single band at 0 when the sampler is the trainer.", detail: `Each column is one iteration's histogram of log(pi_old/pi_rollout) over policy tokens (scaled to its own maximum): the trainer's log-prob of each token over the rollout sampler's. All at 0 when the sampler is the trainer; a lower sampler precision (bf16, fp16) scatters it a little around 0; top-p or top-k truncation puts it below 0 (the sampler gives the tokens it keeps more probability than the trainer does); stale rollouts spread it to both sides. End bins catch values outside [${LOGRATIO_HIST_RANGE.join(', ')}].`, slot: 2, histKey: "mismatch_hist", range: LOGRATIO_HIST_RANGE, guides: 'zero' },
} as const;

/**
 * The three histograms of the latest iteration, drawn by one case. The sampler's mismatch stands
 * beside PPO's ratio: a ratio PPO's does not see (verl's decoupled mode).
 */
const HISTOGRAMS = {
  'adv-hist': { title: 'Advantage histogram', doc: () => `Advantages over policy tokens of the latest iteration; the end bins catch values outside [${ADV_HIST_RANGE.join(', ')}].`, histKey: 'adv_hist', edgesKey: 'adv_hist_edges', range: ADV_HIST_RANGE, color: '#7c3aed', showClip: false },
  'ratio-hist': { title: 'Log IS ratio histogram', doc: (clip: [number, number]) => `log(pi/pi_old) over policy tokens of the latest iteration; shaded: outside the clip range [log(1-clipLow), log(1+clipHigh)] = [${tickFmt(clip[0])}, ${tickFmt(clip[1])}]. End bins catch values outside [${LOGRATIO_HIST_RANGE.join(', ')}].`, histKey: 'ratio_hist', edgesKey: 'ratio_hist_edges', range: LOGRATIO_HIST_RANGE, color: '#0891b2', showClip: true },
  'mismatch-hist': { title: 'Sampler mismatch histogram', doc: () => `log(pi_old/pi_rollout) over policy tokens of the latest iteration: the trainer's log-prob over the rollout sampler's (its precision, top-p, top-k; stale parameters). All at 0 when the sampler is the trainer. End bins catch values outside [${LOGRATIO_HIST_RANGE.join(', ')}].`, histKey: 'mismatch_hist', edgesKey: 'mismatch_hist_edges', range: LOGRATIO_HIST_RANGE, color: '#ea580c', showClip: false },
} as const;

/**
 * A distribution chart by its id (EXTRA_CHART_IDS): the charts panel's, or a lesson step's copy.
 * `last` is the live run's latest row (the histograms show it at once), `series` the rows the
 * heatmaps take in their update slots.
 */
function DistributionChart(props: { id: DistributionId; testId?: string; series: MetricRow[]; last: MetricRow | undefined; flush: boolean; clip: [number, number]; compact?: boolean }) {
  const { id, series, last, flush, clip, compact } = props;
  const testId = props.testId ?? `chart-${id}`;
  const iterLabel = last ? ` (iteration ${last.iter})` : '';
  const iter = last?.iter ?? 0;
  const clipGuides = useMemo(
    () => [
      { value: clip[0], color: CLIP_GUIDE },
      { value: clip[1], color: CLIP_GUIDE },
    ],
    [clip],
  );
  switch (id) {
    case 'adv-hist':
    case 'ratio-hist':
    case 'mismatch-hist': {
      const h = HISTOGRAMS[id];
      return (
        <Histogram
          testId={testId}
          title={`${h.title}${iterLabel}`}
          doc={h.doc(clip)}
          counts={last?.[h.histKey]}
          edges={last?.[h.edgesKey]}
          range={h.range}
          color={h.color}
          {...(h.showClip ? { clip } : {})}
          iter={iter}
          compact={compact}
        />
      );
    }
    case 'adv-heatmap':
    case 'ratio-heatmap':
    case 'mismatch-heatmap': {
      const h = HEATMAPS[id];
      return (
        <Heatmap
          testId={testId}
          title={h.title}
          doc={h.doc}
          detail={h.detail}
          series={series}
          slot={h.slot}
          flush={flush}
          histKey={h.histKey}
          range={h.range}
          guides={h.guides === 'clip' ? clipGuides : ZERO_GUIDE}
          compact={compact}
        />
      );
    }
  }
}

/** The clip the run applies: a method may set its own (DAPO, GSPO, GMPO's log-space range). */
function useClip(): [number, number] {
  const config = useAppStore((s) => s.config);
  return useMemo(() => logRatioBounds(resolvePlan(config).ratio), [config]);
}

const isDistribution = (id: string): id is DistributionId => (EXTRA_CHART_IDS as readonly string[]).includes(id);

/** One chart of the live run outside the charts panel: a lesson step's chart, beside the step's text. */
export function LiveChart({ id, testId, height = 120 }: { id: string; testId: string; height?: number }) {
  const group = GROUPS.find((g) => g.id === id);
  const series = useAppStore((s) => s.series);
  const markers = useAppStore((s) => s.markers);
  const flush = useAppStore((s) => s.phase !== 'running');
  const clip = useClip();
  const shown = useMemo(() => (group ? markersFor(group, markers) : []), [group, markers]);
  if (group) return <SeriesChart group={group} series={series} markers={shown} height={height} flush={flush} testId={testId} compact />;
  if (isDistribution(id)) return <DistributionChart id={id} testId={testId} series={series} last={series[series.length - 1]} flush={flush} clip={clip} compact />;
  return null;
}

export function MetricsCharts() {
  const liveSeries = useAppStore((s) => s.series);
  const markers = useAppStore((s) => s.markers);
  const presenter = useAppStore((s) => s.presenter);
  // Paused (or one step taken): every chart takes the latest rows at once, so all show one iteration.
  const flush = useAppStore((s) => s.phase !== 'running');
  const clip = useClip();
  // The small charts render at a lower priority, so a burst of rows never blocks the page; paused,
  // they take the live rows in the same commit as the large chart (a deferred render that new rows
  // kept interrupting could be tens of iterations behind).
  const deferred = useDeferredValue(liveSeries);
  const series = flush ? liveSeries : deferred;
  const last = liveSeries[liveSeries.length - 1];
  const [large, ...small] = GROUPS;
  const groupMarkers = useMemo(() => new Map(GROUPS.map((g) => [g.id, markersFor(g, markers)])), [markers]);

  const collapse = small.find((g) => g.id === 'groups_all_equal_frac');
  const rest = small.filter((g) => g !== collapse);
  const slotOf = (g: ChartGroup) => small.indexOf(g) + HEATMAP_SLOTS;
  const dist = (id: DistributionId) => <DistributionChart id={id} series={series} last={last} flush={flush} clip={clip} />;

  // The key pictures on the first screen (reward, the advantage and IS-ratio distributions over
  // time, Advantage Collapse); every other chart one click away under "More charts".
  return (
    <section className="panel charts" aria-labelledby="charts-title">
      <h2 id="charts-title">Training</h2>
      {large && <SeriesChart group={large} series={liveSeries} height={180} markers={groupMarkers.get(large.id)!} flush={flush} />}
      <MarkerKey markers={markers} />
      <OnPolicyHint />
      <div className="chart-grid key-charts">
        {dist('adv-heatmap')}
        {dist('ratio-heatmap')}
        {collapse && <SeriesChart group={collapse} series={series} height={150} markers={groupMarkers.get(collapse.id)!} slot={slotOf(collapse)} flush={flush} />}
      </div>
      {/* Presenter mode opens it: the lesson's own charts may be among these (its style hides the rest). */}
      <details className="more-charts" data-testid="more-charts" open={presenter || undefined}>
        <summary>More charts: the latest histograms, the sampler mismatch heatmap and {rest.length} more metrics</summary>
        <div className="chart-grid hist-charts">
          {dist('adv-hist')}
          {dist('ratio-hist')}
          {dist('mismatch-hist')}
          {dist('mismatch-heatmap')}
        </div>
        <div className="chart-grid small">
          {rest.map((g) => (
            <SeriesChart key={g.id} group={g} series={series} height={150} markers={groupMarkers.get(g.id)!} slot={slotOf(g)} flush={flush} />
          ))}
        </div>
      </details>
    </section>
  );
}
