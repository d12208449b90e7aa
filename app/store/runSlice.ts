/**
 * The run: backend, phase and errors. These actions are the only place the UI talks to the worker.
 * Worker calls go through one queue so configure / start / pause / step / reset never interleave;
 * `start` only kicks the run off, so the queue stays free for `pause`. Config edits reconfigure the
 * trainer after a short debounce (Reset semantics); Start, Step and Reset flush a pending one first.
 */
import type { StateCreator } from 'zustand';
import type { BackendInfo } from '../../workers/api';
import { getTrainer, metricsCallback, setWorkerErrorHandler } from '../trainerClient';
import type { AppState } from '.';

export type RunPhase = 'configuring' | 'idle' | 'running' | 'pausing' | 'stepping' | 'resetting';

export interface RunSlice {
  phase: RunPhase;
  /** True once the worker holds a run built from the current config. */
  configured: boolean;
  backendInfo: BackendInfo | null;
  /** The last error from the worker (a rejected call), shown in an alert until dismissed. */
  error: string | null;
  init(): void;
  /** Rebuilds the run from the config after `delayMs` (edits coalesce). */
  requestReconfigure(delayMs?: number): void;
  start(): Promise<void>;
  pause(): Promise<void>;
  step(): Promise<void>;
  reset(): Promise<void>;
  dismissError(): void;
}

/** 250 ms: typing "128" into a field reconfigures once, not three times. */
const RECONFIGURE_DEBOUNCE_MS = 250;

let chain: Promise<void> = Promise.resolve();
let reconfigureTimer: ReturnType<typeof setTimeout> | null = null;
let reconfigureWanted = false;
let runPromise: Promise<void> | null = null;
let initialized = false;

function errorText(e: unknown): string {
  if (e instanceof Error) return e.message || e.name;
  return typeof e === 'string' ? e : JSON.stringify(e);
}

export const createRunSlice: StateCreator<AppState, [], [], RunSlice> = (set, get) => {
  const enqueue = (op: () => Promise<void>): Promise<void> => {
    const p = chain.then(op).catch((e: unknown) => set({ error: errorText(e) }));
    chain = p;
    return p;
  };

  const stopRun = async () => {
    if (!runPromise) return;
    set({ phase: 'pausing' });
    await getTrainer().pause();
    await runPromise;
  };

  const configureNow = async () => {
    reconfigureWanted = false;
    await stopRun();
    set({ phase: 'configuring' });
    get().clearMetrics();
    try {
      const info = await getTrainer().configure(get().config, get().backend);
      set({ backendInfo: info, configured: true });
    } catch (e) {
      set({ backendInfo: null, configured: false });
      throw e;
    } finally {
      set({ phase: 'idle' });
    }
  };

  const ensureConfigured = async () => {
    if (reconfigureTimer !== null) clearTimeout(reconfigureTimer);
    reconfigureTimer = null;
    if (reconfigureWanted || !get().configured) await configureNow();
  };

  return {
    phase: 'configuring',
    configured: false,
    backendInfo: null,
    error: null,

    init() {
      if (initialized) return;
      initialized = true;
      setWorkerErrorHandler((message) => set({ error: message }));
      void enqueue(configureNow);
    },

    requestReconfigure(delayMs = RECONFIGURE_DEBOUNCE_MS) {
      reconfigureWanted = true;
      if (reconfigureTimer !== null) clearTimeout(reconfigureTimer);
      reconfigureTimer = setTimeout(() => {
        reconfigureTimer = null;
        void enqueue(ensureConfigured);
      }, delayMs);
    },

    start: () =>
      enqueue(async () => {
        if (runPromise) return;
        await ensureConfigured();
        if (!get().configured) return;
        const epoch = get().metricsEpoch;
        const onMetrics = metricsCallback((rows) => get().appendMetrics(rows, epoch));
        set({ phase: 'running', error: null });
        runPromise = getTrainer()
          .start(onMetrics)
          .catch((e: unknown) => set({ error: errorText(e) }))
          .finally(() => {
            get().flushMetrics();
            runPromise = null;
            set({ phase: 'idle' });
          });
      }),

    pause: () => enqueue(stopRun),

    step: () =>
      enqueue(async () => {
        if (runPromise) return;
        await ensureConfigured();
        if (!get().configured) return;
        set({ phase: 'stepping' });
        try {
          const row = await getTrainer().step();
          get().appendMetrics([row], get().metricsEpoch);
          get().flushMetrics();
        } finally {
          set({ phase: 'idle' });
        }
      }),

    reset: () =>
      enqueue(async () => {
        await stopRun();
        if (reconfigureWanted || !get().configured) return ensureConfigured();
        set({ phase: 'resetting' });
        get().clearMetrics();
        try {
          await getTrainer().reset();
        } finally {
          set({ phase: 'idle' });
        }
      }),

    dismissError: () => set({ error: null }),
  };
};
