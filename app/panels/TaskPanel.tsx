/** The task, its own knobs (TASK_KNOBS) and the run's main settings, rendered from CONFIG_FIELDS. */
import { useState } from 'react';
import { CONFIG_FIELDS, getField, overriddenFields, PRESET_IDS, presetConfig, PRESETS, TASK_KNOBS, type ConfigKey, type PresetId, type TaskId } from '../../workers/meta';
import type { ParamSpec } from '../../workers/core/methods/params';
import { useAppStore } from '../store';
import { ParamControl } from './ParamControl';

/** Knobs every task shares, shown after the task's own. */
const RUN_KNOBS: ConfigKey[] = ['seed', 'batch', 'group', 'lr', 'epochs', 'model.hidden'];
const ALL_TASK_KNOBS = new Set<ConfigKey>(Object.values(TASK_KNOBS).flat());

const TASK_TITLES: Record<TaskId, string> = {
  search: 'toy multi-turn search',
  tools: 'multi-step tool use with checklists',
  roles: 'two roles, one policy',
  sequence: 'sequence matching (the collapse dial)',
};

/** One line per task: what the policy does and what a blind policy gets. */
const TASK_BLURBS: Record<TaskId, string> = {
  search:
    'Each episode hides a knowledge base (entity → attribute → value) and asks one value. The agent emits SEARCH <entity> <attr> and sees RES <value> (wrong with probability "search noise"), or ends with ANSWER <value>. Reward 1 for the right answer; a blind guess is right 1 time in "values".',
  tools:
    'A request needs tool calls in dependency order (RATE, CONV, BOOK, CONFIRM). Each turn is judged against a CM2 checklist by a simulated judge (label flips at "judge noise"); a failed strict item ends the episode.',
  roles:
    'Two roles share the policy: a planner TELLs the executor what to LOOK up, then ANSWERs. The roles are rewarded on different scales ("executor reward scale", "offset"), which is what per-role normalization (Dr. MAS) is for.',
  sequence:
    'Write a hidden sequence in one turn: reward 1 only for an exact match (or partial credit). A blind policy matches 1 time in symbols^length, so most groups are all-equal: the Advantage Collapse toy.',
};

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

/** Named whole configs (workers/content/presets.ts): the classroom defaults, or a size for real GPUs. */
function PresetPicker() {
  const setConfig = useAppStore((s) => s.setConfig);
  const locked = useLocked();
  const [choice, setChoice] = useState<PresetId | ''>('');
  const doc = choice ? PRESETS[choice].doc : 'Replaces every setting with a named configuration.';
  return (
    <div className="field field-wide" title={doc}>
      <label htmlFor="preset-picker">preset</label>
      <select
        id="preset-picker"
        value={choice}
        disabled={locked}
        aria-describedby="preset-doc"
        onChange={(e) => {
          const id = e.target.value as PresetId | '';
          setChoice(id);
          if (id) setConfig(presetConfig(id));
        }}
      >
        <option value="">(choose a preset)</option>
        {PRESET_IDS.map((id) => (
          <option key={id} value={id}>
            {PRESETS[id].label}
          </option>
        ))}
      </select>
      <span id="preset-doc" className="hint">
        {doc}
      </span>
    </div>
  );
}

/** Settings an active method replaces (DAPO's clip, ZeroSearch's noise curriculum, ...). */
function MethodOverrides() {
  const config = useAppStore((s) => s.config);
  const fields = overriddenFields(config);
  if (fields.length === 0) return null;
  return (
    <p className="hint" data-testid="method-overrides">
      Set by the active methods (the values above apply when they are off):{' '}
      {fields.map((f, i) => (
        <span key={f.key}>
          {i > 0 && ', '}
          <code>{f.key}</code> = {String(f.value)}
        </span>
      ))}
      .
    </p>
  );
}

export function TaskPanel() {
  const imported = useAppStore((s) => s.imported !== null);
  const importedLog = useAppStore((s) => Boolean(s.imported?.log));
  const task = useAppStore((s) => s.config.task);
  const own = TASK_KNOBS[task] as readonly ConfigKey[];
  const advanced = (Object.keys(CONFIG_FIELDS) as ConfigKey[]).filter(
    (k) => k !== 'task' && !RUN_KNOBS.includes(k) && !ALL_TASK_KNOBS.has(k),
  );
  return (
    <section className="panel task-panel" aria-labelledby="task-title">
      <h2 id="task-title">Task: {TASK_TITLES[task]}</h2>
      <div className="task-pickers">
        <Knobs keys={['task']} />
        <PresetPicker />
      </div>
      <details className="one-click">
        <summary>About this task</summary>
        <p className="blurb">{TASK_BLURBS[task]}</p>
      </details>
      <Knobs keys={RUN_KNOBS} />
      <details className="one-click">
        <summary>The task's own settings ({own.length})</summary>
        <Knobs keys={[...own]} />
      </details>
      <details className="advanced">
        <summary>Model, optimizer and loss settings</summary>
        <Knobs keys={advanced} />
      </details>
      <MethodOverrides />
      <p className="hint">
        {imported
          ? importedLog
            ? 'This page’s settings (read-only while the imported log is shown): a verl or TRL log does not hold the playground’s.'
            : 'The imported run’s settings (read-only).'
          : 'A change applies from the next iteration (marked on the charts); one that alters the model’s shape or the task resets the run.'}
      </p>
    </section>
  );
}
