/**
 * Alarms on the timeline (app/alarms.ts): each with the iteration and value that set it off, a
 * one-line explanation, and the methods that address it (those this build has are marked).
 */
import { methodRegistry } from '../../workers/methods';
import { ALARM_DOCS, ALARM_KINDS } from '../alarms';
import { useAppStore } from '../store';
import { alarmKindOf } from '../store/metricsSlice';
import './AlarmsPanel.css';

/** The latest alarms listed; older ones stay on the charts. */
const MAX_LISTED = 30;

function fmt(v: number | undefined): string {
  if (v === undefined || !Number.isFinite(v)) return String(v);
  return Math.abs(v) >= 100 ? v.toFixed(0) : String(Number(v.toPrecision(3)));
}

function Remedies({ kind }: { kind: keyof typeof ALARM_DOCS }) {
  return (
    <span className="remedies">
      Addressed by:{' '}
      {ALARM_DOCS[kind].remedies.map((r, i) => (
        <span key={r.id}>
          {i > 0 && ', '}
          {Object.hasOwn(methodRegistry, r.id) ? <strong title="available in the Methods panel">{r.name}</strong> : r.name}
        </span>
      ))}
      .
    </span>
  );
}

export function AlarmsPanel() {
  const markers = useAppStore((s) => s.markers);
  const alarms = markers.flatMap((m) => {
    const kind = alarmKindOf(m);
    return kind ? [{ ...m, alarm: kind }] : [];
  });
  const listed = alarms.slice(-MAX_LISTED).reverse();
  return (
    <section className="panel alarms" aria-labelledby="alarms-title" data-testid="alarms" data-count={alarms.length}>
      <h2 id="alarms-title">Alarms</h2>
      {listed.length === 0 ? (
        <p className="hint">
          None yet. Watched: {ALARM_KINDS.map((k) => ALARM_DOCS[k].title.toLowerCase()).join(', ')}. Each one is marked on the
          charts&rsquo; timeline when it starts.
        </p>
      ) : (
        <ul className="alarm-list" aria-live="polite">
          {listed.map((a, i) => (
            <li key={`${a.kind}-${a.iter}-${i}`} className={`alarm alarm-${a.alarm}`} data-kind={a.alarm}>
              <span className="alarm-head">
                <span className="alarm-dot" aria-hidden="true" />
                <strong>{ALARM_DOCS[a.alarm].title}</strong> at iteration {a.iter} (value {fmt(a.value)})
              </span>
              <span className="alarm-explain">{ALARM_DOCS[a.alarm].explain}</span>
              <Remedies kind={a.alarm} />
            </li>
          ))}
        </ul>
      )}
      {alarms.length > MAX_LISTED && <p className="hint">{alarms.length - MAX_LISTED} older alarms are on the charts only.</p>}
    </section>
  );
}
