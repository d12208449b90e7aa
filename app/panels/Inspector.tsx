/**
 * The batch inspector: the Group view (the last batch's rewards as a prompts x rollouts matrix,
 * collapsed, tied and dropped groups and extra or corrected rollouts marked: groupModel.ts) and the Trajectory view (one rollout
 * turn by turn, with each policy token's advantage, IS ratio and clipping). Both read the batch dump
 * (api.packBatch, unpacked in slices), loaded when the run is paused; a link's focus=group:G / traj:T opens them.
 */
import { memo, useEffect, useMemo, useRef, useState, type FocusEvent, type KeyboardEvent, type ReactNode } from 'react';
import { countText } from '../../workers/meta';
import type { BatchDump } from '../../workers/formats/batchDump';
import { currentBatch, useAppStore } from '../store';
import { useChunkedRows } from './chunkedRows';
import { OVERSCAN, TOKEN_ROW_PX, turnListRows, useTurnWindow, WINDOW_FROM, WINDOW_ROWS, WINDOW_TURNS_FROM_ROWS } from './turnWindow';
import './Inspector.css';
import './groupView.css';
import { countsText, groupCounts, groupNote, groupRows, originMark, type GroupState } from './groupModel';
import { ExplainNum } from '../explain/ExplainDialog';
import { StepThroughButton } from '../explain/StepThrough';

/** Batches up to this many trajectories load by themselves when the run pauses. */
const AUTO_LOAD_TRAJS = 4096;
/** Rows of the reward matrix drawn at once. */
const MAX_ROWS = 64;

type Traj = BatchDump['trajs'][number];

const fmt = (v: number, digits = 3): string => fmtNum(v, digits);

