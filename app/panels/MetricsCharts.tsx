/**
 * Live charts (Recharts): reward and success per iteration, the latest iteration's advantage and
 * log-ratio histograms, and small charts of Advantage Collapse, entropy and loss. Each container
 * carries data-testid and data-points (the number of points it shows) for the e2e tests.
 */
import { memo, useRef, useState, type RefObject } from 'react';
import {
  Bar,
  BarChart,
  CartesianGrid,
  Legend,
  Line,
  LineChart,
  ReferenceLine,
  ResponsiveContainer,
  Tooltip,
  XAxis,
  YAxis,
} from 'recharts';
import { METRIC_DOCS, type MetricRow, type ScalarMetric } from '../../workers/metrics';
import { chartSvg, downloadBlob, downloadText, fileStem, svgToPng } from '../exporters';
import { useAppStore } from '../store';
import type { RunMarker } from '../store/metricsSlice';

const MARKER_COLORS: Record<RunMarker['kind'], string> = {
  'device-lost': '#d97706',
  'non-finite': '#dc2626',
  restart: '#7c3aed',
};

/** PNG and SVG download buttons for the chart in `figure`. */
function ChartExport(props: { figure: RefObject<HTMLElement | null>; testId: string; title: string; legend: Array<{ name: string; color: string }> }) {
  const { figure, testId, title, legend } = props;
  const [error, setError] = useState<string | null>(null);
  const name = () => {
    const s = useAppStore.getState();
    return `${fileStem(s.config.seed, s.series[s.series.length - 1]?.iter ?? 0)}-${testId.replace(/^chart-/, '')}`;
  };
  const render = () => (figure.current ? chartSvg(figure.current, title, legend) : null);
  return (
    <span className="chart-export">
      <button
        type="button"
        className="mini"
        aria-label={`Download the ${title} chart as PNG`}
        onClick={async () => {
          const r = render();
          if (!r) return setError('nothing drawn yet');
          try {
            downloadBlob(await svgToPng(r.svg, r.width, r.height), `${name()}.png`);
            setError(null);
          } catch (e) {
            setError((e as Error).message);
          }
        }}
      >
        PNG
      </button>
      <button
        type="button"
        className="mini"
        aria-label={`Download the ${title} chart as SVG`}
        onClick={() => {
          const r = render();
          if (!r) return setError('nothing drawn yet');
          downloadText(r.svg, `${name()}.svg`, 'image/svg+xml');
          setError(null);
        }}
      >
        SVG
      </button>
      {error && <span className="field-error">{error}</span>}
    </span>
  );
}

interface SeriesKey {
  key: ScalarMetric;
  name: string;
  color: string;
  dash?: string;
}

function tickFmt(v: number): string {
  if (v === 0 || Math.abs(v) >= 1000) return String(Math.round(v));
  if (Math.abs(v) < 1e-3) return v.toExponential(1);
  return String(Number(v.toPrecision(4)));
}

const SeriesChart = memo(function SeriesChart(props: {
  testId: string;
  title: string;
  series: MetricRow[];
  keys: SeriesKey[];
  height: number;
  domain?: [number, number];
  markers: RunMarker[];
}) {
  const { testId, title, series, keys, height, domain, markers } = props;
  const doc = keys.map((k) => `${k.name}: ${METRIC_DOCS[k.key]}`).join('\n');
  const ref = useRef<HTMLElement>(null);
  return (
    <figure className="chart" data-testid={testId} data-points={series.length} data-markers={markers.length} title={doc} ref={ref}>
      <figcaption>
        <span>{title}</span>
        <ChartExport figure={ref} testId={testId} title={title} legend={keys.map((k) => ({ name: k.name, color: k.color }))} />
      </figcaption>
      <ResponsiveContainer width="100%" height={height}>
        <LineChart data={series} margin={{ top: 4, right: 12, bottom: 0, left: 0 }}>
          <CartesianGrid stroke="#e6e8eb" />
          <XAxis dataKey="iter" type="number" domain={['dataMin', 'dataMax']} allowDecimals={false} tick={{ fontSize: 11 }} />
          <YAxis domain={domain ?? ['auto', 'auto']} width={56} tick={{ fontSize: 11 }} tickFormatter={tickFmt} />
          <Tooltip isAnimationActive={false} labelFormatter={(l) => `iteration ${l}`} />
          {keys.length > 1 && <Legend wrapperStyle={{ fontSize: 12 }} />}
          {markers.map((m, i) => (
            <ReferenceLine
              key={`${m.kind}-${m.iter}-${i}`}
              x={m.iter}
              stroke={MARKER_COLORS[m.kind]}
              strokeDasharray="3 3"
              ifOverflow="extendDomain"
              label={height > 200 ? { value: m.label, position: 'insideTopLeft', fontSize: 11, fill: MARKER_COLORS[m.kind] } : undefined}
            />
          ))}
          {keys.map((k) => (
            <Line
              key={k.key}
              type="linear"
              dataKey={k.key}
              name={k.name}
              stroke={k.color}
              strokeWidth={k.dash ? 2 : 1.5}
              strokeDasharray={k.dash}
              dot={false}
              isAnimationActive={false}
            />
          ))}
        </LineChart>
      </ResponsiveContainer>
    </figure>
  );
});

