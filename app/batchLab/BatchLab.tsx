/**
 * The Batch lab panel: freeze the last iteration's batch, choose 1-4 method sets, and
 * re-score the batch under all of them in the worker (api.rescore). One column per set, side by
 * side: a chosen group's trajectories as rows of tokens coloured by advantage, aggregation weight
 * or gradient weight (or their difference from the first column), per-turn rewards, a summary and
 * the set's notes. Everything shown is also offered as a table.
 */
import { useId, useMemo, useState, type CSSProperties } from 'react';
import { useShallow } from 'zustand/react/shallow';
import type { LabResult } from '../../workers/core/batchLab';
import { methodRegistry } from '../../workers/meta';
import { toggledMethods } from '../methodToggle';
import { useAppStore } from '../store';
import {
  columnValues,
  defaultGroup,
  formatValue,
  labGroups,
  MAX_SETS,
  percent,
  presetSets,
  QUANTITIES,
  sameSet,
  setLabel,
  setProblem,
  signed,
  summarize,
  tokenStyle,
  turnsOf,
  UP_SIGN,
  type LabGroup,
  type Quantity,
} from './labModel';
import { frozenStale, useLabSets, useLabStore, type LabRun, type LiveRun } from './labStore';
import { useExplainStore } from '../explain/explainStore';
import { ExplainNum } from '../explain/ExplainDialog';

/** Row i of trajectory n as an index into the set's token list (its policy rows, in order). */
function tokenIndex(r: LabResult, n: number, i: number): number {
  let k = 0;
  for (let j = n * r.Tp; j < i; j++) if (r.mask[j]) k++;
  return k;
}
import './batchLab.css';

const METHODS = Object.values(methodRegistry);

function useLive(): LiveRun {
  return useAppStore(
    useShallow((s) => ({ imported: s.imported !== null, phase: s.phase, iter: s.series[s.series.length - 1]?.iter ?? 0, epoch: s.metricsEpoch })),
  );
}

/** Why Freeze is unavailable, or null. */
function freezeBlocker(live: LiveRun, configured: boolean): string | null {
  if (live.imported) return 'An imported run has no trainer batch to re-score.';
  if (live.iter === 0) return 'Run or step at least one iteration first: the lab re-scores the last iteration’s batch.';
  if (!configured || !['idle', 'running'].includes(live.phase)) return 'Wait until the run has settled.';
  return null;
}

function FreezeBar() {
  const live = useLive();
  const configured = useAppStore((s) => s.configured);
  const { frozen, busy, freeze } = useLabStore(useShallow((s) => ({ frozen: s.frozen, busy: s.busy, freeze: s.freeze })));
  const blocker = busy ? 'Re-scoring…' : freezeBlocker(live, configured);
  const stale = frozen ? frozenStale(frozen, live) : null;
  const reasonId = useId();
  return (
    <div className="lab-freeze">
      <button type="button" className="primary" disabled={blocker !== null} aria-describedby={blocker ? reasonId : undefined} onClick={() => void freeze()}>
        Freeze the current batch
      </button>
      <span className="hint" id={reasonId} data-testid="lab-frozen">
        {blocker ??
          (frozen
            ? (stale ?? `Frozen: the batch of iteration ${frozen.iter}. Training on replaces it.`)
            : live.phase === 'running'
              ? 'Freezing pauses the run, so that its batch stays.'
              : `The batch of iteration ${live.iter} is ready to freeze.`)}
      </span>
    </div>
  );
}

function SetToggles({ index, methods }: { index: number; methods: string[] }) {
  const replaceSet = useLabStore((s) => s.replaceSet);
  return (
    <details className="lab-set-methods">
      <summary>Methods of set {index + 1}</summary>
      <fieldset className="lab-toggles">
        <legend className="visually-hidden">Set {index + 1} methods</legend>
        {METHODS.map((m) => (
          <label key={m.id} className="toggle" title={m.idea}>
            <input type="checkbox" checked={methods.includes(m.id)} onChange={() => replaceSet(index, toggledMethods(methods, m.id))} />
            <span>{m.name}</span>
          </label>
        ))}
      </fieldset>
      <p className="hint">An advantage estimator switched on replaces the set’s current one.</p>
    </details>
  );
}

