/**
 * The x/y chart drawn with Recharts (the library the design names), with the same props as the
 * hand-written SVG chart (XYChart.tsx): lines or step areas, markers, shaded bands, a legend and a
 * tooltip. A series' `range` (a spread over seeds) is a ranged Area under its line, in the line's
 * colour at the SVG band's opacity, left out of the tooltip and the legend. Animation is off and
 * the data arrive thinned (a few hundred points) and memoised, so a re-render draws the new data
 * once. Which engine a chart uses is set per view (engine.tsx).
 *
 * To keep work off the main thread's longest tasks: the ticks are given and every one is shown
 * (`interval={0}`), so Recharts measures no tick labels; the legend is the SVG chart's HTML list
 * (Recharts' own measures its box and draws the chart again); the first drawing waits its turn in
 * the draw queue (drawQueue.ts), so charts that appear together draw in separate tasks. The queue
 * split an opening of Compare from one task of 2.2-2.5 s into one per chart of 0.3-0.7 s (load
 * 12-27 on 2 cores), with about the same total: Recharts still misses the bar (BENCHMARKS.md).
 */
import { useLayoutEffect, useMemo, useRef, useState } from 'react';
import { flushSync } from 'react-dom';
import { Area, CartesianGrid, ComposedChart, Line, ReferenceArea, ReferenceLine, Tooltip, XAxis, YAxis } from 'recharts';
import { queueDraw } from './drawQueue';
import { fitLabel, rechartsInput } from './plot';
import { ticksWithin } from './scale';
import type { XYBand, XYChartProps, XYMarker } from './XYChart';
import { XYLegend } from './XYLegend';

/** A band's opacity, as the SVG chart's (.xy-band). */
const BAND_OPACITY = 0.18;

/**
 * A ranged Area's value for a row: [low, high] from the series' two range keys. One function per
 * range array, so a re-render with the same (memoised) series hands Recharts the same dataKey.
 */
const rangeKeys = new WeakMap<[string, string], (d: unknown) => [number, number]>();
function rangeOf(range: [string, string]): (d: unknown) => [number, number] {
  let f = rangeKeys.get(range);
  if (!f) {
    const [lo, hi] = range;
    f = (d) => [(d as Record<string, number>)[lo]!, (d as Record<string, number>)[hi]!];
    rangeKeys.set(range, f);
  }
  return f;
}

const NO_MARKERS: XYMarker[] = [];
const NO_BANDS: XYBand[] = [];

/** Room Recharts leaves for the y axis and at the right (as the SVG chart's). */
const Y_AXIS = 56;
const RIGHT = 12;

export default function RechartsXY(props: XYChartProps) {
  const { data, xKey, series, x, y, height, markers = NO_MARKERS, bands = NO_BANDS, tooltipTitle, valueFormat, label, legend, xGrid = true } = props;
  const box = useRef<HTMLDivElement>(null);
  const [width, setWidth] = useState(0);
  useLayoutEffect(() => {
    const el = box.current;
    if (!el) return;
    let drawn = false;
    let cancel = () => {};
    const ro = new ResizeObserver(() => {
      if (drawn) return setWidth(el.clientWidth);
      cancel();
      cancel = queueDraw(() => {
        drawn = true;
        // Drawn in this task, not in a later render task that might hold several charts.
        flushSync(() => setWidth(el.clientWidth));
      });
    });
    ro.observe(el);
    return () => {
      cancel();
      ro.disconnect();
    };
  }, []);
  // Axes that can be drawn and every value held inside them (app/charts/plot.ts), as for the SVG
  // chart: Recharts is never handed a 1e308 or a NaN to map.
  const input = useMemo(() => rechartsInput({ data, xKey, series, x, y, height, markers, bands }), [data, xKey, series, x, y, height, markers, bands]);
  const xTicks = useMemo(() => {
    if (input.xTicks) return input.xTicks;
    // Integer ticks as dense as their labels allow (about 7 px a digit, 20 px apart), as the SVG chart.
    const [d0, d1] = input.xDomain;
    const chars = Math.max(x.format(d0).length, x.format(d1).length);
    return ticksWithin(d0, d1, 1 + Math.max(1, Math.floor((width - Y_AXIS - RIGHT) / (chars * 7 + 20))), true);
  }, [input, x, width]);
  return (
    <div className="xy-chart">
      <div ref={box} role="img" aria-label={label} style={{ height }}>
        {width > 0 && (
          <ComposedChart width={width} height={height} data={input.data} margin={{ top: 4, right: RIGHT, bottom: 0, left: 0 }}>
            <CartesianGrid vertical={xGrid} stroke="#e6e8eb" />
            <XAxis dataKey={xKey} type="number" domain={input.xDomain} ticks={xTicks} interval={0} tickFormatter={(v: number) => fitLabel(x.format, v)} allowDataOverflow fontSize={11} />
            <YAxis type="number" domain={input.yDomain} ticks={input.yTicks} interval={0} tickFormatter={(v: number) => fitLabel(y.format, v)} allowDataOverflow width={Y_AXIS} fontSize={11} />
            {input.bands.map((b, i) => (
              <ReferenceArea key={`b${i}`} x1={b.x1} x2={b.x2} fill={b.fill} fillOpacity={b.opacity} ifOverflow="hidden" label={b.label} />
            ))}
            {input.markers.map((m, i) => (
              <ReferenceLine key={`m${i}`} x={m.x} stroke={m.color} strokeDasharray={m.dash} ifOverflow="hidden" label={m.label} />
            ))}
            {series.map(
              (s) =>
                s.range &&
                !s.stepArea && (
                  <Area
                    key={`${s.key}-range`}
                    className="xy-band"
                    dataKey={rangeOf(s.range)}
                    name={`${s.name} (range)`}
                    type="linear"
                    stroke="none"
                    fill={s.color}
                    fillOpacity={BAND_OPACITY}
                    tooltipType="none"
                    legendType="none"
                    activeDot={false}
                    isAnimationActive={false}
                  />
                ),
            )}
            {series.map((s) =>
              s.stepArea ? (
                <Area key={s.key} dataKey={s.key} name={s.name} type="stepAfter" stroke={s.color} fill={s.color} fillOpacity={0.35} isAnimationActive={false} />
              ) : (
                <Line
                  key={s.key}
                  dataKey={s.key}
                  name={s.name}
                  stroke={s.color}
                  strokeDasharray={s.dash}
                  strokeWidth={s.width ?? 1.5}
                  dot={input.data.length === 1}
                  isAnimationActive={false}
                />
              ),
            )}
            <Tooltip isAnimationActive={false} labelFormatter={(v) => tooltipTitle(Number(v))} formatter={(v) => valueFormat(Number(v))} />
          </ComposedChart>
        )}
      </div>
      {legend && <XYLegend series={series} />}
    </div>
  );
}
