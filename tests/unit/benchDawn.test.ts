/**
 * `npm run bench:dawn` as a user runs it: it bundles bench/dawn.ts (esbuild: tfjs-core's ES build
 * has directory imports that Node's own loader, and tsx, refuse, which broke the command) and runs
 * the bundle. Without a GPU here, these runs stop at their first check: every module of the bench
 * is loaded by then (TF.js included), and a bad flag or a missing `webgpu` package is one line with
 * exit status 2.
 */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

const run = (...args: string[]) => spawnSync('npm', ['run', '-s', 'bench:dawn', '--', ...args], { encoding: 'utf8', cwd: process.cwd() });

/** stderr without stack frames ("    at ..."), which a usage error must not print. */
const frames = (s: string) => s.split('\n').filter((l) => /^\s+at /.test(l));

describe('npm run bench:dawn', () => {
  it('names a section it does not have, with the usage, in one error and exit status 2', () => {
    const r = run('--only', 'kernels,nonsense');
    expect(r.stderr).toContain('error: --only: nonsense is not a Dawn section (kernels, iteration, peer, selftest, parity)');
    expect(r.stderr).toContain('usage: npm run -s bench:dawn --');
    expect(frames(r.stderr)).toEqual([]);
    expect(r.status).toBe(2);
  });

  it('says how to get the optional webgpu package when the module is not there', () => {
    const r = run('--only', 'selftest', '--webgpu', './no-such-dir/index.js');
    expect(r.stderr).toContain('--webgpu ./no-such-dir/index.js: not found; install the optional `webgpu` package');
    expect(frames(r.stderr)).toEqual([]);
    expect(r.status).toBe(2);
  });
});