function SetsEditor() {
  const sets = useLabSets();
  const config = useAppStore((s) => s.config);
  const edited = useLabStore((s) => s.sets !== null);
  const { addSet, removeSet, resetSets } = useLabStore.getState();
  const presets = useMemo(() => presetSets(config.methods), [config.methods]);
  const [choice, setChoice] = useState('igpo');
  const preset = presets.find((p) => p.key === choice) ?? presets[0]!;
  const addBlocker =
    sets.length >= MAX_SETS ? `At most ${MAX_SETS} sets: remove one first.` : sets.some((s) => sameSet(s, preset.methods)) ? `${preset.label} is already a set.` : null;
  const runSet = config.methods;
  const addReasonId = useId();
  const addId = useId();
  const add = () => {
    addSet(preset.methods);
    // The menu moves on to the first preset that is not a set yet.
    const taken = [...sets, preset.methods];
    const next = presets.find((p) => !taken.some((x) => sameSet(x, p.methods)));
    if (next) setChoice(next.key);
  };
  return (
    <section className="lab-sets" aria-labelledby="lab-sets-title">
      <h3 id="lab-sets-title">Method sets ({sets.length} of at most {MAX_SETS})</h3>
      <ol className="lab-set-list">
        {sets.map((methods, i) => {
          const problem = setProblem(config, methods);
          return (
            <li key={i} className="lab-set" data-testid={`lab-set-${i + 1}`}>
              <div className="lab-set-head">
                <strong>Set {i + 1}:</strong> <span>{setLabel(methods)}</span>
                {sameSet(methods, runSet) && <span className="lab-badge">the run’s set</span>}
                <button type="button" className="mini" disabled={sets.length <= 1} onClick={() => removeSet(i)} aria-label={`Remove set ${i + 1} (${setLabel(methods)})`}>
                  Remove
                </button>
              </div>
              {problem && (
                <p className="field-error" role="status">
                  Set {i + 1} ({setLabel(methods)}) is refused: {problem}
                </p>
              )}
              <SetToggles index={i} methods={methods} />
            </li>
          );
        })}
      </ol>
      <div className="lab-add">
        <label htmlFor={addId}>Add a set</label>
        <select id={addId} value={choice} onChange={(e) => setChoice(e.target.value)}>
            {presets.map((p) => (
              <option key={p.key} value={p.key}>
                {p.label}
              </option>
            ))}
        </select>
        <button type="button" disabled={addBlocker !== null} aria-describedby={addBlocker ? addReasonId : undefined} onClick={add}>
          Add the set
        </button>
        {edited && (
          <button type="button" className="link-button" onClick={resetSets}>
            Back to the default sets
          </button>
        )}
        {addBlocker && (
          <span className="hint" id={addReasonId}>
            {addBlocker}
          </span>
        )}
      </div>
      <p className="hint">Each set runs with the run’s other settings and its method parameters. Add 1–3 sets to compare against the run’s own.</p>
    </section>
  );
}

function RescoreBar() {
  const live = useLive();
  const sets = useLabSets();
  const { frozen, busy, run, error, rescore } = useLabStore(useShallow((s) => ({ frozen: s.frozen, busy: s.busy, run: s.run, error: s.error, rescore: s.rescore })));
  const stale = frozenStale(frozen, live);
  const blocker = busy ? 'Re-scoring in the worker…' : stale;
  const changed = run && (run.sets.length !== sets.length || run.sets.some((s, i) => !sameSet(s.methods, sets[i]!)));
  const reasonId = useId();
  return (
    <div className="lab-rescore">
      <button type="button" className="primary" disabled={blocker !== null} aria-describedby={blocker ? reasonId : undefined} onClick={() => void rescore()}>
        Re-score
      </button>
      <span className="hint" id={reasonId} aria-live="polite">
        {blocker ?? (changed ? 'The sets changed since the last re-score: press Re-score.' : run ? `Re-scored iteration ${run.result.iter} under ${run.sets.length} set${run.sets.length === 1 ? '' : 's'}.` : '')}
      </span>
      {error && (
        <p role="alert" className="field-error lab-error">
          {error}
        </p>
      )}
    </div>
  );
}

