/**
 * A small SVG x/y chart: lines (a point without neighbours as a dot, optionally over a shaded band
 * between two other keys) or a step area, grid, axes,
 * vertical marker lines, shaded x bands, a legend, and a tooltip that follows the pointer (or the
 * arrow keys when the chart has focus).
 *
 * It replaces Recharts for the live training charts: a Recharts chart re-render (its own store,
 * selectors, text measuring for ticks, some hundred elements) cost 10-100 ms of main thread per
 * update on a busy 2-core machine, and a dozen charts update while training (BENCHMARKS.md, page
 * section). This one renders a few dozen elements from precomputed paths, well under a millisecond.
 *
 * The SVG keeps Recharts' class names for the parts that the theme CSS (app/styles.css), the chart
 * export (app/exporters.ts, which clones `svg.recharts-surface`) and the e2e tests address:
 * recharts-surface, recharts-cartesian-grid, recharts-curve recharts-line-curve,
 * recharts-reference-line, recharts-reference-area, recharts-cartesian-axis-tick-value,
 * recharts-legend-item-text. Colours are attributes, so an exported SVG looks the same on its own.
 */
import { useId, useLayoutEffect, useMemo, useRef, useState, type KeyboardEvent, type PointerEvent } from 'react';
import { plotLayout } from './plot';
import { indexAt } from './scale';
import { XYLegend } from './XYLegend';
import './xyChart.css';

export interface XYSeries {
  key: string;
  name: string;
  color: string;
  dash?: string;
  width?: number;
  /** Drawn as a step area down to 0 (a histogram over bin edges) instead of a line. */
  stepArea?: boolean;
  /** Keys of a low and a high value: a shaded band between them behind the line (a spread over seeds). */
  range?: [string, string];
}

/** A vertical line at x (a run event, an alarm, a reference value). */
export interface XYMarker {
  x: number;
  color: string;
  dash?: string;
  label?: string;
}

/** A shaded x range with an optional label at its top. */
export interface XYBand {
  x1: number;
  x2: number;
  fill: string;
  opacity: number;
  label?: string;
  labelColor?: string;
}

export interface XYAxis {
  domain: [number, number];
  /** Ticks; without them, integer ticks as dense as their labels allow (an iteration axis). */
  ticks?: number[];
  format: (v: number) => string;
}

export interface XYChartProps {
  /** Rows in ascending x. */
  data: readonly object[];
  xKey: string;
  series: XYSeries[];
  x: XYAxis;
  y: XYAxis;
  height: number;
  markers?: XYMarker[];
  bands?: XYBand[];
  /** The tooltip's first line for a row's x. */
  tooltipTitle: (x: number) => string;
  /** Formats a value in the tooltip. */
  valueFormat: (v: number) => string;
  /** The accessible name of the chart image. */
  label: string;
  legend?: boolean;
  /** Vertical grid lines at the x ticks (default true). */
  xGrid?: boolean;
}

const AXIS = '#666';
/** Defaults that keep their identity between renders (the layout is memoised on them). */
const NO_MARKERS: XYMarker[] = [];
const NO_BANDS: XYBand[] = [];
const GRID = '#e6e8eb';
const FONT = 11;

