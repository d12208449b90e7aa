/** The Arena grid's numbers: mean and band over seeds, final success, crashes, cost, sorting and filtering. */
import { describe, expect, it } from 'vitest';
import { arenaWorkerCount, bandOf, crashText, emptyTrace, filterCells, finalSuccessOf, seedsText, sortCells, summarize, type SeedTrace } from '../../app/arena/arenaModel';

function trace(seed: number, success: number[], extra: Partial<SeedTrace> = {}): SeedTrace {
  const t = emptyTrace(seed);
  t.iters = success.map((_, i) => i + 1);
  t.success = success;
  t.diag = success.map(() => NaN);
  t.rollouts = success.map(() => 16);
  t.ms = success.map(() => 100);
  return { ...t, done: true, ...extra };
}

describe('bandOf', () => {
  it('is the mean, min and max over the seeds at each iteration, over the seeds that reached it', () => {
    const band = bandOf([trace(1, [0, 0.5, 1]), trace(2, [0.5, 1]), trace(3, [1, 0, 0.25])], (t) => t.success);
    expect(band.iters).toEqual([1, 2, 3]);
    expect(band.mean).toEqual([0.5, 0.5, 0.625]);
    expect(band.lo).toEqual([0, 0, 0.25]);
    expect(band.hi).toEqual([1, 1, 1]);
  });

  it('skips non-finite values and is empty for no data', () => {
    const band = bandOf([trace(1, [NaN, 0.2]), trace(2, [Infinity, 0.4])], (t) => t.success);
    expect(band.iters).toEqual([2]);
    expect(band.mean[0]).toBeCloseTo(0.3, 12);
    expect(bandOf([emptyTrace(1)], (t) => t.success)).toEqual({ iters: [], mean: [], lo: [], hi: [] });
  });
});

describe('summarize', () => {
  it('averages the last 5 iterations of each seed, then the seeds', () => {
    expect(finalSuccessOf(trace(1, [1, 1, 0, 0, 0, 0, 0.5]))).toBeCloseTo(0.1, 12);
    expect(finalSuccessOf(trace(1, [0.2, 0.4]))).toBeCloseTo(0.3, 12);
    expect(finalSuccessOf(emptyTrace(1))).toBeNull();
    const s = summarize('c', [trace(1, [0, 0, 0, 0, 0, 1]), trace(2, [1, 1, 1, 1, 1, 1])]);
    expect(s.finalSuccess).toBeCloseTo((0.2 + 1) / 2, 12);
  });

  it('counts crashed seeds and lists their iterations in order', () => {
    const s = summarize('c', [
      trace(1, [0.5, 0.1], { crash: { crashed: true, at: 40, why: 'success fell' } }),
      trace(2, [0.5, 0.5]),
      trace(3, [0.5, 0], { crash: { crashed: true, at: 12, why: 'entropy collapsed' } }),
      trace(4, [0.5, 0.5]),
    ]);
    expect(s.crashed).toBe(2);
    expect(s.crashAt).toEqual([12, 40]);
    expect(s.crashWhy).toBe('success fell');
    expect(crashText(s)).toBe('crashed on 2 of 4 seeds, at iterations 12, 40');
    expect(crashText(summarize('d', [trace(1, [1])]))).toBe('no crash on 1 seed');
  });

  it('says what has run: not yet, so far, or on the seeds done; never about seeds that have not', () => {
    const running = { ...trace(2, [0.5]), done: false };
    expect(crashText(summarize('e', [emptyTrace(1), emptyTrace(2)]))).toBe('not run yet');
    expect(seedsText(summarize('e', [emptyTrace(1), emptyTrace(2)]))).toBe('not run yet');
    expect(crashText(summarize('e', [running, emptyTrace(3)]))).toBe('no crash so far');
    expect(seedsText(summarize('e', [running, emptyTrace(3)]))).toBe('0 of 2 seeds done');
    const half = summarize('e', [trace(1, [1]), running]);
    expect(crashText(half)).toBe('no crash on the 1 seed done');
    expect(seedsText(half)).toBe('1 of 2 seeds done');
    expect(half.doneInOrder).toBe(1);
    expect(summarize('e', [running, trace(1, [1])]).doneInOrder).toBe(0);
  });

  it('gives the cost as rollouts per iteration and wall seconds per seed', () => {
    const a = trace(1, [0, 0], { rollouts: [16, 32], ms: [500, 1500] });
    const b = trace(2, [0, 0, 0], { rollouts: [16, 16, 16], ms: [1000, 1000, 1000] });
    const s = summarize('c', [a, b, emptyTrace(3)]);
    expect(s.rolloutsPerIter).toBeCloseTo(96 / 5, 12);
    expect(s.wallSeconds).toBeCloseTo((2 + 3) / 2, 12);
    expect(s.done).toBe(2);
    expect(s.seeds).toBe(3);
  });

  it('takes the diagnosis peak from the mean over seeds, and null when no seed reports it', () => {
    const s = summarize('c', [trace(1, [0, 0], { diag: [0.1, 0.6] }), trace(2, [0, 0], { diag: [0.3, 0.2] })]);
    expect(s.diagPeak).toBeCloseTo(0.4, 12);
    expect(summarize('d', [trace(1, [0, 0])]).diagPeak).toBeNull();
  });

  it('collects run errors and has no numbers before any row', () => {
    const s = summarize('c', [{ ...emptyTrace(1), error: 'seed 1: refused' }, emptyTrace(2)]);
    expect(s.errors).toEqual(['seed 1: refused']);
    expect(s.finalSuccess).toBeNull();
    expect(s.rolloutsPerIter).toBeNull();
    expect(s.wallSeconds).toBeNull();
  });
});