interface ColumnView {
  index: number;
  methods: string[];
  problem: string | null;
  values: Float32Array | null;
  col: LabResult['columns'][number] | null;
}

function groupLabel(g: LabGroup): string {
  return `Group ${g.index}: rewards ${g.rewards.map((r) => formatValue(r, 2)).join(', ')}${g.allEqual ? ' (all equal)' : ''}`;
}

function Legend({ quantity, scale, diff }: { quantity: Quantity; scale: number; diff: boolean }) {
  const q = QUANTITIES.find((x) => x.id === quantity)!;
  const up = UP_SIGN[quantity];
  const oneSided = quantity === 'weight' && !diff;
  const words = quantity !== 'weight';
  const left = oneSided ? '0' : `${signed(-up * scale)}${words ? ' lowered' : ''}`;
  const right = `${signed(up * scale)}${words ? ' raised' : ''}`;
  return (
    <div className="lab-legend">
      <p className="lab-legend-scale">
        <span>{left}</span>
        <span className={`lab-legend-bar ${oneSided ? 'one-sided' : ''}`} aria-hidden="true" />
        <span>{right}</span>
      </p>
      <p className="lab-legend-doc">
        {q.doc}
        {diff ? ' Columns after the first show their difference from set 1.' : ''}
      </p>
    </div>
  );
}

function TrajRow({ r, n, col, values, quantity, scale }: { r: LabResult; n: number; col: LabResult['columns'][number]; values: Float32Array; quantity: Quantity; scale: number }) {
  const q = QUANTITIES.find((x) => x.id === quantity)!;
  const source = { kind: 'lab' as const, methods: col.methods, iter: r.iter };
  const open = useExplainStore((s) => s.open);
  return (
    <div className="lab-traj" role="group" aria-label={`Trajectory ${n}, reward ${formatValue(r.reward[n]!, 2)}`}>
      <span className="lab-traj-label">
        #{n} · R{' '}
        <ExplainNum r={{ kind: 'reward', traj: n }} source={source} label={`reward of trajectory ${n} under ${col.methods.join(' + ')}: explain`}>
          {formatValue(r.reward[n]!, 2)}
        </ExplainNum>
      </span>
      {turnsOf(r, n).map(({ turn, rows }) => {
        const tr = col.turnRewards[n * r.maxTurns + turn] ?? 0;
        return (
          <span key={turn} className="lab-turn">
            {rows.map((i) => {
              const v = values[i]!;
              const text = r.vocab[r.tokens[i]!] ?? `#${r.tokens[i]}`;
              return (
                <button
                  type="button"
                  key={i}
                  className={`lab-tok ${v === 0 ? 'zero' : ''}`}
                  style={tokenStyle(v, scale, UP_SIGN[quantity])}
                  title={`${text} (turn ${turn + 1}): ${q.label} ${signed(v, 4)}`}
                  onClick={() => open({ source, ref: { kind: 'token', q: quantity, traj: n, tok: tokenIndex(r, n, i) } })}
                >
                  {text}
                  <span className="visually-hidden"> {signed(v, 4)};</span>
                </button>
              );
            })}
            {tr !== 0 && (
              <span className="lab-turn-reward" title={`Turn ${turn + 1} reward under this set`}>
                r{turn + 1}{' '}
                <ExplainNum r={{ kind: 'turn_reward', traj: n, turn }} source={source} label={`turn ${turn + 1} reward of trajectory ${n} under ${col.methods.join(' + ')}: explain`}>
                  {signed(tr, 2)}
                </ExplainNum>
              </span>
            )}
          </span>
        );
      })}
    </div>
  );
}