export function XYChart(props: XYChartProps) {
  const { data, xKey, series, x, y, height, markers = NO_MARKERS, bands = NO_BANDS, tooltipTitle, valueFormat, label, legend, xGrid = true } = props;
  const box = useRef<HTMLDivElement>(null);
  const [width, setWidth] = useState(0);
  // The x value the tooltip shows (pointer or keys); null: no tooltip.
  const [active, setActive] = useState<number | null>(null);

  useLayoutEffect(() => {
    const el = box.current;
    if (!el) return;
    // No clientWidth read here: in a layout effect it forces a layout per chart while the page
    // mounts. The observer's first callback, after the browser's own layout, gives the width.
    const ro = new ResizeObserver(() => setWidth(el.clientWidth));
    ro.observe(el);
    return () => ro.disconnect();
  }, []);

  // Every coordinate comes from plotLayout (app/charts/plot.ts): axes that can be drawn, values held
  // inside them, so no value (an imported 1e308, a subnormal bin edge) draws outside the plot.
  const layout = useMemo(() => plotLayout({ data, xKey, series, x, y, height, markers, bands }, width), [data, xKey, series, x, y, height, markers, bands, width]);
  const { left, right, top, bottom, sx, paths } = layout;
  // Strokes and dots at the plot's edge keep their width; nothing reaches further.
  const clipId = `xy-clip-${useId().replace(/[^a-zA-Z0-9_-]/g, '')}`;

  const step = series.some((s) => s.stepArea);
  const index = active === null ? -1 : indexAt(data, xKey, active, step);
  const row = index >= 0 ? (data[index] as Record<string, unknown>) : null;
  const cursorX = row && Number.isFinite(row[xKey]) ? sx(row[xKey] as number) : left;

  const onPointerMove = (e: PointerEvent<SVGSVGElement>) => {
    if (data.length === 0) return;
    const r = e.currentTarget.getBoundingClientRect();
    const px = e.clientX - r.left;
    if (px < left || px > right) return setActive(null);
    const [d0, d1] = layout.xDomain;
    setActive(d0 + ((px - left) / (right - left)) * (d1 - d0));
  };
  const onKeyDown = (e: KeyboardEvent<SVGSVGElement>) => {
    if (data.length === 0) return;
    const last = data.length - 1;
    const at = index < 0 ? last : index;
    const to = { ArrowLeft: at - 1, ArrowRight: at + 1, Home: 0, End: last }[e.key];
    if (to === undefined) return;
    e.preventDefault();
    setActive((data[Math.min(last, Math.max(0, to))] as Record<string, number>)[xKey]!);
  };

  return (
    <div className="xy-chart">
      <div ref={box} className="xy-chart-box" style={{ height }}>
        {width > 0 && (
          <svg
            className="recharts-surface"
            width={width}
            height={height}
            viewBox={`0 0 ${width} ${height}`}
            role="img"
            aria-label={label}
            tabIndex={0}
            onPointerMove={onPointerMove}
            onPointerLeave={() => setActive(null)}
            onKeyDown={onKeyDown}
            onFocus={() => data.length > 0 && setActive((data[data.length - 1] as Record<string, number>)[xKey]!)}
            onBlur={() => setActive(null)}
          >
            <defs>
              <clipPath id={clipId}>
                <rect x={left - 4} y={top - 4} width={right - left + 8} height={bottom - top + 8} />
              </clipPath>
            </defs>
            <g className="recharts-cartesian-grid">
              {layout.yTicks.map((t) => (
                <line key={`h${t.value}`} x1={left} x2={right} y1={t.at} y2={t.at} stroke={GRID} />
              ))}
              {xGrid &&
                layout.xTicks.map((t) => (
                  <line key={`v${t.value}`} x1={t.at} x2={t.at} y1={top} y2={bottom} stroke={GRID} />
                ))}
            </g>
            <g clipPath={`url(#${clipId})`}>
              {layout.bands.map(({ band: b, x: bx, width: bw }, i) => (
                <g key={i} className="recharts-reference-area">
                  <rect x={bx} y={top} width={bw} height={bottom - top} fill={b.fill} fillOpacity={b.opacity} />
                  {b.label && (
                    <text x={bx + bw / 2} y={top + 12} textAnchor="middle" fontSize={10} fill={b.labelColor ?? AXIS}>
                      {b.label}
                    </text>
                  )}
                </g>
              ))}
              {layout.markers.map(({ marker: m, at }, i) => (
                <g key={i} className="recharts-reference-line">
                  <line x1={at} x2={at} y1={top} y2={bottom} stroke={m.color} strokeDasharray={m.dash} />
                  {m.label && (
                    <text x={at + 4} y={top + 12} fontSize={FONT} fill={m.color}>
                      {m.label}
                    </text>
                  )}
                </g>
              ))}
              {series.map((s, i) => {
                const p = paths[i];
                return (
                  <g key={s.key}>
                    {p?.area && <path d={p.area} fill={s.color} fillOpacity={0.55} stroke="none" />}
                    {p?.band && <path className="xy-band" d={p.band} fill={s.color} fillOpacity={0.18} stroke="none" />}
                    <path
                      className={`recharts-curve ${s.stepArea ? 'recharts-area-curve' : 'recharts-line-curve'}`}
                      name={s.name}
                      d={p?.line ?? ''}
                      fill="none"
                      stroke={s.color}
                      strokeWidth={s.width ?? 1.5}
                      strokeDasharray={s.dash}
                    />
                    {p?.dots.map(([cx, cy], j) => (
                      <circle key={j} className="xy-dot" cx={cx} cy={cy} r={(s.width ?? 1.5) + 1} fill={s.color} />
                    ))}
                  </g>
                );
              })}
            </g>
            <g className="recharts-cartesian-axis recharts-xAxis">
              <line x1={left} x2={right} y1={bottom} y2={bottom} stroke={AXIS} />
              {layout.xTicks.map((t) => (
                <g key={t.value}>
                  <line x1={t.at} x2={t.at} y1={bottom} y2={bottom + 6} stroke={AXIS} />
                  <text className="recharts-cartesian-axis-tick-value" x={t.at} y={bottom + 8} dy="0.71em" textAnchor="middle" fontSize={FONT} fill={AXIS}>
                    {t.label}
                  </text>
                </g>
              ))}
            </g>
            <g className="recharts-cartesian-axis recharts-yAxis">
              <line x1={left} x2={left} y1={top} y2={bottom} stroke={AXIS} />
              {layout.yTicks.map((t) => (
                <g key={t.value}>
                  <line x1={left - 6} x2={left} y1={t.at} y2={t.at} stroke={AXIS} />
                  <text className="recharts-cartesian-axis-tick-value" x={left - 8} y={t.at} dy="0.355em" textAnchor="end" fontSize={FONT} fill={AXIS}>
                    {t.label}
                  </text>
                </g>
              ))}
            </g>
            {row && <line className="xy-cursor" x1={cursorX} x2={cursorX} y1={top} y2={bottom} stroke="#9ca3af" />}
          </svg>
        )}
        {row && (
          <div
            className="xy-tooltip"
            role="status"
            style={cursorX > (left + right) / 2 ? { right: width - cursorX + 10, top } : { left: cursorX + 10, top }}
          >
            <p className="xy-tooltip-title">{tooltipTitle(row[xKey] as number)}</p>
            {series.map((s) => (
              <p key={s.key} style={{ color: s.color }}>
                {s.name}: {typeof row[s.key] === 'number' ? valueFormat(row[s.key] as number) : '–'}
              </p>
            ))}
          </div>
        )}
      </div>
      {legend && <XYLegend series={series} />}
    </div>
  );
}