function fmtNum(v: number, digits = 3): string {
  // NaN is a value not computed yet (a step-through stage) or not in the file: a dash, as the charts show it.
  if (Number.isNaN(v)) return '–';
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
      {batch && <StepThroughButton />}
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
        <ExplainNum r={{ kind: 'group', group }} className="group-stats-link" label={`statistics of group ${group}: explain`}>
          mean and std
        </ExplainNum>
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
              <td className="num">
                <ExplainNum r={{ kind: 'reward', traj: t.id }} label={`reward ${rewardText(t.reward)} of trajectory ${t.id}: explain`}>
                  {rewardText(t.reward)}
                </ExplainNum>
              </td>
              <td className="num">
                {t.tokens[0] ? (
                  <ExplainNum r={{ kind: 'token', q: 'adv', traj: t.id, tok: 0 }} label={`advantage ${fmt(t.tokens[0].adv)} of trajectory ${t.id}: explain`}>
                    {fmt(t.tokens[0].adv)}
                  </ExplainNum>
                ) : (
                  '–'
                )}
              </td>
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
/**
 * The advantages a trajectory's tokens carry, as its header says them: one value when all tokens
 * share it, one per turn when each turn's tokens do (turn-level estimators), else the range. Each
 * value is the token `at` it was read from, so the header can explain it.
 */
export function advantageParts(tokens: ReadonlyArray<{ turn: number; adv: number }>): { kind: 'none' } | { kind: 'one' | 'turns'; values: Array<{ at: number; adv: number }> } | { kind: 'range'; min: number; max: number } {
  if (tokens.length === 0) return { kind: 'none' };
  // Each value against the first of its set, as NaN is never the same as anything (itself neither).
  const near = (x: number, y: number) => Math.abs(x - y) <= 1e-9;
  const all = tokens.map((k) => k.adv);
  if (all.every((x) => near(x, all[0]!))) return { kind: 'one', values: [{ at: 0, adv: all[0]! }] };
  // One pass over the tokens (a filter per turn was quadratic: 4,096 turns of a token each).
  const byTurn = new Map<number, { at: number; adv: number; same: boolean }>();
  tokens.forEach((k, at) => {
    const seen = byTurn.get(k.turn);
    if (!seen) byTurn.set(k.turn, { at, adv: k.adv, same: near(k.adv, k.adv) });
    else if (seen.same && !near(k.adv, seen.adv)) seen.same = false;
  });
  const turns = [...byTurn.keys()].sort((a, b) => a - b).map((turn) => byTurn.get(turn)!);
  if (turns.every((x) => x.same)) return { kind: 'turns', values: turns.map(({ at, adv }) => ({ at, adv })) };
  return { kind: 'range', min: Math.min(...all), max: Math.max(...all) };
}

/**
 * Per-turn values the header lists; the rest it counts (each turn's rows show their own). A
 * trajectory of 4,096 turns listed them all: 4,096 buttons, a screen of numbers above its turns.
 */
const HEAD_TURNS = 16;

/** The words after the listed per-turn values: how many more there are, or nothing. */
const moreTurns = (n: number) => (n > HEAD_TURNS ? ` and ${countText(n - HEAD_TURNS)} more turns` : '');

/** The header's advantage in words (`advantage per turn: 0.5, -0.25`): what advantageParts finds. */
export function advantageText(tokens: ReadonlyArray<{ turn: number; adv: number }>): string {
  const p = advantageParts(tokens);
  if (p.kind === 'none') return 'advantage –';
  if (p.kind === 'range') return `advantage per token: ${fmt(p.min)} to ${fmt(p.max)}`;
  return `advantage ${p.kind === 'turns' ? 'per turn: ' : ''}${p.values
    .slice(0, HEAD_TURNS)
    .map((v) => fmt(v.adv))
    .join(', ')}${moreTurns(p.values.length)}`;
}

/**
 * advantageText with each value a button that explains it (the token it was read from). Memoised:
 * a long trajectory's view renders again as it scrolls, and this reads every token.
 */
const AdvantageHead = memo(function AdvantageHead({ traj, tokens }: { traj: number; tokens: ReadonlyArray<{ turn: number; adv: number }> }) {
  const p = advantageParts(tokens);
  // The text is the same as advantageText's, so what is read aloud and what a test reads agree.
  if (p.kind === 'none' || p.kind === 'range') return <strong data-testid="traj-advantage">{advantageText(tokens)}</strong>;
  return (
    <strong data-testid="traj-advantage">
      advantage {p.kind === 'turns' ? 'per turn: ' : ''}
      {p.values.slice(0, HEAD_TURNS).map((v, i) => (
        <span key={v.at}>
          {i > 0 && ', '}
          <ExplainNum r={{ kind: 'token', q: 'adv', traj, tok: v.at }} label={`advantage ${fmt(v.adv)}: explain`}>
            {fmt(v.adv)}
          </ExplainNum>
        </span>
      ))}
      {moreTurns(p.values.length)}
    </strong>
  );
});

function clipText(c: number): string {
  return c < 0 ? 'low' : c > 0 ? 'high' : '';
}


/** A token with its index in its trajectory's token list (what explain= names). */
type TokAt = { k: Traj['tokens'][number]; at: number };

function tokenRow({ k, at }: TokAt, traj: number, staged: boolean) {
  // A step-through stage's batch holds NaN where the iteration had not computed a value yet.
  const fmt = (v: number, digits?: number) => (staged && Number.isNaN(v) ? '–' : fmtNum(v, digits));
  const tok = (q: 'adv' | 'ratio' | 'clip' | 'logp_old' | 'logp' | 'entropy' | 'loss', text: string) => (
    <ExplainNum r={{ kind: 'token', q, traj, tok: at }} label={`${q} ${text} of token ${at}: explain`}>
      {text}
    </ExplainNum>
  );
  return (
    <tr key={at}>
      <td>
        <code>{k.text}</code>
      </td>
      <td className={`num ${k.adv > 0 ? 'pos' : k.adv < 0 ? 'neg' : ''}`}>{tok('adv', fmt(k.adv))}</td>
      <td className={`num ${k.clip !== 0 ? 'clipped' : ''}`}>{tok('ratio', fmt(k.ratio, 4))}</td>
      <td>{tok('clip', clipText(k.clip) || '·')}</td>
      <td className="num">
        {tok('logp_old', fmt(k.logp_old))} → {tok('logp', fmt(k.logp))}
      </td>
      <td className="num">{tok('entropy', fmt(k.entropy))}</td>
      <td className="num">{tok('loss', fmt(k.loss, 5))}</td>
    </tr>
  );
}

const TOKEN_HEAD = (
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
);

/**
 * A turn's tokens as a table. A long turn (a trajectory of thousands of tokens in one turn) shows
 * its rows in a scrolling window and draws only those in view: a table of 4,096 rows, laid out again
 * whenever rows were added, was the main thread's longest task when such a trajectory opened.
 */
function TokenTable({ toks, traj }: { toks: TokAt[]; traj: number }) {
  const [top, setTop] = useState(0);
  const staged = useAppStore((s) => currentBatch(s)?.stage !== undefined);
  if (toks.length <= WINDOW_FROM) {
    return (
      <table className="tokens">
        {TOKEN_HEAD}
        <tbody>{toks.map((x) => tokenRow(x, traj, staged))}</tbody>
      </table>
    );
  }
  const first = Math.max(0, Math.floor(top / TOKEN_ROW_PX) - OVERSCAN);
  const last = Math.min(toks.length, Math.floor(top / TOKEN_ROW_PX) + WINDOW_ROWS + OVERSCAN);
  return (
    <div
      className="tokens-window"
      style={{ maxHeight: (WINDOW_ROWS + 1) * TOKEN_ROW_PX }}
      tabIndex={0}
      role="region"
      aria-label={`${toks.length} tokens; scroll for more`}
      data-testid="tokens-window"
      onScroll={(e) => setTop(e.currentTarget.scrollTop)}
    >
      <table className="tokens windowed">
        {TOKEN_HEAD}
        <tbody>
          {first > 0 && <tr aria-hidden="true" style={{ height: first * TOKEN_ROW_PX }} />}
          {toks.slice(first, last).map((x) => tokenRow(x, traj, staged))}
          {last < toks.length && <tr aria-hidden="true" style={{ height: (toks.length - last) * TOKEN_ROW_PX }} />}
        </tbody>
      </table>
    </div>
  );
}

/** One turn of a trajectory and its tokens. Memoised: as a long list scrolls, the turns still in view do not render again. */
const TurnItem = memo(function TurnItem(props: { traj: number; index: number; turn: number; text: string; role: string | undefined; reward: number | undefined; toks: TokAt[] }) {
  const { traj, index, turn, text, role, reward, toks } = props;
  return (
    <li className="turn" data-index={index}>
      <span className="turn-label">turn {turn + 1}</span> <code>{text}</code>
      {role !== undefined && <span className="turn-note"> role {role}</span>}
      {reward !== undefined && (
        <span className="turn-note">
          {' '}
          turn reward{' '}
          <ExplainNum r={{ kind: 'turn_reward', traj, turn: index }} label={`turn ${index + 1} reward ${fmt(reward)}: explain`}>
            {fmt(reward)}
          </ExplainNum>
        </span>
      )}
      <TokenTable toks={toks} traj={traj} />
    </li>
  );
});

function TrajectoryView({ batch, index }: { batch: BatchDump | null; index: number }) {
  const setFocus = useAppStore((s) => s.setFocus);
  const ref = useRef<HTMLElement>(null);
  const empty = useEmptyText(batch);
  const t = batch?.trajs[index];

  useEffect(() => {
    if (t) ref.current?.scrollIntoView({ block: 'nearest', behavior: 'smooth' });
  }, [t]);

  const parts = useMemo(() => (t ? t.text.split(' | ') : []), [t]);
  // Tokens by turn in one pass (a filter per turn was quadratic: 4,096 turns of one token each).
  const byTurn = useMemo(() => {
    const m = new Map<number, TokAt[]>();
    (t?.tokens ?? []).forEach((k, at) => {
      const list = m.get(k.turn);
      if (list) list.push({ k, at });
      else m.set(k.turn, [{ k, at }]);
    });
    return m;
  }, [t]);
  const turns = useMemo(() => [...byTurn.keys()].sort((a, b) => a - b), [byTurn]);
  const tokensPerTurn = useMemo(() => turns.map((turn) => byTurn.get(turn)!.length), [turns, byTurn]);
  const windowed = useMemo(() => turnListRows(tokensPerTurn) > WINDOW_TURNS_FROM_ROWS, [tokensPerTurn]);
  const list = useRef<HTMLOListElement>(null);
  // The turn holding the focus stays drawn, scrolled away or not: the focus stays where it was.
  const [focusedAt, setFocused] = useState<{ t: Traj | undefined; index: number }>({ t, index: -1 });
  const onFocus = (e: FocusEvent<HTMLOListElement>) => {
    const at = (e.target as HTMLElement).closest<HTMLElement>('li[data-index]')?.dataset.index;
    if (at !== undefined) setFocused({ t, index: Number(at) });
  };
  const { offsets, draw } = useTurnWindow(list, tokensPerTurn, windowed, focusedAt.t === t ? focusedAt.index : -1);
  const drawn: ReactNode[] = [];
  let end = 0;
  for (const i of draw) {
    if (windowed && offsets[i]! > end) drawn.push(<li key={`gap-${i}`} className="turn-spacer" aria-hidden="true" style={{ height: offsets[i]! - end }} />);
    const turn = turns[i]!;
    drawn.push(<TurnItem key={turn} traj={t!.id} index={i} turn={turn} text={parts[i + 1] ?? ''} role={t!.turn_roles?.[i]} reward={t!.turn_rewards?.[i]} toks={byTurn.get(turn)!} />);
    end = offsets[i + 1]!;
  }
  if (windowed && offsets[turns.length]! > end) drawn.push(<li key="gap-end" className="turn-spacer" aria-hidden="true" style={{ height: offsets[turns.length]! - end }} />);
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
            Iteration {batch.iter} · group {t.group}, rollout {rollout} of {groupSize} · reward{' '}
            <strong>
              <ExplainNum r={{ kind: 'reward', traj: t.id }} label={`reward ${rewardText(t.reward)}: explain`}>
                {rewardText(t.reward)}
              </ExplainNum>
            </strong>{' '}
            · <AdvantageHead traj={t.id} tokens={t.tokens} />
          </p>
          <ol className={`turns${windowed ? ' windowed' : ''}`} ref={list} onFocus={onFocus} data-turns={turns.length}>
            <li className="turn prompt">
              <span className="turn-label">prompt</span> <code>{parts[0] ?? ''}</code>
            </li>
            {drawn}
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
