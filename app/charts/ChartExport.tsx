/**
 * PNG and SVG download buttons for one chart. `render` gives the chart as a standalone SVG (the
 * line charts copy their own <svg>, app/exporters.ts chartSvg; a heatmap draws its cells as
 * rectangles, ./Heatmap.tsx heatmapSvg); the PNG is that SVG drawn onto a canvas.
 */
import { useState } from 'react';
import { downloadBlob, downloadText, svgToPng } from '../exporters';

export interface RenderedChart {
  svg: string;
  width: number;
  height: number;
}

export function ChartExport(props: { title: string; render: () => RenderedChart | null; fileName: () => string }) {
  const { title, render, fileName } = props;
  const [error, setError] = useState<string | null>(null);
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
            downloadBlob(await svgToPng(r.svg, r.width, r.height), `${fileName()}.png`);
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
          downloadText(r.svg, `${fileName()}.svg`, 'image/svg+xml');
          setError(null);
        }}
      >
        SVG
      </button>
      {error && <span className="field-error">{error}</span>}
    </span>
  );
}
