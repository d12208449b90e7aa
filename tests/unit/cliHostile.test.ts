/**
 * The CLI under hostile or careless input: every bad input exits 2 with one printable line before
 * any training; a run that fails says so in one line; a reader that closes early ends it quietly.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { printable } from '../../cli/printable';
import { cliBundle, runCli } from '../helpers/cliNode';

const run = (...args: string[]) => runCli('cli/train.ts', args);
const small = ['--set', 'batch=2', '--set', 'group=4', '--set', 'model.hidden=8'];
const dir = mkdtempSync(join(tmpdir(), 'cli-hostile-'));

/** One line on stderr, no stack frame, no raw control character, nothing on stdout (no training). */
function refusedBeforeTraining(r: ReturnType<typeof run>, pattern: RegExp): void {
  expect(r.status, r.stderr).toBe(2);
  expect(r.stdout).toBe('');
  const lines = r.stderr.trimEnd().split('\n');
  expect(lines, r.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(/^error: /);
  expect(lines[0]).toMatch(pattern);
  // eslint-disable-next-line no-control-regex
  expect(r.stderr.trimEnd()).not.toMatch(/[\u0000-\u001f\u007f]/);
}

describe('CLI hostile input', () => {
  it('a --config nested thousands of levels deep is refused in one line', () => {
    const file = join(dir, 'deep.json');
    writeFileSync(file, `${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}`);
    refusedBeforeTraining(run('--config', file), /nested deeper than/);
  });

  it.each([
    [['--dump-batch', '1:/nonexistent/dir/b.json', '--iters', '2'], /--dump-batch 1:\/nonexistent\/dir\/b\.json: the folder \/nonexistent\/dir does not exist/],
    [['--dump-batch', '5:f.json', '--iters', '2'], /the iteration must be in \[1, 2\]/],
    [['--dump-batch', '0:f.json', '--iters', '2'], /the iteration must be in \[1, 2\]/],
    [['--iters', ''], /--iters : expected a non-negative integer/],
    [['--iters', '0x2'], /--iters 0x2: expected a non-negative integer/],
    [['--iters', '1e12'], /at most 100000/],
    [['--set', 'group=0b10'], /^error: group: /],
    [['--set', 'lr=Infinity'], /^error: lr: /],
    [['--seed', ' 7'], /^error: seed: /],
    [['--cpu-memory', '0x10'], /--cpu-memory 0x10: expected a positive number/],
  ])('%j is refused before training', (args, pattern) => {
    refusedBeforeTraining(run(...small, ...args), pattern);
  });

  it('control characters decoded from a --url are escaped, not written to the terminal', () => {
    const fake = run('--url', '#v=1&seed=%0Aerror%3A%20fake');
    refusedBeforeTraining(fake, /\\x0aerror: fake/);
    const clear = run('--url', '#v=1&seed=%1B[2J');
    refusedBeforeTraining(clear, /\\x1b\[2J/);
  });

  it('numbers parse as links parse them: 1e2 and 100 are the same --iters', () => {
    const r = run(...small, '--iters', '1e0', '--seed', '3');
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout.trim().split('\n')).toHaveLength(1);
  });

  it('a run that turns NaN prints one line saying so, not a stack', () => {
    const nan = ['lr=1', 'maxGradNorm=0', 'klCoef=1', 'klType=k2', 'epochs=16', 'minibatches=16', 'clipHigh=10', 'clipLow=1', 'beta2=0'].flatMap((kv) => ['--set', kv]);
    const r = run(...nan, '--iters', '5');
    expect(r.status, r.stderr).toBe(1);
    const lines = r.stderr.trimEnd().split('\n');
    expect(lines, r.stderr).toHaveLength(1);
    expect(lines[0]).toMatch(/^error: the run stopped: non-finite .* at iteration \d+/);
  });

  it('a reader that closes early (| head -1) ends the run quietly with status 0', () => {
    const r = spawnSync('bash', ['-c', `set -o pipefail; "${process.execPath}" "${cliBundle('cli/train.ts')}" ${small.join(' ')} --iters 400 | head -1`], { encoding: 'utf8', cwd: process.cwd() });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout.trim().split('\n')).toHaveLength(1);
  });

  it('printable escapes every control character and keeps the rest', () => {
    expect(printable('a\nb\u001b[2J\u0000\u009b\u2028é')).toBe('a\\x0ab\\x1b[2J\\x00\\x9b\\u2028é');
  });
});
