/**
 * Batch lab state: the method sets, the frozen batch (its iteration and metrics epoch), the last
 * re-score and the view choices. Freezing pauses a running run (training on would replace the
 * batch); re-scoring asks the worker (api.rescore), never the main thread. A set the config refuses
 * is not sent: its column shows the ConfigError message instead.
 */
import { create } from 'zustand';
import type { LabResult } from '../../workers/core/batchLab';
import { useAppStore } from '../store';
import { defaultSets, MAX_SETS, sameSet, setProblem, type Quantity } from './labModel';

export interface FrozenBatch {
  iter: number;
  epoch: number;
}

/** One column of a re-score: the set as it was sent, and its column index in the result or its refusal. */
export interface ScoredSet {
  methods: string[];
  column: number | null;
  problem: string | null;
}

export interface LabRun {
  result: LabResult;
  sets: ScoredSet[];
}

export interface LabState {
  open: boolean;
  /** null: the defaults (the run's own set, plus GRPO); materialized on the first edit. */
  sets: string[][] | null;
  frozen: FrozenBatch | null;
  run: LabRun | null;
  busy: boolean;
  error: string | null;
  quantity: Quantity;
  diff: boolean;
  /** The group shown (null: the default, the first all-equal one). */
  group: number | null;
  setOpen(open: boolean): void;
  setQuantity(q: Quantity): void;
  setDiff(on: boolean): void;
  setGroup(g: number): void;
  addSet(methods: string[]): void;
  removeSet(index: number): void;
  replaceSet(index: number, methods: string[]): void;
  resetSets(): void;
  freeze(): Promise<void>;
  rescore(): Promise<void>;
}

function currentSets(s: LabState): string[][] {
  return s.sets ?? defaultSets(useAppStore.getState().config.methods);
}

export interface LiveRun {
  imported: boolean;
  phase: string;
  /** The last iteration shown (0: none) and the metrics epoch: which batch the worker holds. */
  iter: number;
  epoch: number;
}

export function liveRun(): LiveRun {
  const s = useAppStore.getState();
  return { imported: s.imported !== null, phase: s.phase, iter: s.series[s.series.length - 1]?.iter ?? 0, epoch: s.metricsEpoch };
}

/** Why the frozen batch can no longer be re-scored, or null while it can. */
export function frozenStale(frozen: FrozenBatch | null, live: LiveRun): string | null {
  if (!frozen) return 'Freeze a batch first.';
  if (live.imported) return 'An imported run has no trainer to re-score its batch; close it first.';
  if (live.epoch !== frozen.epoch) return `The run was rebuilt since iteration ${frozen.iter} was frozen: freeze its new batch.`;
  if (live.iter !== frozen.iter) return `The run went on to iteration ${live.iter}, which replaced the frozen batch of iteration ${frozen.iter}: freeze again.`;
  if (live.phase !== 'idle') return 'The run is busy: wait until it is paused.';
  return null;
}

function errorText(e: unknown): string {
  return e instanceof Error ? e.message || e.name : String(e);
}

export const useLabStore = create<LabState>()((set, get) => ({
  open: false,
  sets: null,
  frozen: null,
  run: null,
  busy: false,
  error: null,
  quantity: 'grad',
  diff: false,
  group: null,
  setOpen: (open) => set({ open }),
  setQuantity: (quantity) => set({ quantity }),
  setDiff: (diff) => set({ diff }),
  setGroup: (group) => set({ group }),
  addSet(methods) {
    const sets = currentSets(get());
    if (sets.length >= MAX_SETS || sets.some((x) => sameSet(x, methods))) return;
    set({ sets: [...sets, methods] });
  },
  removeSet(index) {
    const sets = currentSets(get());
    if (sets.length <= 1) return;
    set({ sets: sets.filter((_, i) => i !== index) });
  },
  replaceSet(index, methods) {
    set({ sets: currentSets(get()).map((x, i) => (i === index ? methods : x)) });
  },
  resetSets: () => set({ sets: null }),

  async freeze() {
    const app = useAppStore.getState();
    if (app.phase === 'running' || app.phase === 'pausing') await app.pause();
    const live = liveRun();
    if (live.imported || live.iter === 0) return set({ error: 'Run or step at least one iteration first.' });
    set({ frozen: { iter: live.iter, epoch: live.epoch }, run: null, error: null, group: null });
    await get().rescore();
  },

  async rescore() {
    const { frozen } = get();
    const stale = frozenStale(frozen, liveRun());
    if (stale || !frozen || get().busy) return set({ error: stale });
    const config = useAppStore.getState().config;
    const sets: ScoredSet[] = [];
    const send: string[][] = [];
    for (const methods of currentSets(get())) {
      const problem = setProblem(config, methods);
      sets.push({ methods, column: problem ? null : send.length, problem });
      if (!problem) send.push(methods);
    }
    if (!send.length) return set({ error: 'Every set is refused by the config (see each set’s reason).' });
    set({ busy: true, error: null });
    try {
      // In the run's queue, so a re-score never interleaves with a rebuild or a step.
      const result = await useAppStore.getState().rescore(send);
      if (!result) throw new Error('The run is busy: wait until it is paused.');
      if (result.iter !== frozen.iter) throw new Error(`The worker holds the batch of iteration ${result.iter}, not the frozen ${frozen.iter}: freeze again.`);
      set({ run: { result, sets } });
    } catch (e) {
      set({ error: errorText(e) });
    } finally {
      set({ busy: false });
    }
  },
}));

/** The sets the lab shows now (the defaults until the first edit). */
export function useLabSets(): string[][] {
  const sets = useLabStore((s) => s.sets);
  const methods = useAppStore((s) => s.config.methods);
  return sets ?? defaultSets(methods);
}
