/**
 * The x/y chart drawn with Recharts (the library the design names), with the same props as the
 * hand-written SVG chart (XYChart.tsx): lines or step areas, markers, shaded bands, a legend and a
 * tooltip. Animation is off and the data arrive thinned (a few hundred points) and memoised, so a
 * re-render draws the new data once. Which engine a chart uses is `chartEngine` (engine.ts).
 */
import { useLayoutEffect, useRef, useState } from 'react';
import { Area, CartesianGrid, ComposedChart, Legend, Line, ReferenceArea, ReferenceLine, Tooltip, XAxis, YAxis } from 'recharts';
import type { XYChartProps } from './XYChart';

export default function RechartsXY(props: XYChartProps) {
  const { data, xKey, series, x, y, height, markers = [], bands = [], tooltipTitle, valueFormat, label, legend, xGrid = true } = props;
  const box = useRef<HTMLDivElement>(null);
  const [width, setWidth] = useState(0);
  useLayoutEffect(() => {
    const el = box.current;
    if (!el) return;
    const ro = new ResizeObserver(() => setWidth(el.clientWidth));
    ro.observe(el);
    return () => ro.disconnect();
  }, []);
  return (
    <div ref={box} className="xy-chart" role="img" aria-label={label}>
      {width > 0 && (
        <ComposedChart width={width} height={height + (legend ? 24 : 0)} data={data as object[]} margin={{ top: 4, right: 12, bottom: 0, left: 0 }}>
          <CartesianGrid vertical={xGrid} stroke="#e6e8eb" />
          <XAxis dataKey={xKey} type="number" domain={x.domain} ticks={x.ticks} tickFormatter={x.format} allowDataOverflow fontSize={11} />
          <YAxis type="number" domain={y.domain} ticks={y.ticks} tickFormatter={y.format} allowDataOverflow width={56} fontSize={11} />
          {bands.map((b, i) => (
            <ReferenceArea key={`b${i}`} x1={b.x1} x2={b.x2} fill={b.fill} fillOpacity={b.opacity} ifOverflow="hidden" label={b.label} />
          ))}
          {markers.map((m, i) => (
            <ReferenceLine key={`m${i}`} x={m.x} stroke={m.color} strokeDasharray={m.dash} ifOverflow="hidden" label={m.label} />
          ))}
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
                dot={data.length === 1}
                isAnimationActive={false}
              />
            ),
          )}
          <Tooltip isAnimationActive={false} labelFormatter={(v) => tooltipTitle(Number(v))} formatter={(v) => valueFormat(Number(v))} />
          {legend && <Legend />}
        </ComposedChart>
      )}
    </div>
  );
}