describe('sortCells and filterCells', () => {
  const good = summarize('good', [trace(1, [0.9, 0.9], { rollouts: [32, 32] })]);
  const bad = summarize('bad', [trace(1, [0.2, 0.1], { crash: { crashed: true, at: 2, why: 'fell' } })]);
  const mid = summarize('mid', [trace(1, [0.5, 0.5], { rollouts: [8, 8] }), trace(2, [0.5, 0.5], { rollouts: [8, 8], crash: { crashed: true, at: 9, why: 'fell' } })]);
  const empty = summarize('empty', [emptyTrace(1)]);
  const all = [good, bad, mid, empty];
  const ids = (xs: { cellId: string }[]) => xs.map((x) => x.cellId);

  it('sorts by final success (best first), a cell without numbers last', () => {
    expect(ids(sortCells(all, 'success'))).toEqual(['good', 'mid', 'bad', 'empty']);
  });

  it('sorts by the share of seeds crashed, then the earliest crash', () => {
    expect(ids(sortCells(all, 'crashes'))).toEqual(['bad', 'mid', 'good', 'empty']);
  });

  it('sorts by rollouts per iteration (cheapest first), and keeps the grid order for grid and ties', () => {
    expect(ids(sortCells(all, 'cost'))).toEqual(['mid', 'bad', 'good', 'empty']);
    expect(ids(sortCells(all, 'grid'))).toEqual(['good', 'bad', 'mid', 'empty']);
    expect(all.map((s) => s.cellId)).toEqual(['good', 'bad', 'mid', 'empty']);
  });

  it('filters to the crashed cells or to the others', () => {
    expect(ids(filterCells(all, 'crashed'))).toEqual(['bad', 'mid']);
    expect(ids(filterCells(all, 'stable'))).toEqual(['good', 'empty']);
    expect(ids(filterCells(all, 'all'))).toEqual(ids(all));
  });
});

describe('arenaWorkerCount', () => {
  it('leaves one core to the page and runs at most 4 workers', () => {
    expect(arenaWorkerCount(undefined)).toBe(1);
    expect(arenaWorkerCount(1)).toBe(1);
    expect(arenaWorkerCount(2)).toBe(1);
    expect(arenaWorkerCount(4)).toBe(3);
    expect(arenaWorkerCount(32)).toBe(4);
    expect(arenaWorkerCount(NaN)).toBe(1);
  });
});
