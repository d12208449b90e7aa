/**
 * The advantage estimator as one choice: a radio group, since a run has exactly one. Choosing
 * another swaps it, and the notice under the group says so with Undo; an estimator the other
 * active methods rule out is disabled with the reason as its title and in a line below.
 */
import { useMemo } from 'react';
import { ESTIMATOR_IDS, methodDef } from '../../workers/meta';
import { toggleBlocker, toggledMethods } from '../methodToggle';
import { useAppStore } from '../store';
import { changeMethods } from './methodChange';
import './estimatorPicker.css';

export function MethodNoticeLine() {
  const notice = useAppStore((s) => s.methodNotice);
  const setNotice = useAppStore((s) => s.setMethodNotice);
  if (!notice) return null;
  return (
    <div role="status" className={`method-notice ${notice.kind}`} data-testid="method-notice">
      <span>{notice.text}</span>
      {notice.undo && (
        <button
          type="button"
          onClick={() => {
            const undo = notice.undo!;
            if (useAppStore.getState().setMethods(undo)) setNotice(null);
          }}
        >
          Undo
        </button>
      )}
      <button type="button" className="link-button" onClick={() => setNotice(null)} aria-label="Dismiss the notice">
        ×
      </button>
    </div>
  );
}

export function EstimatorPicker() {
  const config = useAppStore((s) => s.config);
  const locked = useAppStore((s) => s.imported !== null);
  const active = config.methods;
  const current = active.find((m) => ESTIMATOR_IDS.includes(m));
  const blockers = useMemo(
    () => new Map(ESTIMATOR_IDS.map((id) => [id, id === current ? null : toggleBlocker(config, id)])),
    [config, current],
  );
  return (
    <fieldset className="estimator-picker" data-testid="estimator-picker">
      <legend>Advantage estimator</legend>
      <div role="radiogroup" aria-label="Advantage estimator" className="estimator-options">
        {ESTIMATOR_IDS.map((id) => {
          const def = methodDef(id);
          const blocker = blockers.get(id);
          return (
            <label key={id} className="estimator-option" title={blocker ? `Not available: ${blocker.text}` : def.idea}>
              <input
                type="radio"
                name="estimator"
                value={id}
                checked={id === current}
                disabled={locked || blocker?.kind === 'refused'}
                onChange={() => changeMethods(toggledMethods(active, id))}
              />
              <span>{def.name}</span>
            </label>
          );
        })}
      </div>
      <MethodNoticeLine />
    </fieldset>
  );
}
