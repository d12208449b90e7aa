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
  /** What an empty map says on the canvas (default: no iterations yet). */
  empty?: string;
}

export function HeatmapCanvas({ columns, edges, guides = [], height, label, onCell, empty }: HeatmapProps) {
  const ref = useRef<HTMLCanvasElement>(null);
  /** CSS pixels, from the ResizeObserver; 0 until its first callback. */
  const width = useRef(0);
  const draw = useRef(() => {});
  draw.current = () => {
    if (ref.current && width.current > 0) drawHeatmap(ref.current, width.current, { columns, edges, guides, height, empty });
  };

  // New data: draw with the width already known. Reading clientWidth here instead would force a
  // layout of the whole page React has just changed, after every commit.
  useEffect(() => draw.current(), [columns, edges, guides, height, empty]);

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

function drawHeatmap(canvas: HTMLCanvasElement, cssWidth: number, { columns, edges, guides = [], height, empty = 'No iterations yet' }: Omit<HeatmapProps, 'label' | 'onCell'>): void {
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
    ctx.fillText(empty, w / 2, h / 2);
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

/** The heatmap as a standalone SVG: a rectangle per (iteration, bin), its guides, the axis ends, a title. */
export function heatmapSvg(o: { columns: number[][]; edges: number[]; guides?: Array<{ value: number; color: string }>; title: string; first?: number; last?: number }): { svg: string; width: number; height: number } | null {
  const { columns, edges, guides = [], title } = o;
  const n = columns.length;
  const bins = edges.length - 1;
  if (n === 0 || bins <= 0) return null;
  // Fixed size: 40 px for the value axis, 560 for the plot, a title line above and a label line below.
  const [left, plotW, top, plotH, bottom] = [44, 560, 28, 200, 20];
  const width = left + plotW + 8;
  const height = top + plotH + bottom;
  const cw = plotW / n;
  const ch = plotH / bins;
  const esc = (t: string) => t.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  const num = (x: number) => String(Number(x.toPrecision(3)));
  const parts: string[] = [
    `<rect width="100%" height="100%" fill="#ffffff"/>`,
    `<text x="8" y="18" font-weight="600" font-size="13" fill="#1f2328">${esc(title)}</text>`,
    `<rect x="${left}" y="${top}" width="${plotW}" height="${plotH}" fill="rgb(68,1,84)"/>`,
  ];
  for (let c = 0; c < n; c++) {
    const col = columns[c]!;
    let max = 0;
    for (const v of col) if (v > max) max = v;
    if (max <= 0) continue;
    for (let b = 0; b < bins; b++) {
      const v = col[b] ?? 0;
      if (v <= 0) continue;
      const [r, g, bl] = colour(Math.sqrt(v / max));
      const y = top + (bins - 1 - b) * ch;
      parts.push(`<rect x="${(left + c * cw).toFixed(2)}" y="${y.toFixed(2)}" width="${(cw + 0.05).toFixed(2)}" height="${(ch + 0.05).toFixed(2)}" fill="rgb(${Math.round(r)},${Math.round(g)},${Math.round(bl)})"/>`);
    }
  }
  const lo = edges[0]!;
  const hi = edges[bins]!;
  for (const g of guides) {
    if (!Number.isFinite(g.value) || g.value <= lo || g.value >= hi) continue;
    const y = (top + plotH - ((g.value - lo) / (hi - lo)) * plotH).toFixed(2);
    parts.push(`<line x1="${left}" x2="${left + plotW}" y1="${y}" y2="${y}" stroke="${g.color}" stroke-dasharray="4 3"/>`);
  }
  const label = (x: number, y: number, text: string, anchor = 'end') => `<text x="${x}" y="${y}" font-size="11" fill="#5b6470" text-anchor="${anchor}">${esc(text)}</text>`;
  parts.push(label(left - 4, top + 10, num(hi)), label(left - 4, top + plotH / 2 + 4, num((lo + hi) / 2)), label(left - 4, top + plotH, num(lo)));
  if (o.first !== undefined) parts.push(label(left, height - 5, `iteration ${o.first}`, 'start'));
  if (o.last !== undefined && o.last !== o.first) parts.push(label(left + plotW, height - 5, `iteration ${o.last}`));
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="system-ui, -apple-system, Segoe UI, Roboto, sans-serif">${parts.join('')}</svg>`;
  return { svg, width, height };
}
