/**
 * The benchmark harness runs: its Node part (the CPU backend, `--quick --only iteration
 * --no-browser`) prints the iteration table and writes finite figures to its JSON. Never asserts
 * timings (they depend on the machine and its load), only that numbers are produced and sane.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseBenchArgs } from '../../bench/args';
import { applyArgs, makePlan } from '../../bench/plan';
import { growthWord, logLogSlope, summarize } from '../../bench/lib/stats';
import type { BenchResults } from '../../bench/lib/tables';

describe('bench harness', () => {
  it('--quick --only iteration --no-browser prints the iteration table and finite figures', () => {
    const out = join(mkdtempSync(join(tmpdir(), 'bench-test-')), 'results.json');
    const r = spawnSync(
      'npx',
      ['tsx', '--import', './cli/registerRaw.mjs', 'bench/run.ts', '--quick', '--only', 'iteration', '--no-browser', '--out', out],
      { encoding: 'utf8', cwd: process.cwd(), timeout: 120_000 },
    );
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain('## 2. One training iteration');
    expect(r.stdout).toMatch(/\| default \| cpu \(node\) \| 128 \| 1152 \|/);
    const res = JSON.parse(readFileSync(out, 'utf8')) as BenchResults;
    expect(res.errors).toEqual({});
    expect(res.meta.quick).toBe(true);
    const rows = res.iteration!;
    expect(rows.map((x) => `${x.scale}/${x.backend}/${x.where}`)).toEqual(['default/cpu/node', 'default/4/cpu/node']);
    for (const row of rows) {
      expect(row.reps).toBeGreaterThanOrEqual(2);
      for (const s of [row.iterMs, row.rolloutMs, row.updateMs]) {
        expect(s.n).toBe(row.reps);
        expect(Number.isFinite(s.median) && s.median > 0).toBe(true);
        expect(s.min).toBeLessThanOrEqual(s.median);
      }
      expect(row.iterMs.median).toBeGreaterThanOrEqual(row.updateMs.median);
      // The CPU backend's model runs inside sampleTurn: part of the rollout, never more.
      expect(row.sampleTurnMs!.n).toBe(row.reps);
      expect(row.sampleTurnMs!.median).toBeGreaterThan(0);
      // Each sample's is within its rollout, so each order statistic is too.
      for (const k of ['min', 'median', 'max'] as const) expect(row.sampleTurnMs![k]).toBeLessThanOrEqual(row.rolloutMs[k]);
      expect(row.tokens).toBeGreaterThan(0);
      expect(Number.isFinite(row.tokensPerSec) && row.tokensPerSec > 0).toBe(true);
      expect(row.turns).toBeGreaterThanOrEqual(1);
    }
  }, 120_000);

  it('parses its options and rejects unknown ones', () => {
    expect(parseBenchArgs(['--quick', '--only', 'kernels,peer']).only).toEqual(['kernels', 'peer']);
    expect(parseBenchArgs(['--only=page', '--no-browser'])).toMatchObject({ only: ['page'], browser: false, node: true, quick: false });
    expect(parseBenchArgs(['--no-node']).node).toBe(false);
    expect(() => parseBenchArgs(['--only', 'gpu'])).toThrow(/unknown section "gpu"/);
    expect(() => parseBenchArgs(['--fast'])).toThrow(/unknown option --fast/);
    expect(parseBenchArgs(['--kernels', 'headGrad,slotGrad', '--kernel-batches=1,128', '--gpu-scales', 'default,64x'])).toMatchObject({
      kernels: ['headGrad', 'slotGrad'], kernelBatches: [1, 128], gpuScales: ['default', '64x'],
    });
    expect(parseBenchArgs(['--page-scales', 'default,scale']).pageScales).toEqual(['default', 'scale']);
    expect(() => parseBenchArgs(['--kernel-batches', '0'])).toThrow(/--kernel-batches/);
    expect(parseBenchArgs(['--kernel-batches', '128,1024x64'])).toMatchObject({ kernelBatches: [128, 1024], kernelGroups: [8, 64] });
    for (const bad of ['1024x65', '1025', 'x8', '16x', '']) expect(() => parseBenchArgs(['--kernel-batches', bad])).toThrow(/--kernel-batches/);
  });

  it('applies the kernel and GPU-scale overrides to the plan', () => {
    const plan = applyArgs(makePlan(false, true), { kernels: ['firstLayerGrad'], kernelBatches: [1, 4, 16, 128], gpuScales: ['64x', 'scale'] });
    expect(plan.kernels.only).toEqual(['firstLayerGrad']);
    expect(plan.kernels.batches).toEqual([1, 4, 16, 128]);
    expect(plan.kernels.paramHidden).toHaveLength(4);
    expect(applyArgs(makePlan(false, true), { kernelBatches: [1024, 1024], kernelGroups: [8, 64] }).kernels.groups).toEqual([8, 64]);
    expect(plan.iteration.gpuScales).toEqual(['64x', 'scale']);
    expect(plan.iteration.scales.find((s) => s.name === 'scale')!.set).toMatchObject({ task: 'sequence', 'model.hidden': '512' });
    expect(() => applyArgs(makePlan(false, true), { gpuScales: ['128x'] })).toThrow(/unknown scale "128x"/);
    expect(makePlan(false, true).page.scales).toEqual(['default']);
    expect(makePlan(false, false).page.scales).toEqual(['default', 'scale']);
    expect(applyArgs(makePlan(false, true), { pageScales: ['64x', 'scale'] }).page.scales).toEqual(['64x', 'scale']);
    expect(() => applyArgs(makePlan(false, true), { pageScales: ['huge'] })).toThrow(/--page-scales: unknown scale "huge"/);
  });

  it('summaries and log-log slopes', () => {
    expect(summarize([3, 1, 2, 10])).toMatchObject({ n: 4, median: 2.5, min: 1, max: 10 });
    expect(logLogSlope([1, 2, 4, 8], [5, 10, 20, 40])).toBeCloseTo(1, 10);
    expect(logLogSlope([1, 2, 4], [3, 12, 48])).toBeCloseTo(2, 10);
    expect(growthWord(1.02)).toBe('about linear');
    expect(growthWord(0.1)).toMatch(/flat/);
  });
  it('bench:host times every task\'s host side of a rollout: a row per task and batch, finite figures', () => {
    const r = spawnSync('npx', ['tsx', '--import', './cli/registerRaw.mjs', 'bench/host.ts', '--batches', '2,4', '--reps', '2'], {
      encoding: 'utf8',
      cwd: process.cwd(),
      timeout: 120_000,
    });
    expect(r.status, r.stderr).toBe(0);
    const rows = r.stdout.split('\n').filter((l) => /^\| (search|tools|roles|sequence) \|/.test(l));
    expect(rows.map((l) => l.split('|').slice(1, 3).map((c) => c.trim()).join(' '))).toEqual(
      ['search', 'tools', 'roles', 'sequence'].flatMap((t) => [`${t} 16`, `${t} 32`]),
    );
    for (const row of rows) {
      const [, , , turns, , rollout, perTurn] = row.split('|').map((c) => c.trim());
      expect(Number(turns)).toBeGreaterThanOrEqual(1);
      const [median, min] = rollout!.split(' / ').map(Number);
      expect(Number.isFinite(median) && median! > 0 && min! <= median!, row).toBe(true);
      expect(Number(perTurn)).toBeGreaterThan(0);
    }
  });
  it('bench:host --trainer replays whole iterations: a row per config and batch, host time inside the iteration\'s', () => {
    const r = spawnSync('npx', ['tsx', '--import', './cli/registerRaw.mjs', 'bench/host.ts', '--trainer', 'search,tools:cm2,search:ppo', '--trainer-batches', '2', '--trainer-reps', '2'], {
      encoding: 'utf8',
      cwd: process.cwd(),
      timeout: 120_000,
    });
    expect(r.status, r.stderr).toBe(0);
    const rows = r.stdout.split('\n').filter((l) => /^\| (search|tools)\S* \|/.test(l));
    expect(rows.map((l) => l.split('|').slice(1, 3).map((c) => c.trim()).join(' '))).toEqual(['search 16', 'tools:cm2 16', 'search:ppo 16']);
    for (const row of rows) {
      const [iteration, backend, host] = row.split('|').slice(3, 6).map((c) => Number(c.trim().split(' / ')[0]));
      expect(host! > 0 && backend! > 0 && backend! <= iteration!, row).toBe(true);
    }
    // Without --tasks, only this table.
    expect(r.stdout).not.toContain('Host side of a rollout');
  });
});
