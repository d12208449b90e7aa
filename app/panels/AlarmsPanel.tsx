/**
 * Alarms on the timeline (app/alarms.ts): each with the iteration and value that set it off, a
 * one-line explanation, and the methods that address it (those this build has are marked).
 */
import { ALARM_DOCS, ALARM_KINDS, ALARM_THRESHOLDS, alarmExplain, remediesFor, type AlarmKind } from '../alarms';
import { useAppStore } from '../store';
import { alarmKindOf } from '../store/metricsSlice';
import './AlarmsPanel.css';

/** The latest alarms listed; older ones stay on the charts. */
const MAX_LISTED = 30;

function fmt(v: number | undefined): string {
  if (v === undefined || !Number.isFinite(v)) return String(v);
  return Math.abs(v) >= 100 ? v.toFixed(0) : String(Number(v.toPrecision(3)));
}

function Remedies({ kind, methods }: { kind: AlarmKind; methods: readonly string[] }) {
  const remedies = remediesFor(kind, methods);
  if (remedies.length === 0) return <span className="remedies">Every method this build has for it is already on.</span>;
  return (
    <span className="remedies">
      Addressed by:{' '}
      {remedies.map((r, i) => (
        <span key={r.id}>
          {i > 0 && ', '}
          <strong title="available in the Methods panel">{r.name}</strong>
        </span>
      ))}
      .
    </span>
  );
}

export function AlarmsPanel() {
  const markers = useAppStore((s) => s.markers);
  const methods = useAppStore((s) => s.config.methods);
  const convergedAt = useAppStore((s) => s.convergedAt);
  const alarms = markers.flatMap((m) => {
    const kind = alarmKindOf(m);
    return kind ? [{ ...m, alarm: kind }] : [];
  });
  const listed = alarms.slice(-MAX_LISTED).reverse();
  return (
    <section className="panel alarms" aria-labelledby="alarms-title" data-testid="alarms" data-count={alarms.length} data-converged-at={convergedAt ?? ''}>
      <h2 id="alarms-title">Alarms</h2>
      {convergedAt !== null && (
        <p className="hint" data-testid="alarms-converged">
          The run converged at iteration {convergedAt} (success at least {ALARM_THRESHOLDS.converged} over {ALARM_THRESHOLDS.convergedWindow} iterations): from there an alarm
          fires only on a large value, not on the ties, low entropy and tiny gradients of a solved task.
        </p>
      )}
      {listed.length === 0 ? (
        <p className="hint">
          None yet. Watched: {ALARM_KINDS.map((k) => ALARM_DOCS[k].title.toLowerCase()).join(', ')}; each is marked on the charts when it starts.
        </p>
      ) : (
        <ul className="alarm-list" aria-live="polite">
          {listed.map((a, i) => (
            <li key={`${a.kind}-${a.iter}-${i}`} className={`alarm alarm-${a.alarm}`} data-kind={a.alarm}>
              <span className="alarm-head">
                <span className="alarm-dot" aria-hidden="true" />
                <strong>{ALARM_DOCS[a.alarm].title}</strong> at iteration {a.iter} (value {fmt(a.value)})
              </span>
              <span className="alarm-explain">{alarmExplain(a.alarm, methods)}</span>
              <Remedies kind={a.alarm} methods={methods} />
            </li>
          ))}
        </ul>
      )}
      {alarms.length > MAX_LISTED && <p className="hint">{alarms.length - MAX_LISTED} older alarms are on the charts only.</p>}
    </section>
  );
}
