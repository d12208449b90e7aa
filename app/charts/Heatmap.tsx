/**
 * A distribution over time on a canvas: one column per iteration, one row per histogram bin (low
 * values at the bottom), each column scaled to its own maximum so the shape is visible whatever
 * the token count. Optional horizontal guide lines (the clip bounds) are drawn over it.
 */
import { useEffect, useRef, type MouseEvent as ReactMouseEvent } from 'react';
import { fractionAlong } from './scale';
import './Heatmap.css';

/** Viridis-like stops, dark (empty) to bright (the column's mode). */
const STOPS: Array<[number, number, number]> = [
  [68, 1, 84],
  [59, 82, 139],
  [33, 145, 140],
  [94, 201, 98],
  [253, 231, 37],
];

function colour(t: number): [number, number, number] {
  const x = Math.min(1, Math.max(0, t)) * (STOPS.length - 1);
  const i = Math.min(STOPS.length - 2, Math.floor(x));
  const f = x - i;
  const a = STOPS[i]!;
  const b = STOPS[i + 1]!;
  return [a[0] + (b[0] - a[0]) * f, a[1] + (b[1] - a[1]) * f, a[2] + (b[2] - a[2]) * f];
}

export interface HeatmapProps {
  /** [iterations][bins] counts. */
  columns: number[][];
  /** Bin edges (bins + 1), shared by every column. */
  edges: number[];
  /** Values at which to draw a horizontal guide (e.g. the clip bounds), with their colour. */
  guides?: Array<{ value: number; color: string }>;
  height: number;
  label: string;
  /** Called with the (column, bin) of a click on the map; the same cells are buttons in the chart's data table. */
  onCell?: (column: number, bin: number) => void;
}

export function HeatmapCanvas({ columns, edges, guides = [], height, label, onCell }: HeatmapProps) {
  const ref = useRef<HTMLCanvasElement>(null);
  /** CSS pixels, from the ResizeObserver; 0 until its first callback. */
  const width = useRef(0);
  const draw = useRef(() => {});
  draw.current = () => {
    if (ref.current && width.current > 0) drawHeatmap(ref.current, width.current, { columns, edges, guides, height });
  };

  // New data: draw with the width already known. Reading clientWidth here instead would force a
  // layout of the whole page React has just changed, after every commit.
  useEffect(() => draw.current(), [columns, edges, guides, height]);

  useEffect(() => {
    const canvas = ref.current;
    if (!canvas) return;
    // The observer reports after the browser's own layout (so clientWidth costs nothing there), first
    // when the canvas is laid out, then on every resize.
    const ro = new ResizeObserver(() => {
      width.current = canvas.clientWidth;
      draw.current();
    });
    ro.observe(canvas);
    return () => ro.disconnect();
  }, []);

  const click = onCell
    ? (e: ReactMouseEvent<HTMLCanvasElement>) => {
        const box = e.currentTarget.getBoundingClientRect();
        const n = columns.length;
        const bins = edges.length - 1;
        if (n === 0 || bins <= 0 || box.width <= 0 || box.height <= 0) return;
        const c = Math.min(n - 1, Math.max(0, Math.floor(((e.clientX - box.left) / box.width) * n)));
        const b = bins - 1 - Math.min(bins - 1, Math.max(0, Math.floor(((e.clientY - box.top) / box.height) * bins)));
        onCell(c, b);
      }
    : undefined;
  return <canvas ref={ref} className={`heatmap-canvas ${onCell ? 'clickable' : ''}`} style={{ height }} role="img" aria-label={label} onClick={click} />;
}

function drawHeatmap(canvas: HTMLCanvasElement, cssWidth: number, { columns, edges, guides = [], height }: Omit<HeatmapProps, 'label'>): void {
  const dpr = window.devicePixelRatio || 1;
  const w = Math.max(1, Math.round(cssWidth * dpr));
  const h = Math.max(1, Math.round(height * dpr));
  if (canvas.width !== w) canvas.width = w;
  if (canvas.height !== h) canvas.height = h;
  // A CPU-backed canvas: an accelerated one is a composited layer of its own, and the frame that
  // first drew the heatmaps spent 37 ms assigning layers (2-8 ms with this) on a 2-core machine.
  // A redraw at most every 600 ms of a small image scaled up costs little on the CPU.
  const ctx = canvas.getContext('2d', { willReadFrequently: true });
  if (!ctx) return;
  ctx.fillStyle = 'rgb(68, 1, 84)';
  ctx.fillRect(0, 0, w, h);
  const n = columns.length;
  const bins = edges.length - 1;
  if (n === 0 || bins <= 0) {
    // Without a caption an empty map is a solid block that reads as a distribution of zeros.
    ctx.fillStyle = 'rgba(255, 255, 255, 0.85)';
    ctx.font = `${Math.round(12 * dpr)}px system-ui, sans-serif`;
    ctx.textAlign = 'center';
    ctx.textBaseline = 'middle';
    ctx.fillText('No iterations yet', w / 2, h / 2);
    return;
  }
  // One pixel per (iteration, bin), scaled up without smoothing.
  const img = new ImageData(n, bins);
  for (let c = 0; c < n; c++) {
    const col = columns[c]!;
    let max = 0;
    for (const v of col) if (v > max) max = v;
    for (let b = 0; b < bins; b++) {
      const v = col[b] ?? 0;
      const [r, g, bl] = max > 0 ? colour(Math.sqrt(v / max)) : STOPS[0]!;
      const o = ((bins - 1 - b) * n + c) * 4;
      img.data[o] = r;
      img.data[o + 1] = g;
      img.data[o + 2] = bl;
      img.data[o + 3] = 255;
    }
  }
  const off = document.createElement('canvas');
  off.width = n;
  off.height = bins;
  off.getContext('2d')?.putImageData(img, 0, 0);
  ctx.imageSmoothingEnabled = false;
  ctx.drawImage(off, 0, 0, w, h);
  const lo = edges[0]!;
  const hi = edges[bins]!;
  ctx.lineWidth = Math.max(1, dpr);
  ctx.setLineDash([4 * dpr, 3 * dpr]);
  for (const g of guides) {
    if (!Number.isFinite(g.value) || g.value <= lo || g.value >= hi) continue;
    const y = h - fractionAlong(g.value, lo, hi) * h;
    if (!Number.isFinite(y)) continue;
    ctx.strokeStyle = g.color;
    ctx.beginPath();
    ctx.moveTo(0, y);
    ctx.lineTo(w, y);
    ctx.stroke();
  }
}
