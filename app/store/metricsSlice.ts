/**
 * Metric rows from the trainer, batched to about 10 store updates a second and capped, so React
 * and Recharts are not flooded. Rows from a run that was reset or reconfigured are dropped by epoch.
 */
import type { StateCreator } from 'zustand';
import type { MetricRow } from '../../workers/metrics';
import type { AppState } from '.';

/** The most rows the charts keep (older ones drop off the left). */
export const SERIES_CAP = 2000;
/** 100 ms: about 10 chart updates a second. */
export const FLUSH_MS = 100;

/** A mark on the charts' time axis: where a device was lost, a NaN rolled back, a worker restarted. */
export interface RunMarker {
  iter: number;
  kind: 'device-lost' | 'non-finite' | 'restart';
  label: string;
}

export interface MetricsSlice {
  series: MetricRow[];
  markers: RunMarker[];
  addMarker(m: RunMarker): void;
  /** Bumped on every clear; a callback created for an older epoch is ignored. */
  metricsEpoch: number;
  appendMetrics(rows: MetricRow[], epoch: number): void;
  flushMetrics(): void;
  clearMetrics(): void;
}

let pending: MetricRow[] = [];
let timer: ReturnType<typeof setTimeout> | null = null;

export const createMetricsSlice: StateCreator<AppState, [], [], MetricsSlice> = (set, get) => ({
  series: [],
  markers: [],
  metricsEpoch: 0,
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
    set((s) => {
      const next = s.series.concat(rows);
      return { series: next.length > SERIES_CAP ? next.slice(next.length - SERIES_CAP) : next };
    });
  },
  clearMetrics() {
    if (timer !== null) clearTimeout(timer);
    timer = null;
    pending = [];
    set((s) => ({ series: [], markers: [], metricsEpoch: s.metricsEpoch + 1 }));
  },
});
