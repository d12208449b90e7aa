/**
 * The seed pool: while a lesson step's run trains on screen (one seed), the lesson's other seeds of
 * that run train headless, on the CPU backend, in trainer workers beside it, so each line can be
 * checked on the mean over the lesson's seeds as the tests check it.
 *
 * Workers: at most one per core (navigator.hardwareConcurrency), the page's own trainer worker
 * counted, and never more than there are seeds to train at once. The extra workers (trainer
 * sessions of their own, app/trainerSession.ts) start when a lesson opens (a worker's start is then
 * off the step's critical path; for a lesson link, before the page's first render) and stay while it is open, so their compiled code and pretraining
 * cache serve every step. The page's own worker takes a queued seed once its run on screen is
 * recorded and the page is idle: on a 2-core machine four seeds are two runs per core instead of
 * three on the extra worker.
 */
import { create } from 'zustand';
import { lessonById, lessonRun, lessonSeeds, type Lesson } from '../../workers/meta';
import { useAppStore, type AppState } from '../store';
import { setSeedsTraining } from '../store/metricsSlice';
import { createTrainerSession, mainSession, WorkerGone, type TrainerSession } from '../trainerSession';
import { runOnScreen, useLessonResults } from './lessonResults';
import { stepRuns } from './stepProgress';
import { workersFor } from './seedStats';

interface Job {
  lessonId: string;
  runId: string;
  seed: number;
}

const keyOf = (j: Job) => `${j.lessonId}/${j.runId}/${j.seed}`;

/** A seed training now, and the last iteration it finished. */
export interface SeedTraining extends Job {
  iter: number;
}

/** What the panel shows of the pool: the seeds training now, those queued, and the failures. */
interface SeedPoolState {
  training: SeedTraining[];
  queued: Job[];
  errors: string[];
}

export const useSeedPool = create<SeedPoolState>()(() => ({ training: [], queued: [], errors: [] }));

interface Slot {
  /** The slot's trainer session; the page's own for the main slot. */
  session: TrainerSession;
  busy: Job | null;
  /** Set once the page asked this worker to stop its seed: the seed's rejection is that, not a failure. */
  stopping?: boolean;
}

let openLesson: string | null = null;
let extras: Slot[] = [];
const main: Slot = { session: mainSession, busy: null };
let queue: Job[] = [];
/** Iterations done per training job (by key), for the progress line. */
const progress = new Map<string, number>();

/** What was last published: the pool is checked on every store update, and most change nothing. */
let published = '';

function publish(): void {
  const training = [...extras, main].flatMap((s) => (s.busy ? [{ ...s.busy, iter: progress.get(keyOf(s.busy)) ?? 0 }] : []));
  const text = JSON.stringify([training, queue]);
  if (text === published) return;
  published = text;
  setSeedsTraining(training.length > 0);
  useSeedPool.setState({ training, queued: [...queue] });
}

/** The page's worker is free for a seed: its run on screen is built from the config on screen and idle. */
function mainIsFree(s: AppState): boolean {
  return s.phase === 'idle' && s.seriesConfig === s.config && s.configured && !s.imported && !s.linkGate;
}

function mainMayTrain(s: AppState): boolean {
  if (!mainIsFree(s)) return false;
  const lesson = s.lesson ? lessonById(s.lesson.id) : undefined;
  if (!lesson) return true;
  // The page's run first: the worker takes a seed only once the run on screen is recorded.
  const run = runOnScreen(lesson, s);
  return !run || useLessonResults.getState().results[lesson.id]?.[run.id]?.[s.config.seed] !== undefined;
}

function runJob(slot: Slot, job: Job): void {
  slot.busy = job;
  const key = keyOf(job);
  progress.set(key, 0);
  publish();
  const lesson = lessonById(job.lessonId)!;
  const onIter = slot.session.progress((iter) => {
    progress.set(key, iter);
    publish();
  });
  slot.session
    .call((t) => t.trainLessonSeed(job.lessonId, job.runId, job.seed, onIter))
    .then(
      (r) => useLessonResults.getState().record(job.lessonId, job.runId, job.seed, r),
      (e: unknown) => {
        // The worker crashed or hung (its session ended it), or the page took its worker back: the
        // seed goes back to the queue.
        if (e instanceof WorkerGone || slot.stopping) {
          if (openLesson === job.lessonId) queue.unshift(job);
          return;
        }
        useSeedPool.setState((p) => ({ errors: [...p.errors, `${lessonRun(lesson, job.runId).label}, seed ${job.seed}: ${(e as Error).message}`] }));
      },
    )
    .finally(() => {
      progress.delete(key);
      if (slot.busy !== job) return;
      slot.busy = null;
      slot.stopping = false;
      publish();
      pump();
    });
}

