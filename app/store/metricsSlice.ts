/**
 * Metric rows from the trainer, batched to about 10 store updates a second (2 while a lesson's
 * seeds train beside the run). The charts draw the
 * last SERIES_CAP rows (`series`, React state); the whole run, which the exports write, is kept
 * outside React (`wholeRun()`): every iteration's scalars up to MAX_RUN_ROWS, histograms for the
 * rows the charts hold. Rows from a run that was reset or reconfigured are dropped by epoch.
 * Markers are bounded: none before the first charted row, at most MAX_MARKERS.
 */
import type { StateCreator } from 'zustand';
import type { MetricRow } from '../../workers/core/metrics';
import { MAX_RUN_ROWS } from '../../workers/meta';
import { ALARM_DOCS, detectAlarms, initialAlarmState, type AlarmKind, type AlarmState } from '../alarms';
import type { AppState } from '.';

/** The most rows the charts keep (older ones drop off the left). */
export const SERIES_CAP = 2000;
/** The most markers the charts hold (alarms fire every iteration in a long collapsed run). */
export const MAX_MARKERS = 300;
/** Rows the exports hold: as many as a run file may (an exported run imports back). */
export const WHOLE_RUN_CAP = MAX_RUN_ROWS;
/** 100 ms: about 10 chart updates a second. */
export const FLUSH_MS = 100;
/**
 * 500 ms while a lesson's other seeds train in workers beside the run on screen
 * (app/lessons/seedPool.ts): each chart update is main-thread work on the cores those seeds train
 * on, and the step's lines wait for them (docs/LESSONS.md "Ready time" measures it).
 */
export const FLUSH_BUSY_MS = 500;
let flushMs = FLUSH_MS;

/** Whether seeds are training beside the run on screen: the charts then update less often. */
export function setSeedsTraining(training: boolean): void {
  flushMs = training ? FLUSH_BUSY_MS : FLUSH_MS;
}

/** Run events: a device was lost, a NaN rolled back, a worker restarted, settings changed mid-run. */
export type RunEventKind = 'device-lost' | 'non-finite' | 'restart' | 'config';
export type AlarmMarkerKind = `alarm-${AlarmKind}`;

/** A mark on the charts' time axis: a run event, or an alarm (app/alarms.ts) with its value. */
export interface RunMarker {
  iter: number;
  kind: RunEventKind | AlarmMarkerKind;
  label: string;
  value?: number;
}

export function isAlarm(m: RunMarker): m is RunMarker & { kind: AlarmMarkerKind } {
  return m.kind.startsWith('alarm-');
}

export function alarmKindOf(m: RunMarker): AlarmKind | null {
  return isAlarm(m) ? (m.kind.slice('alarm-'.length) as AlarmKind) : null;
}

export interface MetricsSlice {
  series: MetricRow[];
  /** The iteration the run was first seen converged (app/alarms.ts), or null. */
  convergedAt: number | null;
  markers: RunMarker[];
  addMarker(m: RunMarker): void;
  /** Drops rows after `iter` (a roll-back: the run recomputes them). */
  truncateAfter(iter: number): void;
  /** Bumped on every clear; a callback created for an older epoch is ignored. */
  metricsEpoch: number;
  appendMetrics(rows: MetricRow[], epoch: number): void;
  flushMetrics(): void;
  clearMetrics(): void;
  /** Recomputes the alarm markers from the whole series (an imported run). */
  rescanAlarms(): void;
  /** Replaces the run with `rows` (an imported run): the charts get the last SERIES_CAP. */
  loadRows(rows: MetricRow[]): void;
}

let pending: MetricRow[] = [];
/** Every row of the run (up to WHOLE_RUN_CAP), oldest first; outside React state, so no render copies it. */
let whole: MetricRow[] = [];
/** Rows dropped from the front of `whole` by its cap. */
let wholeDropped = 0;
const NO_HIST: number[] = [];

/** The row with its histograms dropped (they are kept only for the rows the charts hold). */
function scalarsOnly(r: MetricRow): MetricRow {
  return r.adv_hist === NO_HIST ? r : { ...r, adv_hist: NO_HIST, adv_hist_edges: NO_HIST, ratio_hist: NO_HIST, ratio_hist_edges: NO_HIST, mismatch_hist: NO_HIST, mismatch_hist_edges: NO_HIST };
}

