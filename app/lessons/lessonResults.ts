/**
 * What the lesson runs measured in this browser: each lesson run's metric rows and last batch, per
 * seed. The seed on screen is captured when the playground holds exactly that run (same config,
 * iterations 1..iters, no live settings change in between); the lesson's other seeds are trained
 * headless by the seed pool (./seedPool.ts). The panel checks each claim on the mean over the
 * lesson's seeds, as the tests do (workers/content/lessons.ts checkClaimOnSeeds).
 */
import { useEffect } from 'react';
import { create } from 'zustand';
import { encodeShareLink, lessonById, lessonRunConfig, lessonSeeds, needsDump, type Lesson, type LessonRun, type RunResult, type SeedResults, type Stat } from '../../workers/meta';
import type { RunConfig } from '../../workers/core/config';
import { currentBatch, useAppStore, type AppState } from '../store';

/** By lesson id, then run id, then seed. */
export type LessonResults = Record<string, Record<string, Record<number, RunResult>>>;

interface LessonResultsState {
  results: LessonResults;
  record(lessonId: string, runId: string, seed: number, r: RunResult): void;
  clear(): void;
}

export const useLessonResults = create<LessonResultsState>()((set) => ({
  results: {},
  record: (lessonId, runId, seed, r) =>
    set((s) => {
      const lesson = s.results[lessonId] ?? {};
      return { results: { ...s.results, [lessonId]: { ...lesson, [runId]: { ...lesson[runId], [seed]: r } } } };
    }),
  clear: () => set({ results: {} }),
}));

/** The runs a statistic pair reads. */
export function runsOf(stats: ReadonlyArray<Stat | number>): string[] {
  return [...new Set(stats.flatMap((x) => (typeof x === 'object' ? [x.run] : [])))];
}

/** Whether `runId` has a result on every seed of the lesson. */
export function allSeedsIn(lesson: Lesson, byRun: Record<string, Record<number, RunResult>> | undefined, runId: string): boolean {
  const got = byRun?.[runId];
  return !!got && lessonSeeds(lesson).every((seed) => got[seed] !== undefined);
}

/** The results as checkClaimOnSeeds takes them: one record of runs per lesson seed, in order. */
export function bySeed(lesson: Lesson, byRun: Record<string, Record<number, RunResult>> | undefined): SeedResults[] {
  return lessonSeeds(lesson).map((seed) => Object.fromEntries(Object.entries(byRun ?? {}).map(([run, seeds]) => [run, seeds[seed]])));
}

/** The config link of every run of a lesson, to recognise the run on screen. */
const runKeys = new Map<string, Map<string, LessonRun>>();
function runsByConfig(lesson: Lesson): Map<string, LessonRun> {
  let m = runKeys.get(lesson.id);
  if (!m) {
    m = new Map(lesson.runs.map((r) => [encodeShareLink(lessonRunConfig(r)), r]));
    runKeys.set(lesson.id, m);
  }
  return m;
}

/**
 * A config's link, once per config object: the page's config is replaced, never edited, and the
 * lesson panel, the seed pool and the capture ask for the run on screen on every store update
 * (each training iteration), which encoded the same config again each time.
 */
const configLinks = new WeakMap<RunConfig, string>();
function configLink(config: RunConfig): string {
  let link = configLinks.get(config);
  if (link === undefined) {
    link = encodeShareLink(config);
    configLinks.set(config, link);
  }
  return link;
}

/** The lesson run the playground holds now, or null. */
export function runOnScreen(lesson: Lesson, s: AppState): LessonRun | null {
  return runsByConfig(lesson).get(configLink(s.config)) ?? null;
}


/**
 * Watches the run on screen and records it, at its seed, when it reaches its lesson run's iteration
 * count. Only rows built from the config on screen count: after Next or Previous the page holds the
 * new step's config at once, while its rows are still the previous step's run until the worker has
 * rebuilt (`seriesConfig`), and those rows must never be taken for the new step's.
 */
export function watchLessonCapture(): () => void {
  let asked = -1;
  /** The metrics epoch each lesson run was recorded from (a reset or reload starts a new one). */
  const recorded = new Map<string, number>();
  const check = (s: AppState) => {
    if (!s.lesson || s.phase !== 'idle' || s.imported || !s.configured || s.seriesConfig !== s.config) return;
    const lesson = lessonById(s.lesson.id);
    if (!lesson) return;
    const run = runOnScreen(lesson, s);
    if (!run) return;
    const rows = s.series.filter((r) => r.iter <= run.iters);
    if (rows.length !== run.iters || rows[rows.length - 1]?.iter !== run.iters) return;
    // A live settings change or a restart mixes two runs: not this lesson run.
    if (s.markers.some((m) => (m.kind === 'config' || m.kind === 'restart') && m.iter <= run.iters)) return;
    const seed = s.config.seed;
    const have = useLessonResults.getState().results[lesson.id]?.[run.id]?.[seed];
    const last = s.series[s.series.length - 1];
    const wantDump = needsDump(lesson, run.id) && last?.iter === run.iters;
    const batch = wantDump ? currentBatch(s) : null;
    if (wantDump && !batch) {
      if (asked !== s.metricsEpoch) {
        asked = s.metricsEpoch;
        void s.loadBatch();
      }
      return;
    }
    const key = `${lesson.id}/${run.id}/${seed}`;
    if (have && recorded.get(key) === s.metricsEpoch && (have.dump !== null || batch === null)) return;
    recorded.set(key, s.metricsEpoch);
    useLessonResults.getState().record(lesson.id, run.id, seed, { rows, dump: batch });
  };
  check(useAppStore.getState());
  return useAppStore.subscribe(check);
}

/** The capture while a component (the lesson panel) is mounted. */
export function useLessonCapture(): void {
  useEffect(() => watchLessonCapture(), []);
}