function Columns({ run, group, views, quantity, scale, diff }: { run: LabRun; group: LabGroup; views: ColumnView[]; quantity: Quantity; scale: number; diff: boolean }) {
  const r = run.result;
  const rows = 2 + group.members.length + 1;
  return (
    <div className="lab-columns" style={{ '--cols': views.length, '--rows': rows } as CSSProperties} data-testid="lab-columns">
      {views.map((v) => {
        const name = `Set ${v.index + 1}: ${setLabel(v.methods)}`;
        if (!v.col || !v.values) {
          return (
            <section key={v.index} className="lab-column refused" aria-label={name}>
              <h4>{name}</h4>
              <p className="field-error lab-refused">Not re-scored: {v.problem}</p>
            </section>
          );
        }
        const g = summarize(r, v.col, group.members);
        const all = summarize(r, v.col);
        return (
          <section key={v.index} className="lab-column" aria-label={name} data-testid={`lab-column-${v.index + 1}`}>
            <h4>
              {name}
              {diff && v.index > 0 && <span className="lab-badge">− set 1</span>}
            </h4>
            <p className="lab-summary" data-testid="lab-summary">
              Zero gradient: <strong>{percent(g.zeroGrad, g.tokens)}</strong> of this group’s tokens ({percent(all.zeroGrad, all.tokens)} of the batch’s). Σ|grad|{' '}
              <strong>{formatValue(g.sumAbsGrad, 4)}</strong> (batch {formatValue(all.sumAbsGrad, 4)}).
            </p>
            {group.members.map((n) => (
              <TrajRow key={n} r={r} n={n} col={v.col!} values={v.values!} quantity={quantity} scale={scale} />
            ))}
            <ul className="lab-notes" aria-label={`Notes of set ${v.index + 1}`}>
              {v.col.notes.length ? v.col.notes.map((note, k) => <li key={k}>{note}</li>) : <li className="none">No notes.</li>}
            </ul>
          </section>
        );
      })}
    </div>
  );
}

