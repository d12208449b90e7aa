/**
 * A small SVG curve: the mean over seeds as a line over its min-max band, with optional vertical
 * marks (crashes). Plain SVG, as the live charts are: a grid of 16 of these redraws in well under
 * a frame.
 */
import { memo } from 'react';
import type { Band } from './arenaModel';

interface SparklineProps {
  band: Band;
  /** The x axis runs from iteration 1 to this. */
  xMax: number;
  /** The y range; null: from the band's own min and max. */
  yRange: [number, number] | null;
  marks?: readonly number[];
  label: string;
  className?: string;
}

const W = 160;
const H = 40;
const PAD = 2;

function fmt(n: number): string {
  return n.toFixed(1);
}

export const Sparkline = memo(function Sparkline({ band, xMax, yRange, marks = [], label, className }: SparklineProps) {
  const n = band.iters.length;
  let [y0, y1] = yRange ?? [Math.min(...band.lo), Math.max(...band.hi)];
  if (!Number.isFinite(y0) || !Number.isFinite(y1)) [y0, y1] = [0, 1];
  if (y1 - y0 < 1e-9) [y0, y1] = [y0 - 0.5, y1 + 0.5];
  const x = (it: number) => PAD + ((it - 1) / Math.max(1, xMax - 1)) * (W - 2 * PAD);
  const y = (v: number) => H - PAD - ((Math.min(y1, Math.max(y0, v)) - y0) / (y1 - y0)) * (H - 2 * PAD);
  const line = band.iters.map((it, i) => `${fmt(x(it))},${fmt(y(band.mean[i]!))}`).join(' ');
  const area =
    band.iters.map((it, i) => `${fmt(x(it))},${fmt(y(band.hi[i]!))}`).join(' ') +
    ' ' +
    band.iters
      .map((it, i) => `${fmt(x(it))},${fmt(y(band.lo[i]!))}`)
      .reverse()
      .join(' ');
  return (
    <svg className={`sparkline ${className ?? ''}`} viewBox={`0 0 ${W} ${H}`} preserveAspectRatio="none" role="img" aria-label={label}>
      <rect x="0" y="0" width={W} height={H} className="sparkline-bg" />
      {n > 1 && <polygon points={area} className="sparkline-band" />}
      {n > 1 && <polyline points={line} className="sparkline-line" />}
      {n === 1 && <circle cx={x(band.iters[0]!)} cy={y(band.mean[0]!)} r="1.5" className="sparkline-dot" />}
      {marks.map((m, i) => (
        <line key={i} x1={x(m)} x2={x(m)} y1="0" y2={H} className="sparkline-mark" />
      ))}
    </svg>
  );
});
