/**
 * A trajectory's turns in the Inspector, drawn only near the view when there are many (Inspector.tsx
 * TrajectoryView), and the sizes both it and a long turn's token table (TokenTable) lay out by.
 */
import { useEffect, useLayoutEffect, useMemo, useRef, useState, type RefObject } from 'react';

/** Rows of a turn's token table past which only the rows in view are drawn (a scrolling window). */
export const WINDOW_FROM = 200;
/** The window: this many rows in view, each TOKEN_ROW_PX high (Inspector.css fixes the height). */
export const WINDOW_ROWS = 24;
export const TOKEN_ROW_PX = 22;
/** Rows drawn above and below the view, so a scroll does not show blank rows before they come. */
export const OVERSCAN = 16;

/**
 * Rows (of TOKEN_ROW_PX) past which a trajectory draws only the turns near the view: a turn's own
 * line counts one, its table its rows (a windowed table the rows it draws). 4,096 turns of a token
 * each, all drawn, made a page of about 160,000 elements: 54 s to draw here a chunk per task, over
 * 200 s on the same machine under load, with a longest task of 5 s; drawn near the view, it opens
 * in under a second with no task over 0.35 s.
 */
export const WINDOW_TURNS_FROM_ROWS = 400;

/** Rows a turn list draws with every turn drawn (see WINDOW_TURNS_FROM_ROWS). */
export function turnListRows(tokensPerTurn: readonly number[]): number {
  let rows = 0;
  for (const n of tokensPerTurn) rows += 1 + (n > WINDOW_FROM ? WINDOW_ROWS + 2 * OVERSCAN : n);
  return rows;
}

/** A token table's height: rows of TOKEN_ROW_PX and its head (Inspector.css fixes it in a windowed list), or a long turn's window. */
export const tokenTablePx = (tokens: number): number => (tokens > WINDOW_FROM ? WINDOW_ROWS + 1 : tokens + 1) * TOKEN_ROW_PX;

/**
 * Index of the first of `count` items for which `past` holds, `count` if none does; `past` must be
 * false and then true along the items (as it is along ascending offsets).
 */
export function firstPast(count: number, past: (i: number) => boolean): number {
  let lo = 0;
  let hi = count;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (past(mid)) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/**
 * Where each turn of a list starts, from their heights: `measured[i]` where drawn (NaN where not
 * yet), else its table's height and `line` (a turn's own line and the space under it, as the turns
 * drawn measure it). offsets[count] is the whole list's height.
 */
export function turnOffsets(tokensPerTurn: readonly number[], measured: Float64Array, line: number): Float64Array {
  const at = new Float64Array(tokensPerTurn.length + 1);
  for (let i = 0; i < tokensPerTurn.length; i++) at[i + 1] = at[i]! + (Number.isNaN(measured[i]!) ? line + tokenTablePx(tokensPerTurn[i]!) : measured[i]!);
  return at;
}

/** The turns to draw: those within `margin` px of [top, bottom) (in the list's own coordinates), as [first, last]; last < first when none. */
export function turnsNear(offsets: Float64Array, top: number, bottom: number, margin: number): [number, number] {
  const count = offsets.length - 1;
  const first = firstPast(count, (i) => offsets[i + 1]! > top - margin);
  const last = firstPast(count, (i) => offsets[i]! >= bottom + margin) - 1;
  return [first, last];
}

type TurnSizes = { of: readonly number[]; measured: Float64Array; line: number };

/** A turn's own line and the space under it, before one is measured (Inspector.css). */
const TURN_LINE_PX = 36;

/**
 * A long list of turns drawn only near the view (a screen above and below it), the others stood
 * in for by spacers of their height: measured once drawn, else estimated from their token counts,
 * so the page scrolls over the whole trajectory. The range follows every scroll of the page or of
 * an element around it (presenter mode scrolls a column), a frame at most once; `keep` (the turn
 * holding the focus) is drawn wherever it is. `on` false draws every turn.
 */
export function useTurnWindow(list: RefObject<HTMLOListElement | null>, tokensPerTurn: readonly number[], on: boolean, keep: number) {
  const count = tokensPerTurn.length;
  // Heights measured so far, for this list (a new trajectory starts again), and the least line
  // measured (a turn's text that wraps makes its line taller; most do not wrap).
  const fresh = (): TurnSizes => ({ of: tokensPerTurn, measured: new Float64Array(count).fill(NaN), line: NaN });
  const [sizes, setSizes] = useState(fresh);
  const current = sizes.of === tokensPerTurn ? sizes : fresh();
  if (current !== sizes) setSizes(current);
  const offsets = useMemo(() => turnOffsets(current.of, current.measured, Number.isNaN(current.line) ? TURN_LINE_PX : current.line), [current]);
  const [range, setRange] = useState<[number, number]>([0, -1]);

  const follow = useRef<() => void>(() => {});
  follow.current = () => {
    const ol = list.current;
    if (!ol || !on) return;
    // The list's coordinates from its first turn (the prompt's <li> comes before it).
    const y = -ol.getBoundingClientRect().top - (ol.firstElementChild as HTMLElement | null)!.offsetHeight;
    const [first, last] = turnsNear(offsets, y, y + innerHeight, innerHeight);
    setRange((r) => (r[0] === first && r[1] === last ? r : [first, last]));
  };

  // The turns just drawn, measured before they are painted; new heights move the spacers and maybe the range.
  useLayoutEffect(() => {
    const ol = list.current;
    if (!ol || !on) return;
    let measured: Float64Array | null = null;
    let line = current.line;
    for (const li of ol.querySelectorAll<HTMLElement>(':scope > li[data-index]')) {
      const i = Number(li.dataset.index);
      const h = li.getBoundingClientRect().height;
      if (Math.abs(h - current.measured[i]!) < 0.01) continue;
      measured ??= current.measured.slice();
      measured[i] = h;
      const own = h - tokenTablePx(tokensPerTurn[i]!);
      line = Number.isNaN(line) ? own : Math.min(line, own);
    }
    if (measured) setSizes({ of: current.of, measured, line });
    else follow.current();
  });

  useEffect(() => {
    if (!on) return;
    let frame = 0;
    const schedule = () => {
      if (!frame) frame = requestAnimationFrame(() => ((frame = 0), follow.current()));
    };
    // A new width can wrap a turn's line: measured again.
    const resize = () => setSizes((s) => ({ ...s, measured: new Float64Array(s.of.length).fill(NaN) }));
    document.addEventListener('scroll', schedule, { capture: true, passive: true });
    addEventListener('resize', resize);
    return () => {
      cancelAnimationFrame(frame);
      document.removeEventListener('scroll', schedule, { capture: true });
      removeEventListener('resize', resize);
    };
  }, [on]);

  if (!on) return { offsets, draw: Array.from({ length: count }, (_, i) => i) };
  const [first, last] = range[1] < count ? range : [0, -1];
  const draw: number[] = [];
  if (keep >= 0 && keep < first) draw.push(keep);
  for (let i = first; i <= last; i++) draw.push(i);
  if (keep > last && keep < count) draw.push(keep);
  return { offsets, draw };
}
