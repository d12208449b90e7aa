/**
 * The Arena store without workers: a run's rows become the grid's trace (with the crash verdict, and
 * a non-finite roll-back counted as a crash), a new arena clears the grid, and a link's arena opens
 * the Arena tab.
 */
import { describe, expect, it } from 'vitest';
import { parseArenaSpec } from '../../workers/content/arena/dimensions';
import { SCALAR_METRICS, type MetricRow } from '../../workers/core/metrics';
import { arenaSeedsDone, DIAG_METRIC, traceOf, useArenaStore } from '../../app/arena/arenaStore';
import { summarize, emptyTrace } from '../../app/arena/arenaModel';
import { pairStep, useCompareStore, type CompareRun } from '../../app/compare/compareStore';
import { defaultConfig } from '../../workers/core/config';

function row(iter: number, success: number, extra: Partial<Record<string, number>> = {}): MetricRow {
  const r = Object.fromEntries(SCALAR_METRICS.map((k) => [k, 0])) as Record<string, number>;
  Object.assign(r, { iter, success_rate: success, rollouts: 16, ms: 250, entropy: 1 }, extra);
  return { ...(r as Record<(typeof SCALAR_METRICS)[number], number>), adv_hist: [], adv_hist_edges: [], ratio_hist: [], ratio_hist_edges: [] };
}

describe('traceOf', () => {
  it('keeps success, the diagnosis, rollouts and wall time per iteration', () => {
    const t = traceOf(3, { rows: [row(1, 0.25, { [DIAG_METRIC]: 0.1 }), row(2, 0.5, { [DIAG_METRIC]: 0.3 })], nonFinite: null, error: null, done: true });
    expect(t.seed).toBe(3);
    expect(t.iters).toEqual([1, 2]);
    expect(t.success).toEqual([0.25, 0.5]);
    expect(t.diag).toEqual([0.1, 0.3]);
    expect(t.rollouts).toEqual([16, 16]);
    expect(t.ms).toEqual([250, 250]);
    expect(t.done).toBe(true);
    expect(t.crash.crashed).toBe(false);
  });

  it('dates a fall of success from detectCrash', () => {
    const success = [...Array(10).fill(0.8), ...Array(10).fill(0)];
    const t = traceOf(1, { rows: success.map((s, i) => row(i + 1, s)), nonFinite: null, error: null, done: true });
    expect(t.crash.crashed).toBe(true);
    expect(t.crash.at).toBeGreaterThan(10);
    expect(t.crash.at).toBeLessThanOrEqual(15);
  });

  it('counts a non-finite roll-back as a crash at its iteration', () => {
    const t = traceOf(1, { rows: [row(1, 0.5)], nonFinite: { iter: 2, message: 'NaN in the loss' }, error: null, done: false });
    expect(t.crash).toEqual({ crashed: true, at: 2, why: 'the update at iteration 2 went non-finite' });
  });
});

describe('useArenaStore', () => {
  const small = parseArenaSpec('task=search;iters=15;seeds=1-2;clip=token,cispo;filter=none;advantage=trajectory;aggregation=seq-mean-token-mean;set.batch=4;set.group=4');

  it('starts on 4 seeds, and a new arena gives its cells with empty summaries', () => {
    expect(useArenaStore.getState().spec.seeds).toEqual([1, 2, 3, 4]);
    useArenaStore.getState().setSpec(small);
    const s = useArenaStore.getState();
    expect(s.cells.map((c) => c.label)).toEqual(['clip=token', 'clip=cispo']);
    expect(s.specError).toBeNull();
    expect(Object.keys(s.summaries).sort()).toEqual(s.cells.map((c) => c.id).sort());
    for (const sum of Object.values(s.summaries)) {
      expect(sum.seeds).toBe(2);
      expect(sum.finalSuccess).toBeNull();
    }
    expect(s.progress).toEqual({ iters: 0, itersTotal: 2 * 2 * 15, runsDone: 0, runsTotal: 4 });
  });

  it('the same arena again (a link that changed only the config) leaves a running arena running', () => {
    useArenaStore.getState().setSpec(small);
    useArenaStore.setState({ phase: 'running' });
    useArenaStore.getState().setSpec(parseArenaSpec('task=search;iters=15;seeds=1-2;clip=token,cispo;filter=none;advantage=trajectory;aggregation=seq-mean-token-mean;set.batch=4;set.group=4'));
    expect(useArenaStore.getState().phase).toBe('running');
    useArenaStore.getState().stop();
    expect(useArenaStore.getState().phase).toBe('idle');
  });

  it('opens the Arena tab on a link\'s arena', () => {
    useCompareStore.getState().setTab('train');
    useArenaStore.getState().restore({ ...small, iters: 20 });
    expect(useCompareStore.getState().tab).toBe('arena');
    expect(useArenaStore.getState().spec.iters).toBe(20);
    expect(useArenaStore.getState().progress.itersTotal).toBe(2 * 2 * 20);
  });
});

describe('what a link carries of runs in progress', () => {
  const run = (phase: CompareRun['phase'], iters: number): CompareRun => ({ config: defaultConfig(), series: Array.from({ length: iters }, (_, i) => row(i + 1, 0)), phase, backendInfo: null, error: null });

  it('Compare: the iteration a "run to" takes both runs to, from the start; else where both paused', () => {
    expect(pairStep({ a: run('idle', 0), b: run('idle', 0), runUntil: null })).toBeUndefined();
    // A link's run to 30 keeps step 30 in the address while the runs are built and train.
    expect(pairStep({ a: run('configuring', 0), b: run('idle', 0), runUntil: 30 })).toBe(30);
    expect(pairStep({ a: run('running', 12), b: run('running', 9), runUntil: 30 })).toBe(30);
    expect(pairStep({ a: run('idle', 30), b: run('idle', 30), runUntil: 30 })).toBe(30);
    // Started without a target and paused: where both are.
    expect(pairStep({ a: run('idle', 14), b: run('idle', 12), runUntil: null })).toBe(12);
    expect(pairStep({ a: run('running', 14), b: run('idle', 12), runUntil: null })).toBeUndefined();
  });

  it('Arena: the seeds a run of the first k is training, from the start; else the seeds every cell finished in order', () => {
    const cells = [{ id: 'x' }, { id: 'y' }] as Parameters<typeof arenaSeedsDone>[0]['cells'];
    const done = (k: number) => { const t = [emptyTrace(1), emptyTrace(2)]; for (let i = 0; i < k; i++) t[i]!.done = true; return t; };
    const summaries = { x: summarize('x', done(2)), y: summarize('y', done(1)) };
    expect(arenaSeedsDone({ cells, summaries, phase: 'idle', runSeeds: null })).toBe(1);
    expect(arenaSeedsDone({ cells, summaries: { x: summarize('x', done(0)), y: summarize('y', done(0)) }, phase: 'running', runSeeds: 1 })).toBe(1);
  });
});
