/**
 * Which library draws each view's charts (app/charts/engine.tsx) and the queue that gives each
 * chart's first drawing a task of its own (app/charts/drawQueue.ts).
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { chartEngineFor, chartEngineFrom, VIEW_ENGINE } from '../../app/charts/engine';
import { queueDraw } from '../../app/charts/drawQueue';

describe('chart engine', () => {
  it('an address forces one engine on every view, or on named views; anything else leaves the views their own', () => {
    const none = { all: null, views: {} };
    expect(chartEngineFrom('?charts=recharts')).toEqual({ all: 'recharts', views: {} });
    expect(chartEngineFrom('?x=1&charts=svg')).toEqual({ all: 'svg', views: {} });
    expect(chartEngineFrom('')).toEqual(none);
    expect(chartEngineFrom('?charts=d3')).toEqual(none);
    expect(chartEngineFrom('?charts=lesson:recharts')).toEqual({ all: null, views: { lesson: 'recharts' } });
    expect(chartEngineFrom('?charts=svg,lesson:recharts,nosuch:svg,live:d3')).toEqual({ all: 'svg', views: { lesson: 'recharts' } });
    for (const view of ['live', 'compare', 'lesson'] as const) {
      expect(chartEngineFor(view, chartEngineFrom('?charts=recharts'))).toBe('recharts');
      expect(chartEngineFor(view, chartEngineFrom('?charts=svg'))).toBe('svg');
      expect(chartEngineFor(view, none)).toBe(VIEW_ENGINE[view]);
    }
    // A named view wins over the engine for all; the other views keep the one for all.
    const lessonOnly = chartEngineFrom('?charts=svg,lesson:recharts');
    expect(chartEngineFor('lesson', lessonOnly)).toBe('recharts');
    expect(chartEngineFor('live', lessonOnly)).toBe('svg');
    expect(chartEngineFor('compare', chartEngineFrom('?charts=recharts,compare:svg'))).toBe('svg');
  });

  it('every view stays on the SVG chart (Recharts missed the long-task bar on each: BENCHMARKS.md)', () => {
    expect(VIEW_ENGINE).toEqual({ live: 'svg', compare: 'svg', lesson: 'svg' });
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