function histData(counts: number[] | undefined, edges: number[] | undefined) {
  if (!counts || !edges || edges.length !== counts.length + 1) return [];
  return counts.map((count, i) => ({ bin: ((edges[i]! + edges[i + 1]!) / 2).toFixed(2), count }));
}

function Histogram(props: { testId: string; title: string; doc: string; data: Array<{ bin: string; count: number }>; color: string }) {
  const { testId, title, doc, data, color } = props;
  const ref = useRef<HTMLElement>(null);
  return (
    <figure className="chart" data-testid={testId} data-points={data.length} title={doc} ref={ref}>
      <figcaption>
        <span>{title}</span>
        <ChartExport figure={ref} testId={testId} title={title} legend={[{ name: 'count', color }]} />
      </figcaption>
      <ResponsiveContainer width="100%" height={180}>
        <BarChart data={data} margin={{ top: 4, right: 12, bottom: 0, left: 0 }} barCategoryGap={1}>
          <CartesianGrid stroke="#e6e8eb" vertical={false} />
          <XAxis dataKey="bin" tick={{ fontSize: 10 }} interval="preserveStartEnd" />
          <YAxis width={56} allowDecimals={false} tick={{ fontSize: 11 }} />
          <Tooltip isAnimationActive={false} />
          <Bar dataKey="count" fill={color} isAnimationActive={false} />
        </BarChart>
      </ResponsiveContainer>
    </figure>
  );
}

export function MetricsCharts() {
  const series = useAppStore((s) => s.series);
  const markers = useAppStore((s) => s.markers);
  const last = series[series.length - 1];
  const adv = histData(last?.adv_hist, last?.adv_hist_edges);
  const ratio = histData(last?.ratio_hist, last?.ratio_hist_edges);
  const iterLabel = last ? ` (iteration ${last.iter})` : '';

  return (
    <section className="panel charts" aria-labelledby="charts-title">
      <h2 id="charts-title">Training</h2>
      <SeriesChart
        testId="chart-reward"
        title="Reward"
        series={series}
        height={240}
        domain={[0, 1]}
        markers={markers}
        keys={[
          { key: 'reward_mean', name: 'reward_mean', color: '#2563eb' },
          { key: 'success_rate', name: 'success_rate', color: '#16a34a', dash: '5 4' },
        ]}
      />
      <div className="chart-grid">
        <Histogram
          testId="chart-adv-hist"
          title={`Advantage histogram${iterLabel}`}
          doc="Advantages over policy tokens of the latest iteration; the end bins catch values outside [-3, 3]."
          data={adv}
          color="#7c3aed"
        />
        <Histogram
          testId="chart-ratio-hist"
          title={`Log IS ratio histogram${iterLabel}`}
          doc="log(pi/pi_old) over policy tokens of the latest iteration; the end bins catch values outside [-0.5, 0.5]."
          data={ratio}
          color="#0891b2"
        />
      </div>
      <div className="chart-grid small">
        <SeriesChart
          testId="chart-groups_all_equal_frac"
          title="Groups with all-equal rewards"
          series={series}
          height={150}
          domain={[0, 1]}
          markers={markers}
          keys={[{ key: 'groups_all_equal_frac', name: 'groups_all_equal_frac', color: '#dc2626' }]}
        />
        <SeriesChart
          testId="chart-entropy"
          title="Entropy"
          series={series}
          height={150}
          markers={markers}
          keys={[{ key: 'entropy', name: 'entropy', color: '#ea580c' }]}
        />
        <SeriesChart
          testId="chart-loss"
          title="Loss"
          series={series}
          height={150}
          markers={markers}
          keys={[{ key: 'loss', name: 'loss', color: '#4b5563' }]}
        />
      </div>
    </section>
  );
}
