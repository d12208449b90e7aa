/** The arena's dimensions, presets, cells and text form (workers/content/arena/dimensions.ts, docs/ARENA.md). */
import { describe, expect, it } from 'vitest';
import { ARENA_DIMENSIONS, ARENA_PRESETS, arenaCells, arenaSpecToText, cellConfig, parseArenaSpec, SAMPLER_MISMATCH_SET, type ArenaSpec } from '../../workers/content/arena/dimensions';
import { resolvePlan } from '../../workers/core/plan';

const spec = (over: Partial<ArenaSpec> = {}): ArenaSpec => ({
  task: 'search',
  set: { epochs: '2' },
  levels: { clip: ['token', 'cispo'], filter: ['none', 'dynamic'], advantage: ['trajectory'], aggregation: ['token-mean'], correction: ['none'] },
  seeds: [1, 2],
  iters: 3,
  ...over,
});

describe('arena dimensions', () => {
  it('every level of every dimension is a valid config on its own, and reaches the stage it names', () => {
    for (const d of ARENA_DIMENSIONS) {
      for (const l of d.levels) {
        const one = spec({ levels: { clip: ['token'], filter: ['none'], advantage: ['trajectory'], aggregation: ['seq-mean-token-mean'], correction: ['none'], [d.id]: [l.id] }, set: {} });
        const { cells, skipped } = arenaCells(one);
        expect(skipped, `${d.id}=${l.id}`).toEqual([]);
        const plan = resolvePlan(cellConfig(one, cells[0]!, 1));
        if (d.id === 'clip') expect(plan.ratio.mode).toBe({ token: 'token', cispo: 'cispo', sapo: 'sapo', sequence: 'sequence' }[l.id]);
        if (d.id === 'filter') expect(plan.dynamicSampling !== null).toBe(l.id === 'dynamic');
        if (d.id === 'advantage') expect([plan.advantage.estimator, plan.critic !== null]).toEqual({ trajectory: ['group', false], step: ['gigpo', false], token: ['group', true] }[l.id]);
        if (d.id === 'aggregation') expect(plan.lossAgg).toBe(l.id);
        if (d.id === 'correction') {
          const c = plan.rolloutCorrection;
          expect([c?.rolloutIs ?? null, c?.rolloutRs ?? null, c?.vetoThreshold ?? null], l.id).toEqual({
            none: [null, null, null], tis: ['token', null, null], seqis: ['sequence', null, null], tokenrs: [null, 'token_k1', null],
            seqrs: [null, 'seq_sum_k1', null], geors: [null, 'seq_mean_k1', null], veto: [null, null, 1e-4],
          }[l.id]);
        }
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
    const { cells, skipped } = arenaCells(spec({ levels: { clip: ['token', 'sapo', 'sequence'], filter: ['none'], advantage: ['trajectory'], aggregation: ['token-mean', 'seq-mean-token-mean'], correction: ['none'] } }));
    expect(cells.map((c) => c.id)).toEqual(['token.none.trajectory.token-mean', 'token.none.trajectory.seq-mean-token-mean', 'sapo.none.trajectory.seq-mean-token-mean', 'sequence.none.trajectory.seq-mean-token-mean']);
    expect(skipped).toEqual([
      { label: 'clip=sapo aggregation=token-mean', why: expect.stringMatching(/^lossAgg: the active methods \(sapo, grpo\) use seq-mean-token-mean/) },
      { label: 'clip=sequence aggregation=token-mean', why: expect.stringMatching(/^lossAgg: .*gspo.* use seq-mean-token-mean/) },
    ]);
    // A method in the spec's set that conflicts with a level: the config's own error.
    const dapo = arenaCells(spec({ set: { methods: 'dapo' }, levels: { clip: ['token', 'cispo'], filter: ['none'], advantage: ['trajectory'], aggregation: ['token-mean'], correction: ['none'] } }));
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
      levels: { clip: ['sapo'], filter: ['none'], advantage: ['trajectory'], aggregation: ['token-mean'], correction: ['none'] },
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

describe('the rollout-correction dimension', () => {
  const LEVELS = ['none', 'tis', 'seqis', 'tokenrs', 'seqrs', 'geors', 'veto'];
  it('has its seven levels, each a method of the same id but none, each named and explained', () => {
    const d = ARENA_DIMENSIONS.find((x) => x.id === 'correction')!;
    expect(d.levels.map((l) => l.id)).toEqual(LEVELS);
    for (const l of d.levels) {
      expect(l.set, l.id).toEqual(l.id === 'none' ? {} : { methods: l.id });
      expect(l.name.length, l.id).toBeGreaterThan(3);
      expect(l.doc.length, l.id).toBeGreaterThan(30);
    }
    // The page's checkboxes are found by name: none may be named as another dimension's level is.
    const others = ARENA_DIMENSIONS.filter((x) => x.id !== 'correction').flatMap((x) => x.levels.map((l) => l.name));
    for (const l of d.levels) expect(others).not.toContain(l.name);
  });

  it('every preset but sampler-mismatch is at none, and its cells keep their four-part ids and labels', () => {
    for (const p of ARENA_PRESETS.filter((x) => x.id !== 'sampler-mismatch')) {
      expect(p.spec.levels.correction, p.id).toEqual(['none']);
      const { cells } = arenaCells(p.spec);
      for (const c of cells) {
        expect(c.id.split('.'), `${p.id} ${c.id}`).toHaveLength(4);
        expect(c.label).not.toContain('correction');
      }
      expect(arenaSpecToText(p.spec), p.id).not.toContain('correction=');
    }
    const one = arenaCells(spec({ levels: { clip: ['token'], filter: ['none'], advantage: ['trajectory'], aggregation: ['token-mean'], correction: ['none'] } }));
    expect(one.cells.map((c) => [c.id, c.label])).toEqual([['token.none.trajectory.token-mean', 'clip=token filter=none advantage=trajectory aggregation=token-mean']]);
  });

  it('a correction other than none gets a fifth id part and is in the label and the text', () => {
    const s = spec({ levels: { clip: ['token'], filter: ['none'], advantage: ['trajectory'], aggregation: ['token-mean'], correction: ['none', 'tis', 'geors'] } });
    const { cells, skipped } = arenaCells(s);
    expect(skipped).toEqual([]);
    expect(cells.map((c) => c.id)).toEqual(['token.none.trajectory.token-mean', 'token.none.trajectory.token-mean.tis', 'token.none.trajectory.token-mean.geors']);
    expect(cells.map((c) => c.label)).toEqual(['correction=none', 'correction=tis', 'correction=geors']);
    expect(cellConfig(s, cells[1]!, 1).methods).toEqual(['grpo', 'tis']);
    const text = arenaSpecToText(s);
    expect(text).toBe('task=search;iters=3;seeds=1-2;clip=token;filter=none;advantage=trajectory;aggregation=token-mean;correction=none,tis,geors;set.epochs=2');
    expect(parseArenaSpec(text)).toEqual(s);
    // One level that is not none: still written, still its id's fifth part.
    const veto = spec({ levels: { ...s.levels, correction: ['veto'] } });
    expect(arenaSpecToText(veto)).toContain(';correction=veto;');
    expect(arenaCells(veto).cells.map((c) => [c.id, c.label])).toEqual([['token.none.trajectory.token-mean.veto', 'clip=token filter=none advantage=trajectory aggregation=token-mean correction=veto']]);
  });

  it('a spec written before the dimension existed reads as correction=none, and is written back as it was', () => {
    const old = 'task=search;iters=3;seeds=1-2;clip=token,cispo;filter=none,dynamic;advantage=trajectory;aggregation=token-mean;set.epochs=2';
    const read = parseArenaSpec(old);
    expect(read).toEqual(spec());
    expect(read.levels.correction).toEqual(['none']);
    expect(arenaSpecToText(read)).toBe(old);
    expect(parseArenaSpec(`${old};correction=none`)).toEqual(read);
  });

  it('combinations the config refuses are skipped with its reason: ReGFT against every correction', () => {
    const s = spec({ set: { methods: 'regft' }, levels: { clip: ['token'], filter: ['none'], advantage: ['trajectory'], aggregation: ['token-mean'], correction: LEVELS } });
    const { cells, skipped } = arenaCells(s);
    expect(cells.map((c) => c.levels.correction)).toEqual(['none']);
    expect(skipped.map((x) => x.label)).toEqual(LEVELS.slice(1).map((l) => `correction=${l}`));
    for (const x of skipped) expect(x.why, x.label).toMatch(/ReGFT conflicts with .*: ReGFT's hinted tokens were not drawn by the sampler/);
    // The IS weights against VCPO and OTB. Both are advantage estimators, so the advantage level's GRPO
    // is refused beside them too; the spec's methods come first, and the correction's reason is the one named.
    const vcpo = arenaCells(spec({ set: { methods: 'vcpo' }, levels: { ...s.levels, correction: ['tis'] } }));
    expect(vcpo.cells).toEqual([]);
    expect(vcpo.skipped[0]!.why).toMatch(/correction=tis: methods: VCPO conflicts with Token-TIS: VCPO already weights each rollout/);
    const otb = arenaCells(spec({ set: { methods: 'otb' }, levels: { ...s.levels, correction: ['seqis'] } }));
    expect(otb.skipped[0]!.why).toMatch(/OTB conflicts with Seq-TIS: verl's OTB multiplies its baseline weights/);
  });

  it('a level that does not exist is named with the ones that do', () => {
    const msg = /unknown correction level "ips"; expected one of none, tis, seqis, tokenrs, seqrs, geors, veto/;
    expect(() => parseArenaSpec('correction=none,ips')).toThrow(msg);
    expect(() => arenaCells(spec({ levels: { ...spec().levels, correction: ['ips'] } }))).toThrow(msg);
    expect(() => parseArenaSpec('correction=')).toThrow(/correction: expected at least one level/);
    expect(() => parseArenaSpec('correction=tis,tis')).toThrow(/correction: a level is listed twice/);
  });

  it('the sampler-mismatch preset: every correction against none, on a bf16 sampler 8 updates behind, all seven cells run', () => {
    const p = ARENA_PRESETS.find((x) => x.id === 'sampler-mismatch')!;
    expect(p.spec.set).toEqual(SAMPLER_MISMATCH_SET);
    expect(p.spec).toMatchObject({ task: 'search', iters: 100, seeds: [1, 2, 3, 4, 5, 6, 7, 8] });
    const { cells, skipped } = arenaCells(p.spec);
    expect(skipped).toEqual([]);
    expect(cells.map((c) => c.label)).toEqual(LEVELS.map((l) => `correction=${l}`));
    const cfg = cellConfig(p.spec, cells[1]!, 3);
    expect([cfg.init.mode, cfg.minibatches, cfg.lr, cfg.rollout.precision, cfg.staleness, cfg.lossAgg, cfg.methods]).toEqual(['pretrained', 2, 0.03, 'bf16', 8, 'token-mean', ['grpo', 'tis']]);
  });
});
