/**
 * The batch inspector: the Group view (the last batch's rewards as a prompts x rollouts matrix,
 * collapsed, tied and dropped groups and extra or corrected rollouts marked: groupModel.ts) and the Trajectory view (one rollout
 * turn by turn, with each policy token's advantage, IS ratio and clipping). Both read the batch dump
 * (api.packBatch, unpacked in slices), loaded when the run is paused; a link's focus=group:G / traj:T opens them.
 */
import { memo, useEffect, useMemo, useRef, useState, type KeyboardEvent } from 'react';
import type { BatchDump } from '../../workers/formats/batchDump';
import { currentBatch, useAppStore } from '../store';
import { useChunkedRows } from './chunkedRows';
import './Inspector.css';
import './groupView.css';
import { countsText, groupCounts, groupNote, groupRows, originMark, type GroupState } from './groupModel';

/** Batches up to this many trajectories load by themselves when the run pauses. */
const AUTO_LOAD_TRAJS = 4096;
/** Rows of the reward matrix drawn at once. */
const MAX_ROWS = 64;

type Traj = BatchDump['trajs'][number];

function fmt(v: number, digits = 3): string {
  if (!Number.isFinite(v)) return String(v);
  return v !== 0 && Math.abs(v) < 10 ** -digits ? v.toExponential(1) : v.toFixed(digits);
}

function rewardText(r: number): string {
  return Number.isInteger(r) ? String(r) : r.toFixed(2);
}

function rewardColor(r: number): string {
  const t = Math.max(0, Math.min(1, r));
  return `hsl(${Math.round(t * 125)}, 70%, ${90 - t * 8}%)`;
}

/** Loads the batch when the run is paused on a new iteration (small batches only). */
function useBatchLoader(): void {
  const loadBatch = useAppStore((s) => s.loadBatch);
  const want = useAppStore(
    (s) =>
      !s.imported &&
      s.phase === 'idle' &&
      s.configured &&
      s.series.length > 0 &&
      currentBatch(s) === null &&
      s.config.batch * s.config.group <= AUTO_LOAD_TRAJS,
  );
  const iter = useAppStore((s) => s.series[s.series.length - 1]?.iter ?? 0);
  const epoch = useAppStore((s) => s.metricsEpoch);
  useEffect(() => {
    if (want) void loadBatch();
  }, [want, iter, epoch, loadBatch]);
}

/** Why there is no batch to show, or null when there is one. */
function useEmptyText(batch: BatchDump | null): string | null {
  const phase = useAppStore((s) => s.phase);
  const imported = useAppStore((s) => s.imported);
  const iters = useAppStore((s) => s.series.length);
  if (batch) return null;
  if (imported) return 'This run file holds no batch.';
  if (phase === 'running' || phase === 'pausing') return 'Pause to inspect the batch.';
  if (iters === 0) return 'Run or step at least one iteration to see its batch.';
  return null;
}

