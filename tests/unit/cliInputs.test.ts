/**
 * Every CLI under hostile input, in a scratch working folder: each one package.json runs from cli/
 * (so a command added later is covered too) echoes what it was given only through
 * cli/printable.ts (no raw control character, no forged second `error:` line); every output path
 * is checked before anything is written (empty, a folder or a file where the other is expected,
 * a device, a path under a file, a read-only folder, a non-empty folder, the proc filesystem);
 * input files are read up to a cap (/dev/zero stops there); an arena over its budget is refused
 * on its counts. Each bad input: exit 2, one line on stderr, nothing on stdout, nothing written.
 */
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseArenaArgs } from '../../cli/arenaArgs';
import { UsageError } from '../../cli/args';
import { arenaSpecToText, parseArenaSpec } from '../../workers/content/arena/dimensions';
import { cliArgv, TSX_NODE_ARGS } from '../helpers/cliNode';

const ROOT = process.cwd();
const scripts = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
/** Every `npm run` command whose script is a file of cli/. */
const CLIS = Object.entries(scripts).flatMap(([name, cmd]) => {
  const m = /\bcli\/(\w+)\.ts\b/.exec(cmd);
  return m ? [{ name, file: join(ROOT, 'cli', `${m[1]}.ts`) }] : [];
});
const cliFile = (name: string) => CLIS.find((c) => c.name === name)!.file;

const scratch = mkdtempSync(join(tmpdir(), 'cli-inputs-'));
const afile = join(scratch, 'afile');
const full = join(scratch, 'full');
const readOnly = join(scratch, 'ro');
writeFileSync(afile, 'x');
mkdirSync(full);
writeFileSync(join(full, 'kept'), 'x');
mkdirSync(readOnly);
chmodSync(readOnly, 0o555);
chmodSync(scratch, 0o755);

interface Result {
  status: number | null;
  stdout: string;
  stderr: string;
  ms: number;
  /** The working folder's entries after the run (it starts empty). */
  wrote: string[];
}

/**
 * Runs a CLI by its file from an empty working folder of its own, so a write there shows. As root,
 * `asUser` runs it as nobody: a read-only folder is read-only only for a user without root's override.
 * `tsx` starts it as `npm run` does, through tsx's loader, instead of from its bundle.
 */
function runCli(file: string, args: string[], opts: { asUser?: boolean; timeoutMs?: number; tsx?: boolean } = {}): Promise<Result> {
  const cwd = mkdtempSync(join(scratch, 'cwd-'));
  chmodSync(cwd, 0o777);
  const argv = [process.execPath, ...(opts.tsx ? [...TSX_NODE_ARGS, file, ...args] : cliArgv(file, args))];
  const asNobody = opts.asUser && process.getuid?.() === 0;
  const [cmd, ...rest] = asNobody ? ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', 'env', 'HOME=/tmp', ...argv] : argv;
  const t0 = Date.now();
  return new Promise((resolve) => {
    // A group of its own: a run past its time is ended with anything it started.
    const child = spawn(cmd!, rest, { cwd, env: { ...process.env, DEBUG: '' }, detached: true });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), opts.timeoutMs ?? 60_000);
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr, ms: Date.now() - t0, wrote: readdirSync(cwd) });
    });
  });
}

/** Runs jobs a few at a time (each is a Node start of a second or more). */
async function all<T>(jobs: Array<() => Promise<T>>, at = 3): Promise<T[]> {
  const out: T[] = new Array(jobs.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: at }, async () => {
      while (next < jobs.length) {
        const i = next++;
        out[i] = await jobs[i]!();
      }
    }),
  );
  return out;
}

// eslint-disable-next-line no-control-regex
const RAW = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/;