function appendWhole(rows: readonly MetricRow[]): void {
  for (const r of rows) whole.push(r);
  // Amortized: trim a chunk at a time, not one row per append.
  if (whole.length > WHOLE_RUN_CAP + 1000) {
    const cut = whole.length - WHOLE_RUN_CAP;
    whole = whole.slice(cut);
    wholeDropped += cut;
  }
  for (let i = whole.length - SERIES_CAP - rows.length; i < whole.length - SERIES_CAP; i++) if (i >= 0) whole[i] = scalarsOnly(whole[i]!);
}

/** What the exports hold: every kept row, and how many older ones the cap dropped. */
export interface WholeRun {
  rows: MetricRow[];
  dropped: number;
  /** Rows that still have their histograms (the last SERIES_CAP of a live run; all of an imported one). */
  withHistograms: number;
}

/** The whole run for the exports (a copy: the store keeps appending to its own). */
export function wholeRun(): WholeRun {
  const rows = whole.length > WHOLE_RUN_CAP ? whole.slice(whole.length - WHOLE_RUN_CAP) : whole.slice();
  return { rows, dropped: wholeDropped + (whole.length - rows.length), withHistograms: rows.filter((r) => r.adv_hist.length > 0).length };
}

/** Markers the charts can show: none before the first kept row, the newest MAX_MARKERS. */
export function boundMarkers(markers: RunMarker[], firstIter: number | undefined): RunMarker[] {
  const kept = firstIter === undefined ? markers : markers.filter((m) => m.iter >= firstIter);
  return kept.length > MAX_MARKERS ? kept.slice(kept.length - MAX_MARKERS) : kept;
}
let timer: ReturnType<typeof setTimeout> | null = null;
let alarmState: AlarmState = initialAlarmState();

function alarmMarkers(rows: readonly MetricRow[]): RunMarker[] {
  return detectAlarms(rows, alarmState).map((a) => ({
    iter: a.iter,
    kind: `alarm-${a.kind}` as const,
    label: ALARM_DOCS[a.kind].title,
    value: a.value,
  }));
}

export const createMetricsSlice: StateCreator<AppState, [], [], MetricsSlice> = (set, get) => ({
  series: [],
  convergedAt: null,
  markers: [],
  metricsEpoch: 0,
  truncateAfter(iter) {
    get().flushMetrics();
    whole = whole.filter((r) => r.iter <= iter);
    set((s) => ({ series: s.series.filter((r) => r.iter <= iter) }));
  },
  addMarker(m) {
    set((s) => ({ markers: boundMarkers([...s.markers, m], s.series[0]?.iter) }));
  },
  appendMetrics(rows, epoch) {
    if (epoch !== get().metricsEpoch || rows.length === 0) return;
    pending.push(...rows);
    if (timer === null) timer = setTimeout(() => get().flushMetrics(), flushMs);
  },
  flushMetrics() {
    if (timer !== null) clearTimeout(timer);
    timer = null;
    if (pending.length === 0) return;
    const rows = pending;
    pending = [];
    const alarms = alarmMarkers(rows);
    appendWhole(rows);
    set((s) => {
      const next = s.series.concat(rows);
      const series = next.length > SERIES_CAP ? next.slice(next.length - SERIES_CAP) : next;
      const trimmed = series[0] !== s.series[0];
      return {
        series,
        convergedAt: alarmState.convergedAt,
        ...(alarms.length > 0 || trimmed ? { markers: boundMarkers([...s.markers, ...alarms], series[0]?.iter) } : {}),
      };
    });
  },
  clearMetrics() {
    if (timer !== null) clearTimeout(timer);
    timer = null;
    pending = [];
    whole = [];
    wholeDropped = 0;
    alarmState = initialAlarmState();
    set((s) => ({ series: [], markers: [], convergedAt: null, metricsEpoch: s.metricsEpoch + 1 }));
  },
  rescanAlarms() {
    alarmState = initialAlarmState();
    const alarms = alarmMarkers(get().series);
    set((s) => ({ convergedAt: alarmState.convergedAt, markers: boundMarkers([...s.markers.filter((m) => !isAlarm(m)), ...alarms], s.series[0]?.iter) }));
  },
  loadRows(rows) {
    whole = rows.slice();
    wholeDropped = 0;
    set({ series: rows.length > SERIES_CAP ? rows.slice(rows.length - SERIES_CAP) : rows });
  },
});
