/**
 * A method's disease regime on the page (workers/content/why.ts): one click opens it as a Compare,
 * run A the paper's baseline in the diseased regime and run B the method there, on the same seed,
 * and beside it trains the regime's three runs on the lessons' seeds, headless on the CPU backend in
 * trainer workers of its own (one per core, at most one per job), so its "what you should see"
 * lines are checked on the mean over those seeds with the lessons' rule and drawn with their bands.
 */
import { create } from 'zustand';
import { lessonRunConfig, lessonSeeds, whyLessonById, whyOf, WHY_RUN_IDS, type RunResult, type WhyRunId } from '../../workers/meta';
import { useCompareStore } from '../compare/compareStore';
import { workersFor } from '../lessons/seedStats';
import { spawnTrainer, type TrainerClient } from '../trainerClient';

interface WhyState {
  /** The method whose regime is open, or null. */
  method: string | null;
  /** By run id, then seed. */
  results: Partial<Record<WhyRunId, Record<number, RunResult>>>;
  /** `run/seed` of the jobs training now. */
  training: string[];
  errors: string[];
  openWhy(method: string): void;
  closeWhy(): void;
}

interface Job {
  run: WhyRunId;
  seed: number;
}

let clients: TrainerClient[] = [];
let queue: Job[] = [];
/** Bumped on every open and close: results of an older regime are dropped. */
let epoch = 0;

function stopWorkers(): void {
  for (const c of clients) c.kill();
  clients = [];
  queue = [];
}

export const useWhyStore = create<WhyState>()((set) => {
  const busy = new Set<string>();
  const setTraining = () => set({ training: [...busy] });

  function work(client: TrainerClient, lessonId: string, mine: number): void {
    const job = queue.shift();
    if (!job || mine !== epoch) return;
    const key = `${job.run}/${job.seed}`;
    busy.add(key);
    setTraining();
    client.trainer
      .trainLessonSeed(lessonId, job.run, job.seed)
      .then(
        (r) => {
          if (mine !== epoch) return;
          set((s) => ({ results: { ...s.results, [job.run]: { ...s.results[job.run], [job.seed]: r } } }));
        },
        (e: unknown) => {
          if (mine === epoch) set((s) => ({ errors: [...s.errors, `${job.run}, seed ${job.seed}: ${(e as Error).message}`] }));
        },
      )
      .finally(() => {
        busy.delete(key);
        if (mine !== epoch) return;
        setTraining();
        work(client, lessonId, mine);
      });
  }

  return {
    method: null,
    results: {},
    training: [],
    errors: [],
    openWhy(method) {
      const r = whyOf(method);
      const lesson = whyLessonById(`why-${method}`);
      if (!r || !lesson) return;
      stopWorkers();
      busy.clear();
      const mine = ++epoch;
      set({ method, results: {}, training: [], errors: [] });
      // The Compare: A the baseline, B the method, both in the diseased regime, on the first seed.
      const seeds = lessonSeeds(lesson);
      const config = (run: WhyRunId) => lessonRunConfig(lesson.runs.find((x) => x.id === run)!, seeds[0]);
      useCompareStore.getState().restore(config('sick'), config('cure'));
      // The diseased baseline and the method first (the cure row and the pathology chart's first run).
      queue = (['sick', 'cure', 'healthy'] as const).flatMap((run) => seeds.map((seed) => ({ run, seed })));
      const n = workersFor(typeof navigator === 'undefined' ? 1 : navigator.hardwareConcurrency, queue.length);
      for (let i = 0; i < n; i++) {
        const client = spawnTrainer((message: string) => set((s) => ({ errors: [...s.errors, `worker: ${message}`] })));
        clients.push(client);
        work(client, lesson.id, mine);
      }
    },
    closeWhy() {
      epoch++;
      stopWorkers();
      busy.clear();
      set({ method: null, results: {}, training: [], errors: [] });
    },
  };
});

/** Every run of the regime, with its runs ids, for the checks (one record of runs per seed). */
export function whyBySeed(results: WhyState['results'], seeds: readonly number[]): Array<Partial<Record<WhyRunId, RunResult>>> {
  return seeds.map((seed) => Object.fromEntries(WHY_RUN_IDS.map((run) => [run, results[run]?.[seed]])) as Partial<Record<WhyRunId, RunResult>>);
}