function GroupView({ batch }: { batch: BatchDump | null }) {
  const focus = useAppStore((s) => s.focus);
  const loadBatch = useAppStore((s) => s.loadBatch);
  const config = useAppStore((s) => s.config);
  const ref = useRef<HTMLElement>(null);
  const empty = useEmptyText(batch);
  const focusGroup = focus?.kind === 'group' ? focus.index : null;
  const presenter = useAppStore((s) => s.presenter);

  // Presenter mode lays the Group view out on the first screen: scrolling to it there would only
  // move the lesson's key chart off the screen a class is looking at.
  useEffect(() => {
    if (focusGroup !== null && batch && !presenter) ref.current?.scrollIntoView({ block: 'nearest', behavior: 'smooth' });
  }, [focusGroup, batch, presenter]);

  const rows = useMemo(() => groupRows(batch), [batch]);
  const groups = useMemo(() => rows.map((r) => r.trajs), [rows]);
  const counts = useMemo(() => groupCounts(rows), [rows]);
  const focusTrajGroup = focus?.kind === 'traj' ? batch?.trajs[focus.index]?.group : undefined;
  // The rows grow a chunk per task (a new batch starts again): 64 x 64 cells in one commit was a long task.
  const drawn = useChunkedRows(Math.min(groups.length, MAX_ROWS), groups[0]?.length ?? 0, batch);
  const shown = groups.slice(0, drawn);
  const extra = focusGroup !== null && focusGroup >= drawn && groups[focusGroup] ? [focusGroup] : [];
  const order = [...shown.keys(), ...extra];
  // The tab stop starts on the open trajectory's cell (a link's focus=traj:T), else the first cell.
  const openCell = focusTrajGroup !== undefined ? { g: focusTrajGroup, c: (groups[focusTrajGroup] ?? []).findIndex((t) => t.id === focus!.index) } : null;
  const cursor = useMatrixCursor(order, groups, openCell);

  return (
    <section className="panel inspector" ref={ref} aria-labelledby="group-title" data-testid="group-view">
      <h2 id="group-title">Group view{batch ? `: rewards of iteration ${batch.iter}` : ''}</h2>
      {empty && <p className="hint">{empty}</p>}
      {!batch && !empty && (
        <p className="hint">
          The batch holds {config.batch * config.group} trajectories.{' '}
          <button type="button" onClick={() => void loadBatch()}>
            Load the batch
          </button>
        </p>
      )}
      {batch && (
        <>
          <p className="blurb">
            <span className="group-how">
              Rows are prompts (groups), columns their rollouts; each cell is a rollout’s reward. A group whose rewards tie and whose
              advantages are all 0 (marked) gives no gradient: Advantage Collapse.{' '}
            </span>
            <span data-testid="group-counts">{countsText(counts)}</span>
            <span className="group-how">
              {' '}
              Click a cell to open the trajectory; in the matrix, the arrow keys move between cells and Enter opens one.
            </span>
          </p>
          <div className="matrix-wrap">
            <table className="matrix" data-testid="reward-matrix" ref={cursor.table} onKeyDown={cursor.onKeyDown} onFocus={cursor.onFocus}>
              <thead>
                <tr>
                  <th scope="col">group</th>
                  {Array.from({ length: Math.max(0, ...groups.map((g) => g.length)) }, (_, r) => (
                    <th key={r} scope="col">
                      {r}
                    </th>
                  ))}
                  <th scope="col" />
                </tr>
              </thead>
              <tbody>
                {order.map((g) => (
                  <MatrixRow
                    key={g}
                    group={g}
                    trajs={groups[g] ?? []}
                    state={rows[g]?.state ?? 'signal'}
                    active={focusGroup === g || focusTrajGroup === g}
                    selected={focusTrajGroup === g ? focus!.index : null}
                    tabColumn={cursor.at.g === g ? cursor.at.c : null}
                  />
                ))}
              </tbody>
            </table>
          </div>
          {groups.length > MAX_ROWS && <p className="hint">Showing the first {MAX_ROWS} of {groups.length} groups.</p>}
          {focusGroup !== null && groups[focusGroup] && <GroupDetail group={focusGroup} trajs={groups[focusGroup]!} />}
        </>
      )}
    </section>
  );
}

/** A cell of the matrix: its group and column, -1 the group's own button. */
interface Cell {
  g: number;
  c: number;
}

/**
 * The matrix as one tab stop (a roving tabindex): of its up to 64 x 65 buttons only the cursor's
 * cell is in the tab order, the arrow keys, Home and End move the cursor and the focus, and a cell
 * focused otherwise (a click) becomes the cursor. `order` is the groups' rows as drawn; `start` the
 * cell the cursor is on until it moves (else the first cell).
 */
function useMatrixCursor(order: readonly number[], groups: readonly Traj[][], start: Cell | null) {
  const table = useRef<HTMLTableElement>(null);
  const [cursor, setCursor] = useState<Cell | null>(null);
  const width = (g: number) => groups[g]?.length ?? 0;
  const inMatrix = (c: Cell | null): c is Cell => c !== null && order.includes(c.g) && c.c >= -1 && c.c < width(c.g);
  // A cursor left outside the rows drawn (a new batch, fewer groups) starts again.
  const at: Cell = inMatrix(cursor) ? cursor : inMatrix(start) ? start : { g: order[0] ?? 0, c: 0 };
  const cellOf = (el: EventTarget): Cell | null => {
    const d = el instanceof HTMLElement ? el.dataset : undefined;
    return d?.g !== undefined && d.c !== undefined ? { g: Number(d.g), c: Number(d.c) } : null;
  };
  const onKeyDown = (e: KeyboardEvent<HTMLTableElement>) => {
    const from = cellOf(e.target);
    if (!from) return;
    const row = order.indexOf(from.g);
    const moves: Record<string, () => Cell> = {
      ArrowLeft: () => ({ g: from.g, c: Math.max(-1, from.c - 1) }),
      ArrowRight: () => ({ g: from.g, c: Math.min(width(from.g) - 1, from.c + 1) }),
      ArrowUp: () => ({ g: order[Math.max(0, row - 1)]!, c: from.c }),
      ArrowDown: () => ({ g: order[Math.min(order.length - 1, row + 1)]!, c: from.c }),
      Home: () => ({ g: from.g, c: -1 }),
      End: () => ({ g: from.g, c: width(from.g) - 1 }),
    };
    const move = moves[e.key];
    if (!move || row < 0) return;
    e.preventDefault();
    const to = move();
    to.c = Math.min(to.c, width(to.g) - 1);
    setCursor(to);
    table.current?.querySelector<HTMLElement>(`[data-g="${to.g}"][data-c="${to.c}"]`)?.focus();
  };
  const onFocus = (e: { target: EventTarget }) => {
    const cell = cellOf(e.target);
    if (cell && (cell.g !== at.g || cell.c !== at.c)) setCursor(cell);
  };
  return { table, at, onKeyDown, onFocus };
}

