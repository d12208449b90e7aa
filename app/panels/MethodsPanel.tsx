/**
 * The methods, rendered from the registry: the advantage estimators first, as one choice (radio
 * buttons: a run has exactly one, so a swap is visible and said with Undo), then the others grouped
 * by the pipeline stage they act on: a toggle, the idea, the paper and the parameters of each. A
 * toggle that would make a conflicting set is disabled, with the reason (naming both methods by
 * their cards' names) beside it.
 */
import { useMemo } from 'react';
import { ESTIMATOR_IDS, getField, methodDef, methodRegistry, type MethodDef, type Stage } from '../../workers/meta';
import { toggleBlocker, toggledMethods } from '../methodToggle';
import type { ParamSpec } from '../../workers/core/methods/params';
import { useAppStore } from '../store';
import { MethodNoticeLine } from './EstimatorPicker';
import { changeMethods } from './methodChange';
import { ParamControl } from './ParamControl';
import { WhyLine } from '../why/WhyPanel';
import './MethodsPanel.css';

const METHODS = Object.values(methodRegistry);

/** The stages in the order one iteration runs them (docs/ARCHITECTURE.md "One training iteration"). */
const STAGES: Array<{ stage: Stage; title: string; doc: string }> = [
  { stage: 'environment', title: 'Environment', doc: 'What the task returns: simulated search, noise, curricula.' },
  { stage: 'sampling', title: 'Sampling', doc: 'Which rollouts are drawn, and how many per prompt.' },
  { stage: 'reward', title: 'Reward', doc: 'Outcome and per-turn rewards.' },
  { stage: 'filtering', title: 'Filtering', doc: 'Which groups or rollouts are kept for the update.' },
  { stage: 'advantage', title: 'Advantage', doc: 'How rewards become per-token advantages.' },
  { stage: 'ratio', title: 'Importance-sampling (IS) ratio', doc: 'Importance ratios and their clipping.' },
  { stage: 'loss', title: 'Loss aggregation', doc: 'How token losses are combined.' },
  { stage: 'optimizer', title: 'Optimizer and schedule', doc: 'Step size, its scaling, reference resets.' },
];

function byStage(): Array<{ stage: Stage | 'estimator'; title: string; doc: string; methods: MethodDef[] }> {
  const others = METHODS.filter((m) => !m.estimator);
  const known = new Set(STAGES.map((s) => s.stage as string));
  const out: Array<{ stage: Stage | 'estimator'; title: string; doc: string; methods: MethodDef[] }> = [
    { stage: 'estimator', title: 'Advantage estimator (choose one)', doc: 'A run has exactly one: choosing another switches this one off.', methods: METHODS.filter((m) => m.estimator) },
    ...STAGES.map((s) => ({ ...s, methods: others.filter((m) => m.stage === s.stage) })),
  ];
  // A stage this panel does not know yet still shows, under its own name.
  for (const m of others) {
    if (known.has(m.stage)) continue;
    known.add(m.stage);
    out.push({ stage: m.stage, title: m.stage, doc: '', methods: others.filter((x) => x.stage === m.stage) });
  }
  return out.filter((s) => s.methods.length > 0);
}

const GROUPED = byStage();

function MethodCard({ method }: { method: MethodDef }) {
  const config = useAppStore((s) => s.config);
  const locked = useAppStore((s) => s.imported !== null);
  const active = config.methods.includes(method.id);
  const blocker = useMemo(() => toggleBlocker(config, method.id), [config, method.id]);
  const toggleId = `method-${method.id}`;

  const toggle = () => changeMethods(toggledMethods(config.methods, method.id));
  const replaces = method.estimator && !active ? config.methods.find((m) => ESTIMATOR_IDS.includes(m)) : undefined;

  return (
    <article className={`method ${active ? 'active' : ''}`}>
      <header className="method-head">
        <label className="toggle" htmlFor={toggleId} title={blocker?.text}>
          {method.estimator ? (
            <input id={toggleId} type="radio" name="estimator-card" checked={active} disabled={locked || blocker?.kind === 'refused' || active} onChange={toggle} />
          ) : (
            <input id={toggleId} type="checkbox" checked={active} disabled={locked || blocker !== null} onChange={toggle} />
          )}
          <span className="method-name">{method.name}</span>
        </label>
        <span className="stage">{method.stage}</span>
        <a href={`https://arxiv.org/abs/${method.paper}`} target="_blank" rel="noreferrer">
          arXiv:{method.paper}
        </a>
      </header>
      <p className="idea">{method.idea}</p>
      <WhyLine method={method.id} />
      {blocker?.kind === 'estimator' && <p className="hint">{blocker.text}</p>}
      {blocker?.kind === 'refused' && <p className="hint conflict">{active ? blocker.text : `Not available: ${blocker.text}`}</p>}
      {!blocker && replaces && <p className="hint">Advantage estimator: switching it on replaces {methodDef(replaces).name}.</p>}
      {method.inferred && <p className="hint">Inferred reading: {method.inferred}</p>}
      <div className="knobs">
        {Object.entries(method.params).map(([p, spec]) => (
          <ParamControl
            key={p}
            fieldKey={`${method.id}.${p}`}
            owner={method.name}
            spec={spec as ParamSpec}
            value={getField(config, `${method.id}.${p}`)}
            disabled={locked}
          />
        ))}
      </div>
    </article>
  );
}

export function MethodsPanel() {
  const active = useAppStore((s) => s.config.methods);
  const names = active.map((id) => methodDef(id).name).join(', ');
  return (
    <section className="panel" aria-labelledby="methods-title">
      <h2 id="methods-title">Methods</h2>
      <MethodNoticeLine />
      <details className="one-click all-methods">
        <summary>
          All methods ({METHODS.length}); on: {names}
        </summary>
        <p className="blurb">
          {METHODS.length} in the registry: the advantage estimator (one per run), then the others by the stage of an iteration they act on.
          Switch any combination on; a conflicting one is refused with the reason.
        </p>
        {GROUPED.map((g) => (
          <section key={g.stage} className="stage-group" aria-labelledby={`stage-${g.stage}`} data-stage={g.stage}>
            <h3 id={`stage-${g.stage}`} className="stage-title" title={g.doc}>
              {g.title}
            </h3>
            {g.methods.map((m) => (
              <MethodCard key={m.id} method={m} />
            ))}
          </section>
        ))}
      </details>
    </section>
  );
}
