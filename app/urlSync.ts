/**
 * Keeps the URL hash and the store in step (docs/ARCHITECTURE.md "The share link"). On load the hash is decoded
 * (never trusted: decodeShareLink validates every key) and applied; afterwards the address bar
 * follows the config and the view with history.replaceState, debounced, so a slider drag adds no
 * history entries. Editing the hash by hand (a hashchange) applies the new link. An open Compare
 * view is part of the link (`compare=<A>|<B>`, with `|step:<n>` once both have run), and a link
 * that carries one opens it on both runs and runs them to that iteration; so is an open Arena view
 * (`arena=<spec>`, with `|done:<k>` once every cell has run k seeds), which a link opens on its
 * arena and runs to the same point; so are an explained token (`explain=ITER.TRAJ.TOKEN`, opened
 * once the page holds that iteration's batch) and step-through's stage (`stage=NAME`).
 */
import { decodeShareLink, encodeShareLink, type ComparePair, type DecodedLink } from '../workers/meta';
import { useAppStore, type AppState } from './store';
import { arenaSeedsDone, useArenaStore, type ArenaState } from './arena/arenaStore';
import { pairStep, useCompareStore, type CompareState } from './compare/compareStore';
import { explainLinkOf, useExplainStore } from './explain/explainStore';

/** 200 ms: typing "128" into a field writes the address once. */
const WRITE_DEBOUNCE_MS = 200;

let started = false;
let timer: ReturnType<typeof setTimeout> | null = null;
/**
 * The address as this page last wrote or applied it. An address that differs is a link on its way
 * in (typed, pasted, Back) whose hashchange has not been handled yet: a debounced write of the old
 * state must not replace it, or the handler finds the old address and the new link is lost.
 */
let known: string | null = null;

/** The two compared runs while the Compare view is open (and the iteration both reached), else undefined. */
function comparePair(c: CompareState): ComparePair | undefined {
  if (c.tab !== 'compare' || !c.snapped) return undefined;
  const step = pairStep(c);
  return { a: c.a.config, b: c.b.config, ...(step ? { step } : {}) };
}

/** The open Arena view's arena, else undefined. */
function openArena(c: CompareState, a: ArenaState): ArenaState['spec'] | undefined {
  return c.tab === 'arena' ? a.spec : undefined;
}

/** The hash that describes what the page shows now. */
export function currentHash(s: AppState, c: CompareState = useCompareStore.getState(), a: ArenaState = useArenaStore.getState()): string {
  const x = useExplainStore.getState();
  // The explained token of the batch on screen, or a link's one still waiting for its iteration.
  // Not while live step-through shows a stage's batch: a link reopens the iteration's final batch,
  // where the same token holds another step's values.
  const explain = (x.live ? null : explainLinkOf(x.target)) ?? x.pending ?? undefined;
  return encodeShareLink(s.config, {
    backend: s.backend,
    step: s.linkStep ?? undefined,
    focus: s.focus ?? undefined,
    hide: s.hidden,
    lesson: s.lesson ?? undefined,
    present: s.presenter || undefined,
    compare: comparePair(c),
    arena: openArena(c, a),
    arenaDone: c.tab === 'arena' ? arenaSeedsDone(a) || undefined : undefined,
    explain,
    stage: x.stage ?? undefined,
  });
}

/** The last iteration the page has run (0 before the first). */
export function lastIter(s: AppState): number {
  return s.series[s.series.length - 1]?.iter ?? 0;
}

/**
 * The hash Share copies: what the page shows, run to where it is now. Past iteration 0 it holds
 * `step=` (else the recipient lands on an empty run); a link's own step stays as it was.
 */
export function shareHash(s: AppState, c: CompareState = useCompareStore.getState()): string {
  const iter = lastIter(s);
  const step = s.linkStep ?? (iter > 0 ? iter : null);
  return currentHash({ ...s, linkStep: step }, c);
}

/** Applies a link to the page and, when it carries one, opens the Compare view on its two runs. */
function applyLink(link: DecodedLink, initial: boolean): void {
  useAppStore.getState().applyLink(link, initial);
  const x = useExplainStore.getState();
  x.close();
  x.setPending(link.explain ?? null);
  x.setStage(link.stage ?? null);
  if (link.compare) useCompareStore.getState().restore(link.compare.a, link.compare.b, link.compare.step);
  if (link.arena) useArenaStore.getState().restore(link.arena, link.arenaDone);
}

/** The full link (this page's address) for a hash. */
export function shareLinkFor(hash: string): string {
  return `${location.origin}${location.pathname}${hash}`;
}

function later(): void {
  if (timer !== null) clearTimeout(timer);
  timer = setTimeout(writeHash, WRITE_DEBOUNCE_MS);
}

function writeHash(): void {
  timer = null;
  if (known !== null && location.hash !== known) return;
  const hash = currentHash(useAppStore.getState());
  if (hash !== location.hash) history.replaceState(history.state, '', hash);
  // Read back: the browser may percent-encode what was written.
  known = location.hash;
}

export function startUrlSync(): void {
  if (started) return;
  started = true;
  applyLink(decodeShareLink(location.hash), true);
  writeHash();
  useAppStore.subscribe((s, prev) => {
    if (
      s.config === prev.config &&
      s.backend === prev.backend &&
      s.hidden === prev.hidden &&
      s.focus === prev.focus &&
      s.linkStep === prev.linkStep &&
      s.lesson === prev.lesson &&
      s.presenter === prev.presenter
    ) {
      return;
    }
    later();
  });
  useCompareStore.subscribe((c, prev) => {
    const same = c.tab === prev.tab && c.snapped === prev.snapped && c.a.config === prev.a.config && c.b.config === prev.b.config;
    // A "run to N" writes N at once; a pause writes the iteration both runs reached.
    if (same && c.a.phase === prev.a.phase && c.b.phase === prev.b.phase && c.runUntil === prev.runUntil) return;
    later();
  });
  useArenaStore.subscribe((a, prev) => {
    if (a.spec !== prev.spec || a.phase !== prev.phase) later();
  });
  useExplainStore.subscribe((x, prev) => {
    if (x.target !== prev.target || x.pending !== prev.pending || x.stage !== prev.stage || x.live !== prev.live) later();
  });
  window.addEventListener('hashchange', () => {
    known = location.hash;
    if (location.hash === currentHash(useAppStore.getState())) return;
    applyLink(decodeShareLink(location.hash), false);
  });
}
