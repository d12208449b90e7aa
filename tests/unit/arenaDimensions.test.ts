/** The arena's dimensions, presets, cells and text form (workers/content/arena/dimensions.ts, docs/ARENA.md). */
import { describe, expect, it } from 'vitest';
import { ARENA_DIMENSIONS, ARENA_PRESETS, arenaCells, arenaSpecToText, cellConfig, parseArenaSpec, type ArenaSpec } from '../../workers/content/arena/dimensions';
import { resolvePlan } from '../../workers/core/plan';

const spec = (over: Partial<ArenaSpec> = {}): ArenaSpec => ({
  task: 'search',
  set: { epochs: '2' },
  levels: { clip: ['token', 'cispo'], filter: ['none', 'dynamic'], advantage: ['trajectory'], aggregation: ['token-mean'] },
  seeds: [1, 2],
  iters: 3,
  ...over,
});

describe('arena dimensions', () => {
  it('every level of every dimension is a valid config on its own, and reaches the stage it names', () => {
    for (const d of ARENA_DIMENSIONS) {
      for (const l of d.levels) {
        const one = spec({ levels: { clip: ['token'], filter: ['none'], advantage: ['trajectory'], aggregation: ['seq-mean-token-mean'], [d.id]: [l.id] }, set: {} });
        const { cells, skipped } = arenaCells(one);
        expect(skipped, `${d.id}=${l.id}`).toEqual([]);
        const plan = resolvePlan(cellConfig(one, cells[0]!, 1));
        if (d.id === 'clip') expect(plan.ratio.mode).toBe({ token: 'token', cispo: 'cispo', sapo: 'sapo', sequence: 'sequence' }[l.id]);
        if (d.id === 'filter') expect(plan.dynamicSampling !== null).toBe(l.id === 'dynamic');
        if (d.id === 'advantage') expect([plan.advantage.estimator, plan.critic !== null]).toEqual({ trajectory: ['group', false], step: ['gigpo', false], token: ['group', true] }[l.id]);
        if (d.id === 'aggregation') expect(plan.lossAgg).toBe(l.id);
      }
    }
  });
  it('cells are the product, methods united across levels, the spec set under them', () => {
    const { cells, skipped } = arenaCells(spec());
    expect(skipped).toEqual([]);
    expect(cells.map((c) => c.id)).toEqual(['token.none.trajectory.token-mean', 'token.dynamic.trajectory.token-mean', 'cispo.none.trajectory.token-mean', 'cispo.dynamic.trajectory.token-mean']);
    expect(cells[3]!.label).toBe('clip=cispo filter=dynamic');
    const cfg = cellConfig(spec(), cells[3]!, 7);
    expect([cfg.methods, cfg.epochs, cfg.seed, cfg.lossAgg]).toEqual([['cispo', 'dynfilter', 'grpo'], 2, 7, 'token-mean']);
  });
  it('skips combinations the config refuses or overrides, with its reason', () => {
    const { cells, skipped } = arenaCells(spec({ levels: { clip: ['token', 'sapo', 'sequence'], filter: ['none'], advantage: ['trajectory'], aggregation: ['token-mean', 'seq-mean-token-mean'] } }));
    expect(cells.map((c) => c.id)).toEqual(['token.none.trajectory.token-mean', 'token.none.trajectory.seq-mean-token-mean', 'sapo.none.trajectory.seq-mean-token-mean', 'sequence.none.trajectory.seq-mean-token-mean']);
    expect(skipped).toEqual([
      { label: 'clip=sapo aggregation=token-mean', why: expect.stringMatching(/^lossAgg: the active methods \(sapo, grpo\) use seq-mean-token-mean/) },
      { label: 'clip=sequence aggregation=token-mean', why: expect.stringMatching(/^lossAgg: .*gspo.* use seq-mean-token-mean/) },
    ]);
    // A method in the spec's set that conflicts with a level: the config's own error.
    const dapo = arenaCells(spec({ set: { methods: 'dapo' }, levels: { clip: ['token', 'cispo'], filter: ['none'], advantage: ['trajectory'], aggregation: ['token-mean'] } }));
    expect(dapo.cells.map((c) => c.levels.clip)).toEqual(['token']);
    expect(dapo.skipped[0]!.why).toMatch(/(DAPO conflicts with CISPO|CISPO conflicts with DAPO): both set the importance ratio and its clip/);
  });
  it('every preset is valid, has cells, and round-trips through its text', () => {
    for (const p of ARENA_PRESETS) {
      const { cells } = arenaCells(p.spec);
      expect(cells.length, p.id).toBeGreaterThan(1);
      expect(parseArenaSpec(arenaSpecToText(p.spec)), p.id).toEqual(p.spec);
    }
    const clip = ARENA_PRESETS.find((p) => p.id === 'clipping')!;
    expect(arenaCells(clip.spec).cells.map((c) => c.levels.clip)).toEqual(['token', 'cispo', 'sapo', 'sequence']);
    expect(clip.spec.seeds.length).toBeGreaterThanOrEqual(8);
  });
  it('the text form: seeds as ranges, left-out dimensions at their first level', () => {
    expect(arenaSpecToText(spec({ seeds: [1, 2, 3, 5] }))).toBe('task=search;iters=3;seeds=1-3,5;clip=token,cispo;filter=none,dynamic;advantage=trajectory;aggregation=token-mean;set.epochs=2');
    expect(parseArenaSpec('task=tools;clip=sapo;set.env.toolSteps=2')).toEqual({
      task: 'tools', iters: 60, seeds: [1], set: { 'env.toolSteps': '2' },
      levels: { clip: ['sapo'], filter: ['none'], advantage: ['trajectory'], aggregation: ['token-mean'] },
    });
  });
  it('bad input names what is wrong', () => {
    expect(() => parseArenaSpec('clip=token,bogus')).toThrow(/unknown clip level "bogus"; expected one of token, cispo, sapo, sequence/);
    expect(() => parseArenaSpec('clipping=token')).toThrow(/unknown key "clipping"/);
    expect(() => parseArenaSpec('task=chess')).toThrow(/task: expected one of/);
    expect(() => parseArenaSpec('seeds=3-1')).toThrow(/seeds: bad range "3-1"/);
    expect(() => parseArenaSpec('iters=ten')).toThrow(/iters: expected a whole number/);
    expect(() => parseArenaSpec('iters=0')).toThrow(/iters/);
    expect(() => parseArenaSpec('clip=token;clip=cispo')).toThrow(/clip is given twice/);
    expect(() => parseArenaSpec('set.epochs=99')).toThrow(/set: epochs: expected an integer in \[1, 16\]/);
    expect(() => parseArenaSpec('set.bogus=1')).toThrow(/set: bogus: unknown key/);
    expect(() => parseArenaSpec('set.lossAgg=token-mean')).toThrow(/lossAgg is the aggregation dimension's/);
    expect(() => parseArenaSpec('nothing')).toThrow(/"nothing": expected key=value/);
    const bad = { ...arenaCells(spec()).cells[0]!, set: { methods: 'grpo', lossAgg: 'bogus' } };
    expect(() => cellConfig(spec(), bad, 1)).toThrow(/arena cell clip=token filter=none: lossAgg: expected one of/);
  });
});