/** Hands queued seeds to idle workers. */
function pump(): void {
  const s = useAppStore.getState();
  // The page wants its worker for a new run (a step's link, Start, Step): its seed stops at once.
  if (main.busy && !main.stopping && !mainIsFree(s)) {
    main.stopping = true;
    void mainSession.call((t) => t.stopLessonSeeds()).catch(() => {});
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
    runJob(slot, job);
  }
  publish();
}

/** Ends the extra workers and forgets the queue (the lesson closed or another opened). */
function stop(): void {
  const gone = extras;
  extras = [];
  queue = [];
  openLesson = null;
  for (const slot of gone) slot.session.close();
  publish();
}

function startFor(lesson: Lesson): void {
  stop();
  openLesson = lesson.id;
  const n = workersFor(typeof navigator === 'undefined' ? 1 : navigator.hardwareConcurrency, lessonSeeds(lesson).length) - 1;
  for (let i = 0; i < n; i++) {
    const slot: Slot = {
      session: createTrainerSession({
        onFailure: (message) => {
          useSeedPool.setState((p) => ({ errors: [...p.errors, `a seed worker failed: ${message}`] }));
          // Its job comes back through its rejected call; the pool goes on without this worker.
          extras = extras.filter((x) => x !== slot);
          publish();
        },
      }),
      busy: null,
    };
    extras.push(slot);
  }
}

/**
 * Queues what the current step's lines still need: the seeds of the run on screen but its own seed
 * (the page trains that one), then every seed of the other runs its lines compare (a step opened
 * from a link, or reached by skipping, has not trained them). Queued seeds of other steps are
 * dropped, so a class waits only for the step it looks at.
 */
function enqueue(s: AppState, lesson: Lesson): void {
  if (s.imported || !s.lesson) return;
  const step = lesson.steps[s.lesson.step - 1];
  if (!step) return;
  const onScreen = runOnScreen(lesson, s);
  const results = useLessonResults.getState().results[lesson.id] ?? {};
  const busy = new Set([...extras.map((x) => x.busy), main.busy].flatMap((j) => (j ? [keyOf(j)] : [])));
  const wanted: Job[] = [];
  for (const runId of stepRuns(lesson, step)) {
    for (const seed of lessonSeeds(lesson)) {
      if (onScreen?.id === runId && seed === s.config.seed) continue;
      if (results[runId]?.[seed] !== undefined) continue;
      const job = { lessonId: lesson.id, runId, seed };
      if (!busy.has(keyOf(job))) wanted.push(job);
    }
  }
  queue = wanted;
  // A seed worker still on a step left behind gives its core to this one.
  const runs = stepRuns(lesson, step);
  for (const slot of extras) {
    if (slot.busy && !slot.stopping && !(slot.busy.lessonId === lesson.id && runs.includes(slot.busy.runId))) {
      slot.stopping = true;
      void slot.session.call((t) => t.stopLessonSeeds()).catch(() => {});
    }
  }
}

/** The subscriptions of the watch, while anyone watches; and how many do. */
let watching: (() => void) | null = null;
let watchers = 0;
/** The watch taken before the page's first render, until the lesson panel's takes over. */
let early: (() => void) | null = null;

/** Follows the page: starts and stops the pool with the lesson, queues each step's seeds. */
export function watchSeedPool(): () => void {
  if (watchers++ === 0) watching = subscribe();
  // The panel is up: the watch it holds replaces the one taken before it rendered.
  const e = early;
  early = null;
  e?.();
  let released = false;
  return () => {
    if (released) return;
    released = true;
    if (--watchers > 0) return;
    watching?.();
    watching = null;
    stop();
  };
}

/**
 * Watches from before the page's first render (app/main.tsx): a lesson link's seeds start
 * training while the page is still being drawn, not once the lesson panel is mounted.
 */
export function watchSeedPoolEarly(): void {
  if (!early && watchers === 0) early = watchSeedPool();
}

function subscribe(): () => void {
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
  };
}
