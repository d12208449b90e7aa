/**
 * The charts' store updates: metric rows are batched to one update every FLUSH_MS, and every
 * FLUSH_BUSY_MS while a lesson's seeds train beside the run on screen (their workers share the
 * cores with the page's main thread, and the step's lines wait for them).
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createStore } from 'zustand/vanilla';
import { createMetricsSlice, FLUSH_BUSY_MS, FLUSH_MS, setSeedsTraining, type MetricsSlice } from '../../app/store/metricsSlice';
import type { AppState } from '../../app/store';
import type { MetricRow } from '../../workers/core/metrics';

const row = (iter: number) => ({ iter, reward_mean: 0.5, success_rate: 0.5 }) as unknown as MetricRow;

function store() {
  return createStore<MetricsSlice>()((set, get, api) => createMetricsSlice(set as never, get as () => AppState, api as never));
}

describe('chart updates while seeds train', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => {
    setSeedsTraining(false);
    vi.useRealTimers();
  });

  it(`rows reach the charts after ${FLUSH_MS} ms, batched`, () => {
    const s = store();
    s.getState().appendMetrics([row(1)], 0);
    s.getState().appendMetrics([row(2)], 0);
    vi.advanceTimersByTime(FLUSH_MS - 1);
    expect(s.getState().series).toHaveLength(0);
    vi.advanceTimersByTime(1);
    expect(s.getState().series.map((r) => r.iter)).toEqual([1, 2]);
  });

  it(`after ${FLUSH_BUSY_MS} ms while seeds train, and at the usual pace once they stop`, () => {
    const s = store();
    setSeedsTraining(true);
    s.getState().appendMetrics([row(1)], 0);
    vi.advanceTimersByTime(FLUSH_MS);
    expect(s.getState().series).toHaveLength(0);
    s.getState().appendMetrics([row(2)], 0);
    vi.advanceTimersByTime(FLUSH_BUSY_MS - FLUSH_MS);
    expect(s.getState().series.map((r) => r.iter)).toEqual([1, 2]);
    setSeedsTraining(false);
    s.getState().appendMetrics([row(3)], 0);
    vi.advanceTimersByTime(FLUSH_MS);
    expect(s.getState().series.map((r) => r.iter)).toEqual([1, 2, 3]);
  });

  it('a flush asked for (a pause, an export) does not wait for the timer', () => {
    const s = store();
    setSeedsTraining(true);
    s.getState().appendMetrics([row(1)], 0);
    s.getState().flushMetrics();
    expect(s.getState().series).toHaveLength(1);
  });
});
