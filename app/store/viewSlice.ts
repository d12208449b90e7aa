/**
 * What the page shows besides the config: hidden panels and the open group/trajectory (both part of
 * the share link), problems found in the link, the inspected batch, run notes, and an imported run
 * (viewed without re-running). Actions that talk to the worker live in the run slice.
 */
import type { StateCreator } from 'zustand';
import type { RunFile, RunFileProblem } from '../../workers/formats/runFile';
import type { ImportedLog } from '../../workers/formats/importRun';
import type { Focus, LessonRef, LinkProblem, PanelId } from '../../workers/formats/shareUrl';
import type { BatchDump } from '../../workers/formats/batchDump';
import type { AppState } from '.';

export interface ImportedRun {
  fileName: string;
  run: RunFile;
  /** Set when the file was a verl or TRL metric log (its rows under the page's config), not a run file. */
  log?: ImportedLog | null;
}

export type Theme = 'light' | 'dark';

/** A method change the user should hear about: an estimator swap (undoable) or a refusal. */
export interface MethodNotice {
  text: string;
  /** The method set before the swap, for Undo; null when there is nothing to undo. */
  undo: string[] | null;
  kind: 'swap' | 'refused';
}

/** Display preferences: kept in this browser (localStorage), never in a share link. */
const PREFS_KEY = 'rl-playground-display';

export function loadPrefs(): { theme: Theme; largeType: boolean } {
  let theme: Theme = 'light';
  let largeType = false;
  try {
    if (typeof matchMedia === 'function' && matchMedia('(prefers-color-scheme: dark)').matches) theme = 'dark';
    const raw = typeof localStorage !== 'undefined' ? localStorage.getItem(PREFS_KEY) : null;
    const p = raw ? (JSON.parse(raw) as { theme?: unknown; largeType?: unknown }) : {};
    if (p.theme === 'light' || p.theme === 'dark') theme = p.theme;
    if (typeof p.largeType === 'boolean') largeType = p.largeType;
  } catch {
    // Storage refused or malformed: the defaults.
  }
  return { theme, largeType };
}

export function savePrefs(p: { theme: Theme; largeType: boolean }): void {
  try {
    localStorage.setItem(PREFS_KEY, JSON.stringify(p));
  } catch {
    // Storage refused: the preference lasts for this page only.
  }
}

export interface ViewSlice {
  theme: Theme;
  /** Projector mode: larger type everywhere. */
  largeType: boolean;
  setTheme(theme: Theme): void;
  setLargeType(on: boolean): void;
  hidden: PanelId[];
  focus: Focus | null;
  /** `step=N` of the link the page was opened with; dropped once the config is edited. */
  linkStep: number | null;
  linkProblems: LinkProblem[];
  /** Set when the link was written by an older version and migrated. */
  linkMigratedFrom: number | null;
  /** The last iteration's batch (api.packBatch, unpacked), valid while batchEpoch === metricsEpoch. */
  batch: BatchDump | null;
  batchEpoch: number;
  notes: string;
  imported: ImportedRun | null;
  importErrors: { fileName: string; errors: RunFileProblem[] } | null;
  setFocus(focus: Focus | null): void;
  hidePanel(id: PanelId): void;
  showAllPanels(): void;
  dismissLinkProblems(): void;
  setNotes(notes: string): void;
  dismissImportErrors(): void;
  /** The open lesson and step (part of the share link), or null. */
  lesson: LessonRef | null;
  /** Presenter mode: large type and only the panels and charts the lesson needs. */
  presenter: boolean;
  /** Shows a lesson's panel at a step (the step's run is loaded by the panel). */
  openLesson(lesson: LessonRef): void;
  closeLesson(): void;
  /** Presenter mode on (hides `hide`) or off (shows every panel). */
  setPresenter(on: boolean, hide?: PanelId[]): void;
  methodNotice: MethodNotice | null;
  setMethodNotice(notice: MethodNotice | null): void;
}

export const createViewSlice: StateCreator<AppState, [], [], ViewSlice> = (set, get) => ({
  ...loadPrefs(),
  setTheme(theme) {
    set({ theme });
    savePrefs({ theme, largeType: get().largeType });
  },
  setLargeType(largeType) {
    set({ largeType });
    savePrefs({ theme: get().theme, largeType });
  },
  hidden: [],
  focus: null,
  linkStep: null,
  linkProblems: [],
  linkMigratedFrom: null,
  batch: null,
  batchEpoch: -1,
  notes: '',
  imported: null,
  importErrors: null,
  setFocus: (focus) => set({ focus }),
  hidePanel: (id) => set((s) => ({ hidden: s.hidden.includes(id) ? s.hidden : [...s.hidden, id] })),
  showAllPanels: () => set({ hidden: [] }),
  dismissLinkProblems: () => set({ linkProblems: [], linkMigratedFrom: null }),
  setNotes: (notes) => set({ notes }),
  dismissImportErrors: () => set({ importErrors: null }),
  lesson: null,
  presenter: false,
  openLesson: (lesson) => set({ lesson }),
  closeLesson: () => set((s) => ({ lesson: null, presenter: false, hidden: s.presenter ? [] : s.hidden })),
  setPresenter: (on, hide = []) => set({ presenter: on, hidden: on ? hide : [] }),
  methodNotice: null,
  setMethodNotice: (methodNotice) => set({ methodNotice }),
});

/** The batch of the run on screen, or null when it is stale or not loaded. */
export function currentBatch(s: AppState): BatchDump | null {
  if (s.imported) return s.batchEpoch === s.metricsEpoch ? s.batch : null;
  const last = s.series[s.series.length - 1];
  if (!s.batch || s.batchEpoch !== s.metricsEpoch || !last || s.batch.iter !== last.iter) return null;
  return s.batch;
}
