/**
 * Batch lab: one frozen batch re-scored under several method sets. The columns share the
 * batch (same tokens, mask, rewards) and differ exactly where the methods act: GRPO's all-equal
 * groups have zero advantage and zero gradient, Dr. GRPO drops the std, IGPO gives them a signal,
 * DAPO filters them out.
 */
import { describe, expect, it } from 'vitest';
import { rescoreBatch } from '../../workers/core/batchLab';
import { defaultConfig, withFieldText, withMethods } from '../../workers/core/config';
import { createCpuBackend } from '../../workers/core/cpuBackend';
import { createTrainer } from '../../workers/core/trainer';
import { forwardCpu } from '../../kernels/model/mlp';
import { trajGradNormCpu } from '../../kernels/model/trajGradNorm';

describe('batch lab', () => {
  it('re-scores the last batch under several method sets without training', async () => {
    let cfg = defaultConfig();
    for (const [k, v] of Object.entries({ batch: '4', group: '4', seed: '3', 'env.values': '32' })) cfg = withFieldText(cfg, k, v);
    const t = await createTrainer(cfg, createCpuBackend);
    await t.step();
    const before = await t.backend.readParams();
    const sets = [['grpo'], ['drgrpo'], ['igpo'], ['grpo', 'dapo'], ['grpo', 'gspo']];
    const lab = await rescoreBatch(t, sets.map((s) => withMethods(cfg, s)));
    expect(Array.from(await t.backend.readParams())).toEqual(Array.from(before));
    expect(lab.columns.map((c) => c.methods)).toEqual(sets);
    const [grpo, drgrpo, igpo, dapo, gspo] = lab.columns;
    const { N, Tp } = lab;
    // A group whose rewards are all equal: zero under GRPO, a signal under IGPO, filtered by DAPO.
    const members = (k: number) => [...Array(N).keys()].filter((n) => lab.group[n] === k);
    const tiedGroup = [...new Set(lab.group)].find((k) => members(k).every((n) => lab.reward[n] === lab.reward[members(k)[0]!]))!;
    const g = members(tiedGroup);
    expect(g.length).toBeGreaterThan(0);
    const rows = g.flatMap((n) => [...Array(Tp).keys()].map((j) => n * Tp + j)).filter((i) => lab.mask[i]);
    expect(rows.every((i) => grpo!.adv[i] === 0 && grpo!.grad[i] === 0)).toBe(true);
    expect(rows.some((i) => igpo!.adv[i] !== 0)).toBe(true);
    expect(rows.every((i) => dapo!.weight[i] === 0)).toBe(true);
    expect(dapo!.notes.join(' ')).toMatch(/filtered out/);
    // Dr. GRPO: advantages without the std division; GSPO on-policy: the same gradient as GRPO's
    // up to its sequence-mean aggregation.
    const i0 = [...Array(N * Tp).keys()].find((i) => lab.mask[i] && grpo!.adv[i] !== 0);
    if (i0 !== undefined) expect(Math.abs(drgrpo!.adv[i0]!)).not.toBeCloseTo(Math.abs(grpo!.adv[i0]!), 6);
    for (let i = 0; i < N * Tp; i++) if (lab.mask[i]) expect(gspo!.grad[i]).toBeCloseTo(-gspo!.adv[i]! * gspo!.weight[i]!, 6);
  });
  it("VCPO weighs each trajectory by its own gradient norm under the current parameters (the proxy by option)", async () => {
    let cfg = defaultConfig();
    for (const [k, v] of Object.entries({ batch: '4', group: '4', seed: '3', 'env.values': '32' })) cfg = withFieldText(cfg, k, v);
    const t = await createTrainer(cfg, createCpuBackend);
    await t.step();
    const vcpo = withMethods(cfg, ['vcpo']);
    const lab = await rescoreBatch(t, [vcpo, withFieldText(vcpo, 'vcpo.gradNorm', 'proxy')]);
    const [ref, proxy] = lab.columns;
    const { shape } = t;
    const b = t.lastBatch!;
    const params = await t.backend.readParams();
    const f = forwardCpu(params, shape.dims, b.seq, shape.L, shape.trainRowPos, shape.grammar, shape.temperature);
    // On the frozen batch every IS weight is 1: W = g2, A = (R - b) / population std.
    const g2 = trajGradNormCpu({ params, dims: shape.dims, seq: b.seq, L: shape.L, rowPos: shape.trainRowPos, h: f.h, z: f.z, mask: lab.mask, temperature: shape.temperature, logIS: new Float32Array(lab.N), isCap: 8 }, lab.Tp);
    let mixed = 0;
    for (const k of new Set(lab.group)) {
      const g = [...Array(lab.N).keys()].filter((n) => lab.group[n] === k);
      const R = g.map((n) => lab.reward[n]!);
      const mean = R.reduce((x, y) => x + y, 0) / R.length;
      const sd = Math.sqrt(R.reduce((x, y) => x + (y - mean) ** 2, 0) / R.length);
      if (!(sd > 1e-8)) continue;
      mixed++;
      const base = g.reduce((x, n) => x + g2[n]! * lab.reward[n]!, 0) / g.reduce((x, n) => x + g2[n]!, 0);
      for (const n of g) {
        const i = [...Array(lab.Tp).keys()].map((j) => n * lab.Tp + j).find((r) => lab.mask[r]);
        if (i !== undefined) expect(ref!.adv[i]).toBeCloseTo((lab.reward[n]! - base) / sd, 4);
      }
    }
    expect(mixed).toBeGreaterThan(0);
    expect([...Array(lab.N * lab.Tp).keys()].some((i) => lab.mask[i] && Math.abs(ref!.adv[i]! - proxy!.adv[i]!) > 1e-3)).toBe(true);
  });
  it('refuses a method set for another task, and runs before nothing', async () => {
    const cfg = defaultConfig();
    const t = await createTrainer(withFieldText(withFieldText(cfg, 'batch', '2'), 'group', '2'), createCpuBackend);
    await expect(rescoreBatch(t, [cfg])).rejects.toThrow(/no batch yet/);
    await t.step();
    const tools = withMethods(withFieldText(defaultConfig(), 'task', 'tools'), ['cm2']);
    await expect(rescoreBatch(t, [tools])).rejects.toThrow(/task tools/);
  });
});
