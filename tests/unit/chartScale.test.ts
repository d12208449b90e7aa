/**
 * The SVG charts' axis arithmetic (app/charts/scale.ts): nice domains and ticks, paths broken at
 * missing values, step paths for histograms, and the row under the pointer.
 */
import { describe, expect, it } from 'vitest';
import { extent, indexAt, linear, linePath, lonePoints, niceScale, niceStep, stepPath, ticksWithin } from '../../app/charts/scale';

describe('chart scales', () => {
  it('nice steps are 1, 2, 2.5 or 5 times a power of ten', () => {
    expect(niceStep(1, 4)).toBe(0.25);
    expect(niceStep(29, 6)).toBe(5);
    expect(niceStep(0.9, 4)).toBe(0.25);
    expect(niceStep(44, 4)).toBe(20);
    expect(niceStep(0, 4)).toBe(1);
  });

  it('widens a domain to nice bounds; pads a constant one', () => {
    expect(niceScale(0, 1)).toEqual({ domain: [0, 1], ticks: [0, 0.25, 0.5, 0.75, 1] });
    expect(niceScale(-0.13, 0.16).domain).toEqual([-0.2, 0.2]);
    expect(niceScale(1, 1).domain).toEqual([0.8, 1.2]);
    expect(niceScale(0, 0).domain).toEqual([-1, 1]);
    expect(niceScale(0.005, 0.005).ticks).toEqual([0.004, 0.0045, 0.005, 0.0055, 0.006]);
    expect(niceScale(0, 44, 5, true)).toEqual({ domain: [0, 60], ticks: [0, 20, 40, 60] });
    expect(niceScale(0, 2, 5, true).ticks).toEqual([0, 1, 2]);
    expect(niceScale(NaN, NaN).domain).toEqual([0, 1]);
  });

  it('ticks inside a kept domain', () => {
    expect(ticksWithin(1, 30, 7, true)).toEqual([5, 10, 15, 20, 25, 30]);
    expect(ticksWithin(0, 1, 3, true)).toEqual([0, 1]);
    expect(ticksWithin(3, 3, 5)).toEqual([3]);
    expect(ticksWithin(-0.5, 0.5, 5)).toEqual([-0.5, -0.25, 0, 0.25, 0.5]);
  });

  it('extent skips non-finite values', () => {
    expect(extent([{ a: 1, b: NaN }, { a: -2, b: 5 }, { a: Infinity }], ['a', 'b'])).toEqual([-2, 5]);
    expect(extent([], ['a'])).toEqual([NaN, NaN]);
  });

  it('paths: a polyline broken at missing values, a step line held to the next x', () => {
    const sx = linear(0, 10, 0, 100);
    const sy = linear(0, 1, 50, 0);
    const rows = [{ i: 0, v: 0 }, { i: 5, v: 1 }, { i: 6, v: NaN }, { i: 10, v: 0.5 }];
    expect(linePath(rows, 'i', 'v', sx, sy)).toBe('M0,50L50,0M100,25');
    expect(linePath(rows.slice(0, 2), 'i', 'v', sx, sy)).toMatch(/^M[^L]+L[^L]+$/);
    // The polyline cannot show the last point (no finite neighbour) nor a run of one row: dots.
    expect(lonePoints(rows, 'i', 'v', sx, sy)).toEqual([[100, 25]]);
    expect(lonePoints(rows.slice(0, 1), 'i', 'v', sx, sy)).toEqual([[0, 50]]);
    expect(lonePoints(rows.slice(0, 2), 'i', 'v', sx, sy)).toEqual([]);
    expect(lonePoints([{ i: 0, v: NaN }, { i: 1 }], 'i', 'v', sx, sy)).toEqual([]);
    expect(lonePoints([], 'i', 'v', sx, sy)).toEqual([]);
    expect(stepPath([{ x: 0, c: 0 }, { x: 5, c: 1 }, { x: 10, c: 1 }], 'x', 'c', sx, sy)).toBe('M0,50L50,50L50,0L100,0L100,0');
    expect(linear(3, 3, 0, 10)(3)).toBe(5);
  });

  it('the row under the pointer: the nearest, or the last at or before it', () => {
    const rows = [{ x: 1 }, { x: 2 }, { x: 4 }, { x: 8 }];
    expect(indexAt(rows, 'x', 0)).toBe(0);
    expect(indexAt(rows, 'x', 2.9)).toBe(1);
    expect(indexAt(rows, 'x', 3.1)).toBe(2);
    expect(indexAt(rows, 'x', 99)).toBe(3);
    expect(indexAt(rows, 'x', 3.9, true)).toBe(1);
    expect(indexAt([], 'x', 1)).toBe(-1);
  });
});