/** What every bad input must give: exit 2, one escaped line naming it, nothing on stdout, nothing written. */
function problemsOf(label: string, r: Result, pattern: RegExp): string[] {
  const bad: string[] = [];
  const lines = r.stderr.replace(/\n$/, '').split('\n');
  if (r.status !== 2) bad.push(`${label}: exit ${r.status}`);
  if (r.stdout !== '') bad.push(`${label}: stdout ${JSON.stringify(r.stdout.slice(0, 80))}`);
  if (lines.length !== 1) bad.push(`${label}: ${lines.length} lines: ${JSON.stringify(r.stderr.slice(0, 200))}`);
  if (!lines[0]!.startsWith('error: ')) bad.push(`${label}: first line ${JSON.stringify(lines[0]!.slice(0, 80))}`);
  if (RAW.test(r.stderr)) bad.push(`${label}: a raw control character: ${JSON.stringify(r.stderr.slice(0, 120))}`);
  if (!pattern.test(lines[0]!)) bad.push(`${label}: ${JSON.stringify(lines[0]!.slice(0, 200))} does not match ${pattern}`);
  if (r.wrote.length > 0) bad.push(`${label}: wrote ${r.wrote.join(', ')} into the working folder`);
  return bad;
}

const FORGED = '\u001b[31mred\nerror: fake';
const FORGED_SHOWN = /\\x1b\[31mred\\x0aerror: fake/;

describe('every CLI', () => {
  it('is found in package.json: train, recipe, arena, both sweeps and lessons:check at least', () => {
    expect(CLIS.map((c) => c.name)).toEqual(expect.arrayContaining(['train', 'recipe', 'arena', 'sweep:tasks', 'sweep:methods', 'lessons:check']));
  });

  it('echoes a flag or value with control characters, ESC sequences, newlines and a forged "error:" line escaped, in one line, exit 2', async () => {
    const values: Record<string, string[]> = {
      train: ['--url', '#v=1&seed=%1B%5B31mred%0Aerror%3A%20fake'],
      recipe: ['--out', join(scratch, 'r-echo'), '--url', '#v=1&seed=%1B%5B31mred%0Aerror%3A%20fake'],
      arena: ['--preset', FORGED],
      'sweep:tasks': ['--seeds', FORGED, '--out', '-'],
      'sweep:methods': ['--interval', FORGED, '--out', '-'],
      'lessons:check': ['--only', FORGED],
      why: ['--method', 'prorl', '--seeds', FORGED],
    };
    // The unknown flag through tsx, as package.json starts each CLI; everything else from bundles.
    const cases = CLIS.flatMap((c) => [
      { label: `${c.name} unknown flag`, file: c.file, args: [`--bogus${FORGED}`], pattern: FORGED_SHOWN, tsx: true },
      ...(values[c.name] ? [{ label: `${c.name} value`, file: c.file, args: values[c.name]!, pattern: FORGED_SHOWN, tsx: false }] : []),
    ]);
    const results = await all(cases.map((c) => () => runCli(c.file, c.args, { tsx: c.tsx })));
    const bad = cases.flatMap((c, i) => problemsOf(c.label, results[i]!, c.pattern));
    expect(bad).toEqual([]);
  }, 400_000);

  it('checks every output path before anything is written: one line and exit 2 for each bad one', async () => {
    const under = join(afile, 'sub');
    const recipe = (out: string) => ['--url', '#v=1&seed=3', '--out', out];
    const train = (file: string) => ['--iters', '1', '--set', 'batch=2', '--set', 'group=4', '--set', 'model.hidden=8', '--dump-batch', `1:${file}`];
    const sweep = (out: string) => ['--only', 'search', '--seeds', '1', '--out', out];
    const save = (out: string) => ['--only', 'collapse', '--seeds', 'lesson', '--jobs', '1', '--save', out];
    const cache = (dir: string) => ['--method', 'prorl', '--seeds', '1', '--jobs', '1', '--cache', dir];
    const cases: Array<{ label: string; cli: string; args: string[]; pattern: RegExp; asUser?: boolean }> = [
      { label: "recipe --out ''", cli: 'recipe', args: recipe(''), pattern: /--out: empty/ },
      { label: 'recipe --out a file', cli: 'recipe', args: recipe(afile), pattern: /is a file; expected a folder/ },
      { label: 'recipe --out /dev/null', cli: 'recipe', args: recipe('/dev/null'), pattern: /--out \/dev\/null: is a device/ },
      { label: 'recipe --out under a file', cli: 'recipe', args: recipe(under), pattern: /afile is a file, not a folder/ },
      { label: 'recipe --out read-only', cli: 'recipe', args: recipe(join(readOnly, 'x')), pattern: /is not writable/, asUser: true },
      { label: 'recipe --out not empty', cli: 'recipe', args: recipe(full), pattern: /the folder is not empty/ },
      { label: 'recipe --out /proc', cli: 'recipe', args: recipe('/proc/self/x'), pattern: /on the kernel's \/proc filesystem/ },
      { label: 'recipe --out /sys', cli: 'recipe', args: recipe('/sys/kernel/x'), pattern: /\/sys filesystem/ },
      { label: 'recipe --out ESC', cli: 'recipe', args: recipe(join(afile, '\u001b[2J')), pattern: /afile\/\\x1b\[2J: .*not a folder/ },
      { label: 'recipe default episodes over the cap', cli: 'recipe', args: ['--url', '#v=1&batch=1024&group=64', '--out', join(scratch, 'r-big')], pattern: /--episodes: this run's default is 204,800 episodes/ },
      { label: 'train --dump-batch a folder', cli: 'train', args: train(full), pattern: /is a folder; expected a file name/ },
      { label: 'train --dump-batch /dev/null', cli: 'train', args: train('/dev/null'), pattern: /is a device/ },
      { label: 'train --dump-batch under a file', cli: 'train', args: train(join(afile, 'b.json')), pattern: /afile is a file, not a folder/ },
      { label: 'train --dump-batch read-only', cli: 'train', args: train(join(readOnly, 'b.json')), pattern: /is not writable/, asUser: true },
      { label: 'train --dump-batch /proc', cli: 'train', args: train('/proc/self/b.json'), pattern: /\/proc filesystem/ },
      { label: "sweep:tasks --out ''", cli: 'sweep:tasks', args: sweep(''), pattern: /--out: empty/ },
      { label: 'sweep:tasks --out a folder', cli: 'sweep:tasks', args: sweep(full), pattern: /is a folder/ },
      { label: 'sweep:tasks --out /dev/null', cli: 'sweep:tasks', args: sweep('/dev/null'), pattern: /is a device/ },
      { label: 'sweep:tasks --out /proc', cli: 'sweep:tasks', args: sweep('/proc/self/x.md'), pattern: /\/proc filesystem/ },
      { label: 'sweep:tasks --out read-only', cli: 'sweep:tasks', args: sweep(join(readOnly, 'x.md')), pattern: /is not writable/, asUser: true },
      { label: "sweep:methods --out ''", cli: 'sweep:methods', args: ['--seeds', '1', '--out', ''], pattern: /--out: empty/ },
      { label: 'sweep:methods --out under a file', cli: 'sweep:methods', args: ['--seeds', '1', '--out', join(afile, 'x.md')], pattern: /not a folder/ },
      { label: "lessons:check --save ''", cli: 'lessons:check', args: save(''), pattern: /--save: empty/ },
      { label: 'lessons:check --save a folder', cli: 'lessons:check', args: save(full), pattern: /is a folder/ },
      { label: 'lessons:check --save /proc', cli: 'lessons:check', args: save('/proc/self/x.json'), pattern: /\/proc filesystem/ },
      { label: "why --cache ''", cli: 'why', args: cache(''), pattern: /--cache: empty/ },
      { label: 'why --cache a file', cli: 'why', args: cache(afile), pattern: /is a file; expected a folder/ },
      { label: 'why --cache /dev/null', cli: 'why', args: cache('/dev/null'), pattern: /is a device/ },
      { label: 'why --cache /proc', cli: 'why', args: cache('/proc/self/c'), pattern: /\/proc filesystem/ },
    ];
    const before = readdirSync(full);
    const results = await all(cases.map((c) => () => runCli(cliFile(c.cli), c.args, { asUser: c.asUser })));
    const bad = cases.flatMap((c, i) => problemsOf(c.label, results[i]!, c.pattern));
    expect(bad).toEqual([]);
    expect(readdirSync(full)).toEqual(before);
    expect(readdirSync(readOnly)).toEqual([]);
    expect(readFileSync(afile, 'utf8')).toBe('x');
  }, 600_000);

  it('reads input files up to a cap: /dev/zero, a 2 MB config, a folder; an arena over its budget is refused on its counts', async () => {
    const big = join(scratch, 'big.json');
    writeFileSync(big, `{"seed": 1, "pad": "${'x'.repeat(2_000_000)}"}`);
    const ranges = Array.from({ length: 519 }, (_, i) => `${i * 10001}-${i * 10001 + 10000}`).join(',');
    const cases: Array<{ label: string; cli: string; args: string[]; pattern: RegExp }> = [
      { label: 'train --config /dev/zero', cli: 'train', args: ['--config', '/dev/zero'], pattern: /--config \/dev\/zero: more than 1,024 KiB, the most that is read; stopped there/ },
      { label: 'train --config 2 MB', cli: 'train', args: ['--config', big], pattern: /big\.json: 1,953 KiB; at most 1,024 KiB is read/ },
      { label: 'train --config a folder', cli: 'train', args: ['--config', full], pattern: /is a folder; expected a file/ },
      { label: 'recipe --config /dev/zero', cli: 'recipe', args: ['--config', '/dev/zero', '--out', join(scratch, 'r-zero')], pattern: /stopped there/ },
      { label: 'lessons:check --load /dev/zero', cli: 'lessons:check', args: ['--only', 'collapse', '--load', '/dev/zero'], pattern: /--load \/dev\/zero: more than/ },
      { label: 'arena --seeds 519 ranges', cli: 'arena', args: ['--seeds', ranges, '--iters', '1'], pattern: /--seeds: 5,190,519 seeds; an arena holds at most 10,000 runs/ },
      { label: 'arena --spec 519 ranges', cli: 'arena', args: ['--spec', `seeds=${ranges}`], pattern: /--spec: arena: 5,190,519 seeds x 1 cell = 5,190,519 runs/ },
      { label: 'arena 10,002 seeds', cli: 'arena', args: ['--seeds', '1-10000,10001-10002', '--iters', '1', '--levels', 'clip=token'], pattern: /10,002 seeds/ },
      { label: 'arena iterations over the budget', cli: 'arena', args: ['--seeds', '1-100', '--iters', '100000'], pattern: /an arena trains at most 1,000,000 iterations/ },
    ];
    const results = await all(cases.map((c) => () => runCli(cliFile(c.cli), c.args, { timeoutMs: 60_000 })));
    const bad = cases.flatMap((c, i) => problemsOf(c.label, results[i]!, c.pattern));
    expect(bad).toEqual([]);
    // Refused at the cap, not after reading on: a few seconds each, Node's start included.
    for (const [i, c] of cases.entries()) expect(results[i]!.ms, c.label).toBeLessThan(30_000);
  }, 400_000);

  it('arena: the spec text each child reads back is the parent\'s, for seeds written in any split', () => {
    for (const seeds of ['1-5000,5001-9000', '3,1-2', '7-9,10']) {
      const args = parseArenaArgs(['--seeds', seeds, '--iters', '1', '--levels', 'clip=token']);
      expect(parseArenaSpec(arenaSpecToText(args.spec))).toEqual(args.spec);
    }
    expect(() => parseArenaArgs(['--seeds', '1-10000,10001-10002', '--levels', 'clip=token'])).toThrow(UsageError);
  });
});
