/** `npm run -s arena` (cli/arena.ts): a tiny spec end to end, the summary's numbers, and bad input. */
import { describe, expect, it } from 'vitest';
import { parseArenaArgs } from '../../cli/arenaArgs';
import { arenaMarkdown, meanInterval, quarterMean, summarizeArena, type ArenaRun } from '../../cli/arenaSummary';
import { runCli } from '../helpers/cliNode';

const run = (...args: string[]) => runCli('cli/arena.ts', args);
const tiny = ['--levels', 'clip=token,cispo', '--set', 'batch=2', '--set', 'group=4', '--set', 'model.hidden=8', '--seeds', '1-2', '--iters', '3'];

describe('arena CLI', () => {
  it('runs 2 cells on 2 seeds and prints one JSON line per cell', () => {
    const r = run(...tiny, '--json', '--jobs', '2');
    expect(r.status, r.stderr).toBe(0);
    const lines = r.stdout.trim().split('\n').map((l) => JSON.parse(l));
    expect(lines.map((l) => l.label)).toEqual(['clip=token', 'clip=cispo']);
    for (const l of lines) {
      expect(l.seeds).toBe(2);
      expect(l.final.lo).toBeLessThanOrEqual(l.final.mean);
      expect(l.final.hi).toBeGreaterThanOrEqual(l.final.mean);
      expect(l.peakNegOut).toBeGreaterThanOrEqual(0);
      expect(l.peakNegOut).toBeLessThanOrEqual(1);
      expect(l.rolloutsPerIter).toBe(8);
      expect(l.crashes).toBeGreaterThanOrEqual(0);
    }
    expect(lines[0].vsFirst).toBeNull();
    expect(lines[1].vsFirst.n).toBe(2);
  }, 600_000);

  it('bad flags, levels and settings are refused naming them; the command exits 2 with one line', () => {
    const cases: Array<[string[], RegExp]> = [
      [['--bogus'], /--bogus: unknown flag/],
      [['--levels', 'clip=token,nope'], /unknown clip level "nope"/],
      [['--levels', 'color=red'], /unknown dimension "color"/],
      [['--levels', 'correction=tis,ips'], /unknown correction level "ips"; expected one of none, tis, seqis, tokenrs, seqrs, geors, veto/],
      [['--preset', 'nope'], /--preset nope: expected one of clipping, grid/],
      [['--set', 'epochs=99'], /set: epochs: expected an integer in \[1, 16\]/],
      [['--seeds', 'x'], /--seeds: expected seeds and ranges/],
      [['--iters', '-1'], /--iters -1: expected a whole number/],
      [['--jobs', '0'], /--jobs 0: expected a whole number in 1..64/],
      [['--preset', 'grid', '--spec', 'clip=token'], /give one --preset or one --spec/],
    ];
    for (const [args, msg] of cases) expect(() => parseArenaArgs(args), args.join(' ')).toThrow(msg);
    // One process start (each costs seconds): the exit status and the one line.
    const r = run('--levels', 'clip=token,nope');
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^error: arena: unknown clip level "nope"; expected one of token, cispo, sapo, sequence\n$/);
  }, 120_000);

  it('flags edit the preset: task, levels, set, seeds, iters', () => {
    const a = parseArenaArgs(['--preset', 'sampo-parts', '--task', 'tools', '--levels', 'clip=cispo', '--set', 'env.toolSteps=2', '--seeds', '3,5', '--iters', '9']);
    expect(a.spec).toMatchObject({ task: 'tools', seeds: [3, 5], iters: 9, levels: { clip: ['cispo'], filter: ['none', 'dynamic'] }, set: { epochs: '4', 'env.toolSteps': '2' } });
  });

  it('the correction: none unless asked for, from a preset, --levels or a --spec written before it existed', () => {
    expect(parseArenaArgs([]).spec.levels.correction).toEqual(['none']);
    expect(parseArenaArgs(['--spec', 'task=search;clip=token,cispo;set.epochs=4']).spec.levels.correction).toEqual(['none']);
    expect(parseArenaArgs(['--levels', 'correction=none,seqrs']).spec.levels.correction).toEqual(['none', 'seqrs']);
    const m = parseArenaArgs(['--preset', 'sampler-mismatch', '--set', 'rollout.topP=0.9']).spec;
    expect(m.levels.correction).toEqual(['none', 'tis', 'seqis', 'tokenrs', 'seqrs', 'geors', 'veto']);
    expect(m.set).toMatchObject({ 'rollout.precision': 'bf16', 'rollout.topP': '0.9' });
  });
});

describe('arena summary', () => {
  it('intervals, quarters, crashes and the paired difference', () => {
    expect(meanInterval([1, 3])).toEqual({ mean: 2, lo: 2 - 12.706, hi: 2 + 12.706 });
    expect(quarterMean([1, 1, 0, 0, 0, 0, 0, 1], 8, 'first')).toBe(1);
    expect(quarterMean([1, 1, 0, 0, 0, 0, 0, 1], 8, 'last')).toBe(0.5);
    // A run cut short by a non-finite update: its missing iterations count as 0.
    expect(quarterMean([1, 1, 1, 1], 8, 'last')).toBe(0);
    const r = (cell: string, seed: number, success: number[], crashAt: number | null): ArenaRun => ({
      cell, seed, success, negOut: success.map((s) => s / 2), rollouts: 128, seconds: 2,
      crash: { crashed: crashAt !== null, at: crashAt, why: crashAt ? 'x' : null },
    });
    const cells = [{ id: 'a', label: 'clip=token' }, { id: 'b', label: 'clip=cispo' }];
    const runs = [r('a', 1, [0, 0, 1, 1], null), r('a', 2, [0, 0, 0.5, 0.5], null), r('b', 1, [1, 1, 0, 0], 3), r('b', 2, [1, 0, 0, 0], 2)];
    const [a, b] = summarizeArena(cells, runs, [1, 2], 4);
    expect([a!.final.mean, a!.early.mean, a!.crashes, a!.crashAt, a!.peakNegOut]).toEqual([0.75, 0, 0, null, 0.375]);
    expect([b!.final.mean, b!.early.mean, b!.crashes, b!.crashAt, b!.vsFirst!.mean]).toEqual([0, 1, 2, 2.5, -0.75]);
    const md = arenaMarkdown([a!, b!], [{ label: 'clip=sapo', why: 'lossAgg: ...' }]);
    expect(md).toContain('| clip=cispo | 0.000 [0.000, 0.000] | 1.000 [1.000, 1.000] | -0.750 [');
    expect(md).toContain('| 2 / 2 | 2.5 |');
    expect(md).toContain('- clip=sapo: lossAgg: ...');
    expect(() => summarizeArena(cells, runs.slice(1), [1, 2], 4)).toThrow(/no result for cell a seed 1/);
  });
});
