/**
 * Downloads from the page: text files (CSV, JSON) and charts as SVG and PNG. A chart's SVG is the
 * chart's own <svg> on the page (class recharts-surface, whichever engine drew it: app/charts/engine.tsx)
 * serialized with XMLSerializer, with a white background and its title and legend drawn in (both
 * engines draw the legend as HTML); the PNG draws that SVG onto a canvas. A figure is a copy of
 * what is on screen, so an export draws no chart of its own.
 */

export function downloadBlob(blob: Blob, fileName: string): void {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = fileName;
  a.rel = 'noopener';
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

export function downloadText(text: string, fileName: string, type: string): void {
  downloadBlob(new Blob([text], { type }), fileName);
}

/** `rl-playground-seed7-iter40` style stem for file names. */
export function fileStem(seed: number, iter: number): string {
  return `rl-playground-seed${seed}-iter${iter}`;
}

const SVG_NS = 'http://www.w3.org/2000/svg';
const HEADER = 26;
const FONT = 'system-ui, -apple-system, Segoe UI, Roboto, sans-serif';

let measure: CanvasRenderingContext2D | null = null;

/** Width of a legend label at 12px, measured with a canvas (an estimate if there is none). */
function textWidth(text: string): number {
  measure ??= document.createElement('canvas').getContext('2d');
  if (!measure) return text.length * 7;
  measure.font = `12px ${FONT}`;
  return Math.ceil(measure.measureText(text).width);
}

function svgText(x: number, y: number, text: string, attrs: Record<string, string> = {}): SVGTextElement {
  const t = document.createElementNS(SVG_NS, 'text');
  t.setAttribute('x', String(x));
  t.setAttribute('y', String(y));
  for (const [k, v] of Object.entries(attrs)) t.setAttribute(k, v);
  t.textContent = text;
  return t;
}

/**
 * A standalone SVG document of the chart inside `figure` (its largest recharts-surface), or null if
 * it has none yet. The title and legend entries are passed in, as the charts draw them in HTML.
 */
export function chartSvg(figure: HTMLElement, title: string, legend: Array<{ name: string; color: string }>): { svg: string; width: number; height: number } | null {
  // The chart's own surface: the largest one (legend icons are small recharts-surfaces too).
  let surface: SVGSVGElement | null = null;
  let area = 0;
  for (const svg of figure.querySelectorAll<SVGSVGElement>('svg.recharts-surface')) {
    if (svg.closest('.recharts-legend-wrapper')) continue;
    const r = svg.getBoundingClientRect();
    if (r.width * r.height > area) [surface, area] = [svg, r.width * r.height];
  }
  if (!surface) return null;
  const box = surface.getBoundingClientRect();
  const width = Math.round(box.width) || Number(surface.getAttribute('width')) || 600;
  const fullH = Math.round(box.height) || Number(surface.getAttribute('height')) || 200;
  // Recharts keeps room at the bottom for its HTML legend; the export draws the legend at the top.
  const legendBox = figure.querySelector('.recharts-legend-wrapper')?.getBoundingClientRect();
  const chartH = legendBox && legendBox.top >= box.top + box.height / 2 ? Math.max(40, Math.round(fullH - legendBox.height)) : fullH;
  const height = chartH + HEADER;

  const doc = document.createElementNS(SVG_NS, 'svg');
  doc.setAttribute('xmlns', SVG_NS);
  doc.setAttribute('width', String(width));
  doc.setAttribute('height', String(height));
  doc.setAttribute('viewBox', `0 0 ${width} ${height}`);
  doc.setAttribute('font-family', FONT);
  doc.setAttribute('font-size', '12');
  const bg = document.createElementNS(SVG_NS, 'rect');
  bg.setAttribute('width', '100%');
  bg.setAttribute('height', '100%');
  bg.setAttribute('fill', '#ffffff');
  doc.appendChild(bg);
  doc.appendChild(svgText(8, 17, title, { 'font-weight': '600', 'font-size': '13', fill: '#1f2328' }));
  // Legend entries right-aligned on the title line: swatch, gap, name; measured with a canvas.
  const widths = legend.map((item) => 12 + 4 + textWidth(item.name) + 14);
  let x = width - 8 - widths.reduce((a, b) => a + b, 0) + 14;
  legend.forEach((item, i) => {
    const swatch = document.createElementNS(SVG_NS, 'rect');
    swatch.setAttribute('x', String(x));
    swatch.setAttribute('y', '8');
    swatch.setAttribute('width', '12');
    swatch.setAttribute('height', '12');
    swatch.setAttribute('fill', item.color);
    doc.appendChild(swatch);
    doc.appendChild(svgText(x + 16, 18, item.name, { fill: '#5b6470' }));
    x += widths[i]!;
  });
  const chart = surface.cloneNode(true) as SVGSVGElement;
  chart.setAttribute('x', '0');
  chart.setAttribute('y', String(HEADER));
  chart.setAttribute('width', String(width));
  chart.setAttribute('height', String(chartH));
  chart.setAttribute('viewBox', `0 0 ${width} ${chartH}`);
  chart.removeAttribute('style');
  chart.removeAttribute('class');
  doc.appendChild(chart);
  return { svg: new XMLSerializer().serializeToString(doc), width, height };
}

/** Renders SVG text to a PNG blob at `scale` times its size. */
export async function svgToPng(svg: string, width: number, height: number, scale = 2): Promise<Blob> {
  const url = URL.createObjectURL(new Blob([svg], { type: 'image/svg+xml' }));
  try {
    const img = new Image();
    img.decoding = 'sync';
    await new Promise<void>((resolve, reject) => {
      img.onload = () => resolve();
      img.onerror = () => reject(new Error('the chart could not be drawn as an image'));
      img.src = url;
    });
    const canvas = document.createElement('canvas');
    canvas.width = Math.round(width * scale);
    canvas.height = Math.round(height * scale);
    const ctx = canvas.getContext('2d');
    if (!ctx) throw new Error('no 2D canvas in this browser');
    ctx.scale(scale, scale);
    ctx.drawImage(img, 0, 0, width, height);
    return await new Promise<Blob>((resolve, reject) =>
      canvas.toBlob((b) => (b ? resolve(b) : reject(new Error('the PNG could not be encoded'))), 'image/png'),
    );
  } finally {
    URL.revokeObjectURL(url);
  }
}

/** Copies text to the clipboard; false if the browser refuses (no permission, insecure context). */
export async function copyText(text: string): Promise<boolean> {
  try {
    if (!navigator.clipboard?.writeText) return false;
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    return false;
  }
}
