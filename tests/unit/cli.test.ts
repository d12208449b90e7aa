/** The CLI as a user runs it: JSON lines on stdout, one-line errors with exit status 2. */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SCALAR_METRICS } from '../../workers/core/metrics';
import { runCli } from '../helpers/cliNode';

const run = (...args: string[]) =>
  runCli('cli/train.ts', args);

const small = ['--set', 'batch=2', '--set', 'group=4', '--set', 'model.hidden=8'];

describe('cli/train.ts', () => {
  it('prints one JSON object per iteration with every metric name, and nothing else on stdout', () => {
    const r = run('--iters', '3', ...small, '--seed', '4');
    expect(r.status).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines).toHaveLength(3);
    const rows = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    for (const name of SCALAR_METRICS) expect(typeof rows[0]![name], name).toBe('number');
    expect(rows.map((x) => x.iter)).toEqual([1, 2, 3]);
    expect((rows[0]!.adv_hist as number[]).length).toBe(24);
  });

  it('is reproducible: the same config and seed print the same numbers (but ms)', () => {
    const strip = (s: string) => s.trim().split('\n').map((l) => ({ ...JSON.parse(l), ms: 0 }));
    const a = run('--iters', '2', ...small, '--seed', '9');
    const b = run('--iters', '2', ...small, '--seed', '9');
    expect(strip(a.stdout)).toEqual(strip(b.stdout));
  });

  it.each([
    [['--bogus'], /--bogus: unknown flag/],
    [['--set', 'model.width=3'], /model\.width: unknown key/],
    [['--set', 'lr=abc'], /lr: expected a number/],
    [['--iters', '-1'], /--iters -1: expected a non-negative integer/],
    [['--backend', 'tpu'], /--backend tpu: expected gpu or cpu/],
    [['--config', '/nonexistent.json'], /--config \/nonexistent\.json: cannot read the file/],
    [['--cpu-memory', '0'], /--cpu-memory 0: expected a positive number of GiB/],
    [['--cpu-memory', 'lots'], /--cpu-memory lots: expected a positive number of GiB/],
  ])('%j exits 2 with one line naming it', (args, msg) => {
    const r = run(...(args as string[]));
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(msg as RegExp);
  });

  it('reads a config file, and names a bad field in it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cli-'));
    const good = join(dir, 'good.json');
    writeFileSync(good, JSON.stringify({ batch: 2, group: 2, model: { hidden: 8 } }));
    const r = run('--config', good, '--iters', '1');
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout).tokens).toBeGreaterThan(0);
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, JSON.stringify({ env: { turns: 3 } }));
    const b = run('--config', bad);
    expect(b.status).toBe(2);
    expect(b.stderr).toMatch(/env\.turns: unknown key/);
    const broken = join(dir, 'broken.json');
    writeFileSync(broken, '{ "seed": ');
    expect(run('--config', broken).stderr).toMatch(/not valid JSON/);
  });

  it('--help lists every key', () => {
    const r = run('--help');
    expect(r.status).toBe(0);
    for (const key of ['model.hidden', 'env.maxTurns', 'grpo.eps', 'lossAgg', 'methods']) expect(r.stdout).toContain(key);
  });

  it('a run over the CPU backend\'s memory budget is refused in one line that names the flag to raise it; with it, the run trains', () => {
    const big = ['--set', 'batch=64', '--set', 'group=64', '--iters', '1'];
    const r = run(...big, '--cpu-memory', '0.01');
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/^error: cpu backend: 4,096 rollouts of 9 training rows with 64 hidden units need about 38 MiB .* over the CPU backend's 11 MiB; .*; or give the CPU backend more with --cpu-memory 0\.1\n$/);
    const ok = run(...big, '--cpu-memory=0.1');
    expect(ok.status).toBe(0);
    expect(JSON.parse(ok.stdout).iter).toBe(1);
  });

  it('--dump-batch writes the batch contract', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'cli-')), 'b.json');
    const r = run('--iters', '2', ...small, '--dump-batch', `2:${file}`);
    expect(r.status).toBe(0);
    const dump = JSON.parse(readFileSync(file, 'utf8'));
    expect(dump.version).toBe(1);
    expect(dump.iter).toBe(2);
    expect(dump.trajs).toHaveLength(8);
    const tok = dump.trajs[0].tokens[0];
    for (const k of ['tok', 'text', 'turn', 'mask', 'logp_old', 'logp', 'logp_ref', 'entropy', 'sum_p2', 'adv', 'ratio', 'clip', 'loss']) expect(tok).toHaveProperty(k);
  });
});