function DataTable({ id, run, group, views, quantity, diff }: { id: string; run: LabRun; group: LabGroup; views: ColumnView[]; quantity: Quantity; diff: boolean }) {
  const r = run.result;
  const scored = views.filter((v) => v.values);
  const q = QUANTITIES.find((x) => x.id === quantity)!;
  return (
    <div className="data-table-wrap lab-table-wrap" id={id}>
      <table className="data-table" data-testid="lab-table">
        <caption>
          Group {group.index}, {q.label} per token{diff ? ' (other sets: difference from set 1)' : ''}; turn rewards per turn where nonzero
        </caption>
        <thead>
          <tr>
            <th scope="col">trajectory</th>
            <th scope="col">reward</th>
            <th scope="col">turn</th>
            <th scope="col">token</th>
            {scored.map((v) => (
              <th key={v.index} scope="col">
                Set {v.index + 1}: {setLabel(v.methods)}
              </th>
            ))}
            {scored.map((v) => (
              <th key={`tr-${v.index}`} scope="col">
                turn reward, set {v.index + 1}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {group.members.flatMap((n) =>
            turnsOf(r, n).flatMap(({ turn, rows }) =>
              rows.map((i, k) => (
                <tr key={i}>
                  <th scope="row">{n}</th>
                  <td>{formatValue(r.reward[n]!, 2)}</td>
                  <td>{turn + 1}</td>
                  <td className="lab-table-token">{r.vocab[r.tokens[i]!] ?? r.tokens[i]}</td>
                  {scored.map((v) => (
                    <td key={v.index}>
                      <ExplainNum
                        r={{ kind: 'token', q: quantity, traj: n, tok: tokenIndex(r, n, i) }}
                        source={{ kind: 'lab', methods: v.methods, iter: r.iter }}
                        label={`${q.label} of trajectory ${n}, token ${tokenIndex(r, n, i)} under set ${v.index + 1}: explain`}
                      >
                        {formatValue(v.values![i]!, 6)}
                      </ExplainNum>
                    </td>
                  ))}
                  {scored.map((v) => (
                    <td key={`tr-${v.index}`}>{k === 0 ? formatValue(v.col!.turnRewards[n * r.maxTurns + turn] ?? 0, 6) : ''}</td>
                  ))}
                </tr>
              )),
            ),
          )}
        </tbody>
      </table>
    </div>
  );
}

function Results({ run }: { run: LabRun }) {
  const { quantity, diff, group: chosen, setQuantity, setDiff, setGroup } = useLabStore(
    useShallow((s) => ({ quantity: s.quantity, diff: s.diff, group: s.group, setQuantity: s.setQuantity, setDiff: s.setDiff, setGroup: s.setGroup })),
  );
  const [table, setTable] = useState(false);
  const tableId = useId();
  const r = run.result;
  const groups = useMemo(() => labGroups(r), [r]);
  const groupIndex = chosen ?? defaultGroup(groups);
  const group = groups.find((g) => g.index === groupIndex) ?? groups[0]!;
  const firstCol = run.sets[0]?.column != null ? r.columns[run.sets[0].column]! : null;
  const views: ColumnView[] = run.sets.map((s, index) => {
    const col = s.column !== null ? r.columns[s.column]! : null;
    const values = col ? columnValues(col, quantity, diff && index > 0 ? firstCol : null) : null;
    return { index, methods: s.methods, problem: s.problem, col, values };
  });
  let scale = 0;
  for (const v of views) {
    if (!v.values) continue;
    for (const n of group.members) for (let j = 0; j < r.Tp; j++) if (r.mask[n * r.Tp + j]) scale = Math.max(scale, Math.abs(v.values[n * r.Tp + j]!));
  }
  const collapsed = groups.filter((g) => g.allEqual).length;
  return (
    <section className="lab-results" aria-labelledby="lab-results-title" data-testid="lab-results">
      <h3 id="lab-results-title">Iteration {r.iter}, re-scored</h3>
      <div className="lab-view-controls">
        <div className="field">
          <label htmlFor={`${tableId}-group`}>Group</label>
          <select id={`${tableId}-group`} value={group.index} onChange={(e) => setGroup(Number(e.target.value))}>
            {groups.map((g) => (
              <option key={g.index} value={g.index}>
                {groupLabel(g)}
              </option>
            ))}
          </select>
        </div>
        <div className="field">
          <label htmlFor={`${tableId}-quantity`}>Colour tokens by</label>
          <select id={`${tableId}-quantity`} value={quantity} onChange={(e) => setQuantity(e.target.value as Quantity)}>
            {QUANTITIES.map((q) => (
              <option key={q.id} value={q.id}>
                {q.label}
              </option>
            ))}
          </select>
        </div>
        <label className="field field-bool">
          <input type="checkbox" checked={diff} disabled={views.length < 2 || !firstCol} onChange={(e) => setDiff(e.target.checked)} />
          Difference vs first column
        </label>
        <button type="button" className="mini" aria-expanded={table} aria-controls={tableId} onClick={() => setTable(!table)}>
          {table ? 'Hide' : 'Show'} the batch lab data as a table
        </button>
      </div>
      <p className="hint">
        {group.allEqual
          ? `Group ${group.index} is all equal (every reward ${formatValue(group.rewards[0]!, 2)}): GRPO gives its tokens advantage 0 and no gradient — Advantage Collapse.`
          : `Group ${group.index}'s rewards differ.`}{' '}
        {collapsed} of {groups.length} groups are all equal.
      </p>
      <Legend quantity={quantity} scale={scale} diff={diff} />
      <Columns run={run} group={group} views={views} quantity={quantity} scale={scale} diff={diff} />
      {table && <DataTable id={tableId} run={run} group={group} views={views} quantity={quantity} diff={diff} />}
    </section>
  );
}

export function BatchLab() {
  const open = useLabStore((s) => s.open);
  const setOpen = useLabStore((s) => s.setOpen);
  const run = useLabStore((s) => s.run);
  return (
    <section className="panel batch-lab" aria-labelledby="batch-lab-title" data-testid="batch-lab">
      <header className="panel-head">
        <h2 id="batch-lab-title">Batch lab</h2>
        <button type="button" aria-expanded={open} aria-controls="batch-lab-body" onClick={() => setOpen(!open)}>
          {open ? 'Close the batch lab' : 'Open the batch lab'}
        </button>
      </header>
      <p className="blurb">
        Freeze one batch and re-score it under several method sets at once, without training: per token, the advantage, the loss
        aggregation weight and the gradient weight d(loss)/d(logp), side by side.
      </p>
      {open && (
        <div id="batch-lab-body">
          <FreezeBar />
          <SetsEditor />
          <RescoreBar />
          {run && <Results run={run} />}
        </div>
      )}
    </section>
  );
}