/**
 * One prompt's rollouts. Memoized: a batch of 4,096 trajectories draws 4,096 cells, and a click
 * changes the focus of one or two rows; without it every click re-rendered all of them.
 * `tabColumn` is the column of the matrix's one tab stop when it is in this row (-1 the group's
 * button), else null.
 */
const MatrixRow = memo(function MatrixRow({
  group,
  trajs,
  state,
  active,
  selected,
  tabColumn,
}: {
  group: number;
  trajs: Traj[];
  state: GroupState;
  active: boolean;
  selected: number | null;
  tabColumn: number | null;
}) {
  const setFocus = useAppStore((s) => s.setFocus);
  return (
    <tr className={`${state === 'collapsed' ? 'all-equal' : ''} ${state === 'dropped' ? 'dropped' : ''} ${active ? 'focused' : ''}`} data-group={group} data-state={state}>
      <th scope="row">
        <button
          type="button"
          className="link-button"
          tabIndex={tabColumn === -1 ? 0 : -1}
          data-g={group}
          data-c={-1}
          onClick={() => setFocus({ kind: 'group', index: group })}
        >
          {group}
        </button>
      </th>
      {trajs.map((t, c) => {
        const mark = originMark(t);
        return (
          <td key={t.id}>
            <button
              type="button"
              className={`cell ${selected === t.id ? 'selected' : ''} ${mark ? 'marked' : ''} ${t.kept === false ? 'untrained' : ''}`}
              tabIndex={tabColumn === c ? 0 : -1}
              data-g={group}
              data-c={c}
              data-origin={t.origin ?? 'policy'}
              style={{ background: rewardColor(t.reward) }}
              title={mark || undefined}
              aria-label={`trajectory ${t.id}, reward ${rewardText(t.reward)}${mark ? `, ${mark}` : ''}${t.kept === false ? ', not trained' : ''}`}
              onClick={() => setFocus({ kind: 'traj', index: t.id })}
            >
              {rewardText(t.reward)}
              {mark && <sup aria-hidden="true">{mark === 'extra' ? '+' : mark === 'hinted' ? 'h' : '*'}</sup>}
            </button>
          </td>
        );
      })}
      <td className="row-note">{groupNote(state)}</td>
    </tr>
  );
});

