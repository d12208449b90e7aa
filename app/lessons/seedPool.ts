/**
 * The seed pool: while a lesson step's run trains on screen (one seed), the lesson's other seeds of
 * that run train headless, on the CPU backend, in trainer workers beside it, so each line can be
 * checked on the mean over the lesson's seeds as the tests check it.
 *
 * Workers: at most one per core (navigator.hardwareConcurrency), the page's own trainer worker
 * counted, and never more than there are seeds to train at once. The extra workers start when a
 * lesson opens (a worker's start is then off the step's critical path) and stay while it is open,
 * so their compiled code and pretraining cache serve every step. The page's own worker takes a
 * queued seed once its run on screen is recorded and the page is idle: on a 2-core machine four
 * seeds are two runs per core instead of three on the extra worker.
 */
import { create } from 'zustand';
import { lessonById, lessonRun, lessonSeeds, type Lesson } from '../../workers/content/lessons';
import { useAppStore, type AppState } from '../store';
import { createTrainerClient, currentTrainer, getTrainer, type Trainer, type TrainerClient } from '../trainerClient';
import { runOnScreen, useLessonResults } from './lessonResults';
import { workersFor } from './seedStats';

interface Job {
  lessonId: string;
  runId: string;
  seed: number;
}

const keyOf = (j: Job) => `${j.lessonId}/${j.runId}/${j.seed}`;

/** What the panel shows of the pool: the seeds training now and the failures. */
interface SeedPoolState {
  /** Keys lesson/run/seed of the jobs training now. */
  training: string[];
  errors: string[];
}

export const useSeedPool = create<SeedPoolState>()(() => ({ training: [], errors: [] }));

interface Slot {
  client: TrainerClient | null;
  busy: Job | null;
  /** The trainer the busy job runs on. */
  on?: Trainer;
}

let openLesson: string | null = null;
let extras: Slot[] = [];
const main: Slot = { client: null, busy: null };
let queue: Job[] = [];

const setTraining = () => useSeedPool.setState({ training: [...extras, main].flatMap((s) => (s.busy ? [keyOf(s.busy)] : [])) });

function mainMayTrain(s: AppState): boolean {
  if (s.phase !== 'idle' || s.configPending || !s.configured || s.imported || s.linkGate) return false;
  const lesson = s.lesson ? lessonById(s.lesson.id) : undefined;
  if (!lesson) return true;
  // The page's run first: the worker takes a seed only once the run on screen is recorded.
  const run = runOnScreen(lesson, s);
  return !run || useLessonResults.getState().results[lesson.id]?.[run.id]?.[s.config.seed] !== undefined;
}

function runJob(slot: Slot, trainer: Trainer, job: Job): void {
  slot.busy = job;
  slot.on = trainer;
  setTraining();
  const lesson = lessonById(job.lessonId)!;
  trainer
    .trainLessonSeed(job.lessonId, job.runId, job.seed)
    .then(
      (r) => useLessonResults.getState().record(job.lessonId, job.runId, job.seed, r),
      (e: unknown) => useSeedPool.setState((p) => ({ errors: [...p.errors, `${lessonRun(lesson, job.runId).label}, seed ${job.seed}: ${(e as Error).message}`] })),
    )
    .finally(() => {
      if (slot.busy !== job) return;
      slot.busy = null;
      setTraining();
      pump();
    });
}

/** Hands queued seeds to idle workers. */
function pump(): void {
  const s = useAppStore.getState();
  // The page killed a crashed or hung worker while it trained a seed: that call never answers.
  if (main.busy && main.on !== currentTrainer()) {
    queue.unshift(main.busy);
    main.busy = null;
    setTraining();
  }
  for (const slot of [...extras, main]) {
    if (slot.busy || queue.length === 0) continue;
    if (slot === main && !mainMayTrain(s)) continue;
    const job = queue.shift()!;
    const have = useLessonResults.getState().results[job.lessonId]?.[job.runId]?.[job.seed];
    if (have) {
      pump();
      return;
    }
    runJob(slot, slot === main ? getTrainer() : slot.client!.trainer, job);
  }
}

/** Ends the extra workers and forgets the queue (the lesson closed or another opened). */
function stop(): void {
  for (const slot of extras) slot.client?.kill();
  extras = [];
  queue = [];
  openLesson = null;
  setTraining();
}

function startFor(lesson: Lesson): void {
  stop();
  openLesson = lesson.id;
  const n = workersFor(typeof navigator === 'undefined' ? 1 : navigator.hardwareConcurrency, lessonSeeds(lesson).length) - 1;
  for (let i = 0; i < n; i++) {
    const slot: Slot = { client: null, busy: null };
    slot.client = createTrainerClient((message) => {
      useSeedPool.setState((p) => ({ errors: [...p.errors, `a seed worker failed: ${message}`] }));
      // Its job never answers: give the seed back to the queue and go on without this worker.
      const job = slot.busy;
      slot.client?.kill();
      extras = extras.filter((x) => x !== slot);
      slot.busy = null;
      if (job) queue.unshift(job);
      setTraining();
      pump();
    });
    extras.push(slot);
  }
}

/** Queues the seeds of the run on screen that are neither recorded, queued nor training. */
function enqueue(s: AppState, lesson: Lesson): void {
  // The link's config names the run: its seeds need not wait for the page's worker to build it.
  if (s.imported) return;
  const run = runOnScreen(lesson, s);
  if (!run) return;
  const have = useLessonResults.getState().results[lesson.id]?.[run.id] ?? {};
  const taken = new Set([...queue, ...extras.map((x) => x.busy), main.busy].flatMap((j) => (j ? [keyOf(j)] : [])));
  for (const seed of lessonSeeds(lesson)) {
    // The seed on screen is the page's own run: it is recorded from there.
    if (seed === s.config.seed || have[seed] !== undefined) continue;
    const job = { lessonId: lesson.id, runId: run.id, seed };
    if (!taken.has(keyOf(job))) queue.push(job);
  }
}

/** Follows the page: starts and stops the pool with the lesson, queues each step's seeds. */
export function watchSeedPool(): () => void {
  const check = (s: AppState) => {
    const lesson = s.lesson ? lessonById(s.lesson.id) : undefined;
    if (!lesson) {
      if (openLesson !== null) stop();
      return;
    }
    if (openLesson !== lesson.id) startFor(lesson);
    enqueue(s, lesson);
    pump();
  };
  check(useAppStore.getState());
  const a = useAppStore.subscribe(check);
  // A recorded run on screen lets the page's worker join.
  const b = useLessonResults.subscribe(() => pump());
  return () => {
    a();
    b();
    stop();
  };
}
