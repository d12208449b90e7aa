/**
 * Which library draws each view's charts (app/charts/engine.tsx) and the queue that gives each
 * chart's first drawing a task of its own (app/charts/drawQueue.ts).
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { chartEngineFor, chartEngineFrom, VIEW_ENGINE } from '../../app/charts/engine';
import { queueDraw } from '../../app/charts/drawQueue';

describe('chart engine', () => {
  it('an address forces one engine on every view; anything else leaves the views their own', () => {
    expect(chartEngineFrom('?charts=recharts')).toBe('recharts');
    expect(chartEngineFrom('?x=1&charts=svg')).toBe('svg');
    expect(chartEngineFrom('')).toBeNull();
    expect(chartEngineFrom('?charts=d3')).toBeNull();
    expect(chartEngineFor('live', 'recharts')).toBe('recharts');
    expect(chartEngineFor('compare', 'svg')).toBe('svg');
    expect(chartEngineFor('live', null)).toBe(VIEW_ENGINE.live);
    expect(chartEngineFor('compare', null)).toBe(VIEW_ENGINE.compare);
  });

  it('both views stay on the SVG chart (Recharts missed the long-task bar in both: BENCHMARKS.md)', () => {
    expect(VIEW_ENGINE).toEqual({ live: 'svg', compare: 'svg' });
  });
});

describe('draw queue', () => {
  afterEach(() => vi.useRealTimers());

  it('runs one queued drawing per timer task, in order; a cancelled one never runs', () => {
    vi.useFakeTimers();
    const ran: string[] = [];
    queueDraw(() => ran.push('a'));
    const cancelB = queueDraw(() => ran.push('b'));
    queueDraw(() => ran.push('c'));
    expect(ran).toEqual([]);
    cancelB();
    vi.advanceTimersToNextTimer();
    expect(ran).toEqual(['a']);
    vi.advanceTimersToNextTimer();
    expect(ran).toEqual(['a', 'c']);
    vi.runAllTimers();
    expect(ran).toEqual(['a', 'c']);
    // The queue starts again after running empty.
    queueDraw(() => ran.push('d'));
    vi.runAllTimers();
    expect(ran).toEqual(['a', 'c', 'd']);
  });
});