function GroupDetail({ group, trajs }: { group: number; trajs: Traj[] }) {
  const setFocus = useAppStore((s) => s.setFocus);
  return (
    <div className="group-detail" data-testid="group-detail" data-group={group}>
      <h3>
        Group {group}
        <button type="button" className="link-button" onClick={() => setFocus(null)}>
          close
        </button>
      </h3>
      <table className="key-table">
        <thead>
          <tr>
            <th scope="col">trajectory</th>
            <th scope="col">reward</th>
            <th scope="col">advantage</th>
            <th scope="col">origin</th>
            <th scope="col">turns</th>
          </tr>
        </thead>
        <tbody>
          {trajs.map((t) => (
            <tr key={t.id}>
              <th scope="row">
                <button type="button" className="link-button" onClick={() => setFocus({ kind: 'traj', index: t.id })}>
                  {t.id}
                </button>
              </th>
              <td className="num">{rewardText(t.reward)}</td>
              <td className="num">{t.tokens[0] ? fmt(t.tokens[0].adv) : '–'}</td>
              <td>{t.kept === false ? 'not trained' : originMark(t) || 'policy'}</td>
              <td className="traj-text">{t.text}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/**
 * The trajectory's advantage as its header says it: one number when every token has it, else per
 * turn when each turn has one (IGPO, GiGPO), else the range over its tokens (a token baseline).
 */
export function advantageText(tokens: ReadonlyArray<{ turn: number; adv: number }>): string {
  if (tokens.length === 0) return 'advantage –';
  const same = (xs: readonly number[]) => xs.every((x) => Math.abs(x - xs[0]!) <= 1e-9);
  const all = tokens.map((k) => k.adv);
  if (same(all)) return `advantage ${fmt(all[0]!)}`;
  const turns = [...new Set(tokens.map((k) => k.turn))].sort((a, b) => a - b);
  const perTurn = turns.map((turn) => tokens.filter((k) => k.turn === turn).map((k) => k.adv));
  if (perTurn.every(same)) return `advantage per turn: ${perTurn.map((xs) => fmt(xs[0]!)).join(', ')}`;
  return `advantage per token: ${fmt(Math.min(...all))} to ${fmt(Math.max(...all))}`;
}

function clipText(c: number): string {
  return c < 0 ? 'low' : c > 0 ? 'high' : '';
}

function TrajectoryView({ batch, index }: { batch: BatchDump | null; index: number }) {
  const setFocus = useAppStore((s) => s.setFocus);
  const ref = useRef<HTMLElement>(null);
  const empty = useEmptyText(batch);
  const t = batch?.trajs[index];

  useEffect(() => {
    if (t) ref.current?.scrollIntoView({ block: 'nearest', behavior: 'smooth' });
  }, [t]);

  const parts = t ? t.text.split(' | ') : [];
  const turns = t ? [...new Set(t.tokens.map((k) => k.turn))].sort((a, b) => a - b) : [];
  const groupSize = batch ? batch.trajs.filter((x) => x.group === t?.group).length : 0;
  const rollout = t && batch ? batch.trajs.filter((x) => x.group === t.group).findIndex((x) => x.id === t.id) : -1;

  return (
    <section className="panel inspector" ref={ref} aria-labelledby="traj-title" data-testid="trajectory-view" data-traj={index}>
      <header className="panel-head">
        <h2 id="traj-title">Trajectory {index}</h2>
        {t && (
          <button type="button" onClick={() => setFocus({ kind: 'group', index: t.group })}>
            Group {t.group}
          </button>
        )}
        <button type="button" onClick={() => setFocus(null)} aria-label="Close the trajectory view">
          Close
        </button>
      </header>
      {empty && <p className="hint">{empty}</p>}
      {batch && !t && <p className="hint">The batch has no trajectory {index}.</p>}
      {t && batch && (
        <>
          <p className="traj-summary" data-testid="traj-summary">
            Iteration {batch.iter} · group {t.group}, rollout {rollout} of {groupSize} · reward <strong>{rewardText(t.reward)}</strong> ·{' '}
            <strong data-testid="traj-advantage">{advantageText(t.tokens)}</strong>
          </p>
          <ol className="turns">
            <li className="turn prompt">
              <span className="turn-label">prompt</span> <code>{parts[0] ?? ''}</code>
            </li>
            {turns.map((turn, i) => {
              const toks = t.tokens.filter((k) => k.turn === turn);
              return (
                <li key={turn} className="turn">
                  <span className="turn-label">turn {turn + 1}</span> <code>{parts[i + 1] ?? ''}</code>
                  {t.turn_roles?.[i] !== undefined && <span className="turn-note"> role {t.turn_roles[i]}</span>}
                  {t.turn_rewards?.[i] !== undefined && <span className="turn-note"> turn reward {fmt(t.turn_rewards[i]!)}</span>}
                  <table className="tokens">
                    <thead>
                      <tr>
                        <th scope="col">token</th>
                        <th scope="col" title="Advantage of this token">
                          adv
                        </th>
                        <th scope="col" title="Importance ratio pi/pi_old at the last optimizer step">
                          ratio
                        </th>
                        <th scope="col" title="Clipped on the low or high side">
                          clip
                        </th>
                        <th scope="col">logp old → new</th>
                        <th scope="col">entropy</th>
                        <th scope="col" title="This token's contribution to the loss">
                          loss
                        </th>
                      </tr>
                    </thead>
                    <tbody>
                      {toks.map((k, j) => (
                        <tr key={j}>
                          <td>
                            <code>{k.text}</code>
                          </td>
                          <td className={`num ${k.adv > 0 ? 'pos' : k.adv < 0 ? 'neg' : ''}`}>{fmt(k.adv)}</td>
                          <td className={`num ${k.clip !== 0 ? 'clipped' : ''}`}>{fmt(k.ratio, 4)}</td>
                          <td>{clipText(k.clip)}</td>
                          <td className="num">
                            {fmt(k.logp_old)} → {fmt(k.logp)}
                          </td>
                          <td className="num">{fmt(k.entropy)}</td>
                          <td className="num">{fmt(k.loss, 5)}</td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </li>
              );
            })}
            {parts.slice(turns.length + 1).map((p, i) => (
              <li key={`end-${i}`} className="turn">
                <span className="turn-label">end</span> <code>{p}</code>
              </li>
            ))}
          </ol>
        </>
      )}
    </section>
  );
}

export function Inspector() {
  const hidden = useAppStore((s) => s.hidden);
  const focus = useAppStore((s) => s.focus);
  const batch = useAppStore(currentBatch);
  useBatchLoader();
  const trajIndex = focus && focus.kind === 'traj' && !hidden.includes('trajectory') ? focus.index : null;
  return (
    <>
      {!hidden.includes('group') && <GroupView batch={batch} />}
      {trajIndex !== null && <TrajectoryView batch={batch} index={trajIndex} />}
    </>
  );
}
