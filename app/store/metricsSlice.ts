/**
 * Metric rows from the trainer, batched to about 10 store updates a second and capped, so React
 * and Recharts are not flooded. Rows from a run that was reset or reconfigured are dropped by epoch.
 */
import type { StateCreator } from 'zustand';
import type { MetricRow } from '../../workers/metrics';
import { ALARM_DOCS, detectAlarms, initialAlarmState, type AlarmKind, type AlarmState } from '../alarms';
import type { AppState } from '.';

/** The most rows the charts keep (older ones drop off the left). */
export const SERIES_CAP = 2000;
/** 100 ms: about 10 chart updates a second. */
export const FLUSH_MS = 100;

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
}

let pending: MetricRow[] = [];
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
  markers: [],
  metricsEpoch: 0,
  truncateAfter(iter) {
    get().flushMetrics();
    set((s) => ({ series: s.series.filter((r) => r.iter <= iter) }));
  },
  addMarker(m) {
    set((s) => ({ markers: [...s.markers, m] }));
  },
  appendMetrics(rows, epoch) {
    if (epoch !== get().metricsEpoch || rows.length === 0) return;
    pending.push(...rows);
    if (timer === null) timer = setTimeout(() => get().flushMetrics(), FLUSH_MS);
  },
  flushMetrics() {
    if (timer !== null) clearTimeout(timer);
    timer = null;
    if (pending.length === 0) return;
    const rows = pending;
    pending = [];
    const alarms = alarmMarkers(rows);
    set((s) => {
      const next = s.series.concat(rows);
      return {
        series: next.length > SERIES_CAP ? next.slice(next.length - SERIES_CAP) : next,
        ...(alarms.length > 0 ? { markers: [...s.markers, ...alarms] } : {}),
      };
    });
  },
  clearMetrics() {
    if (timer !== null) clearTimeout(timer);
    timer = null;
    pending = [];
    alarmState = initialAlarmState();
    set((s) => ({ series: [], markers: [], metricsEpoch: s.metricsEpoch + 1 }));
  },
  rescanAlarms() {
    alarmState = initialAlarmState();
    const alarms = alarmMarkers(get().series);
    set((s) => ({ markers: [...s.markers.filter((m) => !isAlarm(m)), ...alarms] }));
  },
});
