/** The legend under an x/y chart (both engines): a line sample and the series' name per series. */
import type { XYSeries } from './XYChart';
import './xyChart.css';

export function XYLegend({ series }: { series: readonly XYSeries[] }) {
  return (
    <ul className="xy-legend">
      {series.map((s) => (
        <li key={s.key}>
          <svg width="18" height="10" aria-hidden="true">
            <line x1="1" x2="17" y1="5" y2="5" stroke={s.color} strokeWidth={2} strokeDasharray={s.dash} />
          </svg>
          <span className="recharts-legend-item-text">{s.name}</span>
        </li>
      ))}
    </ul>
  );
}
