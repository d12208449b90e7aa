/**
 * The Inspector's long trajectories (app/panels/turnWindow.ts): which turns are drawn for a scroll
 * position, the heights the list is laid out by, and the trajectory header's advantages read in
 * one pass (app/panels/Inspector.tsx advantageParts) as the per-turn filters read them before.
 */
import { describe, expect, it } from 'vitest';
import { firstPast, tokenTablePx, TOKEN_ROW_PX, turnListRows, turnOffsets, turnsNear, WINDOW_FROM, WINDOW_ROWS, WINDOW_TURNS_FROM_ROWS } from '../../app/panels/turnWindow';
import { advantageParts, advantageText } from '../../app/panels/Inspector';
import { createRng } from '../../workers/core/rng';

describe('the turns drawn of a long trajectory', () => {
  it('firstPast finds the first item past a monotone test, count when none is', () => {
    for (let n = 0; n < 40; n++) for (let k = 0; k <= n; k++) expect(firstPast(n, (i) => i >= k)).toBe(k);
  });

  it('a turn not yet measured is as high as its line and its table; a measured one as measured', () => {
    const tokens = [1, 3, WINDOW_FROM, WINDOW_FROM + 1, 4096];
    expect(tokens.map(tokenTablePx)).toEqual([2, 4, WINDOW_FROM + 1, WINDOW_ROWS + 1, WINDOW_ROWS + 1].map((r) => r * TOKEN_ROW_PX));
    const measured = new Float64Array(tokens.length).fill(NaN);
    measured[1] = 500;
    const at = turnOffsets(tokens, measured, 30);
    expect([...at]).toEqual([0, 74, 574, 574 + 30 + (WINDOW_FROM + 1) * 22, 574 + 30 + (WINDOW_FROM + 1) * 22 + 580, 574 + 30 + (WINDOW_FROM + 1) * 22 + 1160]);
  });

  it('draws the turns that overlap the view widened by the margin, and none past the list', () => {
    // Ten turns of 100 px: [0, 100), [100, 200), ...
    const at = Float64Array.from({ length: 11 }, (_, i) => 100 * i);
    expect(turnsNear(at, 0, 250, 0)).toEqual([0, 2]);
    expect(turnsNear(at, 250, 450, 0)).toEqual([2, 4]);
    expect(turnsNear(at, 250, 450, 100)).toEqual([1, 5]);
    // A turn that ends where the view starts is out of it; one that starts where it ends too.
    expect(turnsNear(at, 300, 400, 0)).toEqual([3, 3]);
    expect(turnsNear(at, -5000, -100, 0)[1]).toBeLessThan(turnsNear(at, -5000, -100, 0)[0]);
    expect(turnsNear(at, 2000, 3000, 0)[1]).toBeLessThan(turnsNear(at, 2000, 3000, 0)[0]);
    expect(turnsNear(at, 950, 3000, 0)).toEqual([9, 9]);
  });

  it('windows a trajectory of 4,096 one-token turns, not one long turn (its table windows itself) nor a run’s usual few', () => {
    expect(turnListRows(Array(4096).fill(1))).toBeGreaterThan(WINDOW_TURNS_FROM_ROWS);
    expect(turnListRows([4096])).toBeLessThan(WINDOW_TURNS_FROM_ROWS);
    expect(turnListRows(Array(8).fill(6))).toBeLessThan(WINDOW_TURNS_FROM_ROWS);
    expect(turnListRows(Array(3).fill(WINDOW_FROM))).toBeGreaterThan(WINDOW_TURNS_FROM_ROWS);
  });
});

/** The header's advantages as advantageParts found them before it read the tokens in one pass. */
function partsByFilters(tokens: ReadonlyArray<{ turn: number; adv: number }>): ReturnType<typeof advantageParts> {
  if (tokens.length === 0) return { kind: 'none' };
  const same = (xs: readonly number[]) => xs.every((x) => Math.abs(x - xs[0]!) <= 1e-9);
  const all = tokens.map((k) => k.adv);
  if (same(all)) return { kind: 'one', values: [{ at: 0, adv: all[0]! }] };
  const turns = [...new Set(tokens.map((k) => k.turn))].sort((a, b) => a - b);
  const firsts = turns.map((turn) => tokens.findIndex((k) => k.turn === turn));
  if (turns.every((turn) => same(tokens.filter((k) => k.turn === turn).map((k) => k.adv)))) return { kind: 'turns', values: firsts.map((at) => ({ at, adv: tokens[at]!.adv })) };
  return { kind: 'range', min: Math.min(...all), max: Math.max(...all) };
}

describe('the trajectory header', () => {
  it('finds what the per-turn filters found: one advantage, one per turn, or a range (NaN, ties within 1e-9, turns out of order)', () => {
    const rng = createRng(7);
    const rand = rng.next;
    const kinds = new Set<string>();
    for (let c = 0; c < 2000; c++) {
      const turns = 1 + Math.floor(rand() * 5);
      const pool = [0.5, -0.25, 0.5 + 5e-10, 0, NaN, 1e-12];
      const perTurn = Array.from({ length: turns }, () => pool[Math.floor(rand() * pool.length)]!);
      const tokens = Array.from({ length: Math.floor(rand() * 9) }, () => {
        const turn = Math.floor(rand() * turns);
        return { turn, adv: rand() < 0.15 ? pool[Math.floor(rand() * pool.length)]! : perTurn[turn]! };
      });
      const want = partsByFilters(tokens);
      kinds.add(want.kind);
      expect(advantageParts(tokens), JSON.stringify(tokens)).toEqual(want);
    }
    expect([...kinds].sort()).toEqual(['none', 'one', 'range', 'turns']);
  });

  it('lists 16 per-turn values and counts the rest', () => {
    const tokens = Array.from({ length: 4096 }, (_, i) => ({ turn: i, adv: (i % 13) / 13 - 0.5 }));
    const text = advantageText(tokens);
    expect(text).toMatch(/^advantage per turn: -0\.500, -0\.423, [^]* and 4,080 more turns$/);
    expect(text.split(', ')).toHaveLength(16);
    expect(advantageText(tokens.slice(0, 16))).toBe(`advantage per turn: ${tokens.slice(0, 16).map((k) => k.adv.toFixed(3)).join(', ')}`);
  });
});
