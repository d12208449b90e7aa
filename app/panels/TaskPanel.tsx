/** The task (toy multi-turn search) and its knobs, rendered from CONFIG_FIELDS. */
import { CONFIG_FIELDS, getField, type ConfigKey } from '../../workers/config';
import type { ParamSpec } from '../../workers/methods/params';
import { useAppStore } from '../store';
import { ParamControl } from './ParamControl';

const MAIN_KNOBS: ConfigKey[] = [
  'seed',
  'env.entities',
  'env.attributes',
  'env.values',
  'env.maxTurns',
  'batch',
  'group',
  'lr',
  'epochs',
  'model.hidden',
];
const ADVANCED_KNOBS = (Object.keys(CONFIG_FIELDS) as ConfigKey[]).filter((k) => !MAIN_KNOBS.includes(k));

/** Settings are read-only only for an imported run; a change mid-run applies from the next iteration. */
function useLocked(): boolean {
  return useAppStore((s) => s.imported !== null);
}

function Knobs({ keys }: { keys: ConfigKey[] }) {
  const config = useAppStore((s) => s.config);
  const locked = useLocked();
  return (
    <div className="knobs">
      {keys.map((k) => (
        <ParamControl
          key={k}
          fieldKey={k}
          spec={CONFIG_FIELDS[k] as ParamSpec}
          value={getField(config, k)}
          disabled={locked}
        />
      ))}
    </div>
  );
}

export function TaskPanel() {
  const imported = useAppStore((s) => s.imported !== null);
  return (
    <section className="panel" aria-labelledby="task-title">
      <h2 id="task-title">Task: toy multi-turn search</h2>
      <p className="blurb">
        Each episode hides a small knowledge base (entity → attribute → value) and asks for one value. Each
        turn the agent emits <code>SEARCH &lt;entity&gt; &lt;attr&gt;</code> and sees <code>RES &lt;value&gt;</code>,
        or ends with <code>ANSWER &lt;value&gt;</code>. Reward 1 for the right answer, else 0; a blind guess is
        right 1 time in <em>values</em>.
      </p>
      <Knobs keys={MAIN_KNOBS} />
      <details className="advanced">
        <summary>Model, optimizer and loss settings</summary>
        <Knobs keys={ADVANCED_KNOBS} />
      </details>
      <p className="hint">
        {imported
          ? 'The imported run’s settings (read-only).'
          : 'A change applies from the next iteration (marked on the charts); one that alters the model’s shape or the task resets the run.'}
      </p>
    </section>
  );
}
