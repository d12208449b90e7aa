/**
 * `npm run -s train -- --url LINK`: the CLI runs exactly the config of a share link, and refuses a
 * link with any problem (even one the app would skip) with one line naming the first bad key.
 */
import { describe, expect, it } from 'vitest';
import { helpText, parseArgs, UsageError } from '../../cli/args';
import { runCli } from '../helpers/cliNode';

const run = (...args: string[]) =>
  runCli('cli/train.ts', args);

const rows = (stdout: string): Array<Record<string, unknown>> => stdout.trim().split('\n').map((l) => ({ ...(JSON.parse(l) as Record<string, unknown>), ms: 0 }));

describe('cli --url', () => {
  it('runs the link\'s config: the same numbers as the same settings given with --set', () => {
    const a = run('--url', 'http://localhost:4173/#v=1&seed=4&batch=2&group=4&model.hidden=8', '--iters', '2');
    const b = run('--set', 'batch=2', '--set', 'group=4', '--set', 'model.hidden=8', '--seed', '4', '--iters', '2');
    expect(a.status, a.stderr).toBe(0);
    expect(b.status, b.stderr).toBe(0);
    expect(rows(a.stdout)).toHaveLength(2);
    expect(rows(a.stdout)).toEqual(rows(b.stdout));
  });

  it('takes a bare hash; step=N sets the iterations unless --iters is given; view keys are ignored', () => {
    const link = '#v=1&batch=2&group=2&model.hidden=8&step=3&focus=traj:1&hide=methods,task&backend=gpu';
    const a = run('--url', link);
    expect(a.status, a.stderr).toBe(0);
    expect(rows(a.stdout).map((r) => r.iter)).toEqual([1, 2, 3]);
    const b = run('--url', link, '--iters', '1');
    expect(rows(b.stdout).map((r) => r.iter)).toEqual([1]);
  });

  it('applies --set and --seed on top of the link', () => {
    const a = run('--url', '#v=1&batch=2&group=2&model.hidden=8&seed=3', '--set', 'group=3', '--seed', '5', '--iters', '1');
    const b = run('--set', 'batch=2', '--set', 'group=3', '--set', 'model.hidden=8', '--seed', '5', '--iters', '1');
    expect(a.status, a.stderr).toBe(0);
    expect(rows(a.stdout)).toEqual(rows(b.stdout));
  });

  // Two refusals as a user sees them (a process, exit status 2, one line on stderr) ...
  it.each([
    ['#v=1&batch=2&bach=2', /^error: --url: bach = "2": unknown key \(did you mean batch\?\)/],
    ['#v=1&seed=x&bogus=1&lossAgg=sum', /^error: --url: seed = "x": expected an integer .* \(and 2 more problems\)$/],
  ])('%s exits 2 with one line naming the first bad key', (link, msg) => {
    const r = run('--url', link);
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr.trim()).toMatch(msg);
  });

  // ... and the rest through parseArgs, which throws the UsageError that becomes that line.
  it.each([
    ['lr', '#v=1&lr=fast', /^--url: lr = "fast": expected a number in \[/],
    ['newer version', '#v=2&batch=2', /^--url: v: link version 2 is newer than this playground/],
    ['focus', '#v=1&focus=traj:99&batch=2&group=2', /^--url: focus = "traj:99": trajectory 99 is outside this batch/],
    ['no hash', 'https://example.org/no-hash', /^--url: link: the address has no #… part/],
    ['too long', `#v=1&seed=${'9'.repeat(9000)}`, /^--url: link: too long/],
    ['only unknown keys', '#v=1&colour=red', /^--url: colour = "red": unknown key/],
    ['empty', '--url', /^--url: expected a value after it/],
  ])('%s: refused with the first problem named', (_, link, msg) => {
    const args = link === '--url' ? ['--url'] : ['--url', link];
    expect(() => parseArgs(args)).toThrow(UsageError);
    expect(() => parseArgs(args)).toThrow(msg);
  });

  it('refuses --url together with --config, and --help documents --url', () => {
    expect(() => parseArgs(['--url', '#v=1', '--config', 'x.json'])).toThrow('--url and --config: give one of them (a link holds a whole config)');
    expect(helpText()).toContain('--url LINK');
    expect(parseArgs(['--url', '#v=1&step=7']).iters).toBe(7);
  });
});

describe('--help names the methods', () => {
  it('lists every method id with the name on its card, estimators marked', () => {
    const help = helpText();
    for (const id of ['grpo', 'drgrpo', 'rloo', 'otb', 'drmas', 'igpo', 'cm2', 'vcpo', 'gmpo']) {
      expect(help).toMatch(new RegExp(`^  ${id} +\\S`, 'm'));
    }
    expect(help).toMatch(/^ {2}drgrpo +Dr\. GRPO \(\*\): /m);
  });
});
