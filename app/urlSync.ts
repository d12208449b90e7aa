/**
 * Keeps the URL hash and the store in step (docs/ARCHITECTURE.md "The share link"). On load the hash is decoded
 * (never trusted: decodeShareLink validates every key) and applied; afterwards the address bar
 * follows the config and the view with history.replaceState, debounced, so a slider drag adds no
 * history entries. Editing the hash by hand (a hashchange) applies the new link.
 */
import { decodeShareLink, encodeShareLink } from '../workers/shareUrl';
import { useAppStore, type AppState } from './store';

/** 200 ms: typing "128" into a field writes the address once. */
const WRITE_DEBOUNCE_MS = 200;

let started = false;
let timer: ReturnType<typeof setTimeout> | null = null;

/** The hash that describes what the page shows now. */
export function currentHash(s: AppState): string {
  return encodeShareLink(s.config, {
    backend: s.backend,
    step: s.linkStep ?? undefined,
    focus: s.focus ?? undefined,
    hide: s.hidden,
    lesson: s.lesson ?? undefined,
    present: s.presenter || undefined,
  });
}

/** The full link (this page's address) for a hash. */
export function shareLinkFor(hash: string): string {
  return `${location.origin}${location.pathname}${hash}`;
}

function writeHash(): void {
  timer = null;
  const hash = currentHash(useAppStore.getState());
  if (hash !== location.hash) history.replaceState(history.state, '', hash);
}

export function startUrlSync(): void {
  if (started) return;
  started = true;
  useAppStore.getState().applyLink(decodeShareLink(location.hash), true);
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
    if (timer !== null) clearTimeout(timer);
    timer = setTimeout(writeHash, WRITE_DEBOUNCE_MS);
  });
  window.addEventListener('hashchange', () => {
    if (location.hash === currentHash(useAppStore.getState())) return;
    useAppStore.getState().applyLink(decodeShareLink(location.hash), false);
  });
}
