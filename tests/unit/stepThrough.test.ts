/**
 * Live step-through (docs/EXPLAIN.md "Step through"): its stages against the engine's table of
 * update stages, for every method's run shape; on the CPU backend, stepThrough() changes nothing
 * about the iteration it plays (the same metrics and final batch as step()), and each of its stage
 * dumps explains: every number the explainer checks there equals the trainer's, and what it cannot
 * check at that point it says so.
 */
import { describe, expect, it } from 'vitest';
import { defaultConfig, withFieldText, type RunConfig } from '../../workers/core/config';
import { createCpuBackend } from '../../workers/core/cpuBackend';
import { createEnv } from '../../workers/core/envs';
import { METHOD_IDS, methodDef } from '../../workers/core/methods';
import { resolvePlan } from '../../workers/core/plan';
import { buildShape, createTrainer } from '../../workers/core/trainer';
import { stagesOf, UPDATE_STAGES } from '../../workers/core/update/stages';
import { updateSteps } from '../../workers/core/update/stage';
import { dumpBatch, packStages, unpackBatch } from '../../workers/formats/batchDump';
import { checkAll, explain, explainBatch } from '../../workers/explain';
import { ITERATION_STAGES, stagePositions } from '../../workers/explain/stages';
import { createTrainerApi } from '../../workers/entry/trainerApi';

function config(set: Record<string, string>): RunConfig {
  let cfg = defaultConfig();
  if (set.task) cfg = withFieldText(cfg, 'task', set.task);
  for (const [k, v] of Object.entries(set)) if (k !== 'task') cfg = withFieldText(cfg, k, v);
  return cfg;
}

const methodSet = (id: string, extra: Record<string, string> = {}): RunConfig => {
  const def = methodDef(id);
  return config({
    ...(def.tasks ? { task: def.tasks[0]! } : {}),
    methods: def.estimator ? id : `grpo,${id}`,
    batch: '3',
    group: '4',
    'model.hidden': '8',
    epochs: '2',
    minibatches: '2',
    klCoef: '0.01',
    seed: '5',
    ...(id === 'vcpo' ? { staleness: '1' } : {}),
    ...extra,
  });
};

describe("step-through's stages and the engine's", () => {
  const covered = new Set<string>(ITERATION_STAGES.flatMap((s) => s.engine));

  it('names only stages the engine has', () => {
    const names = UPDATE_STAGES.map((s) => s.name);
    for (const s of ITERATION_STAGES) for (const e of s.engine) expect(names as string[], `${s.name}: ${e}`).toContain(e);
  });

  for (const id of METHOD_IDS) {
    it(`${id}: every update stage its run shape enables is in a step-through stage`, () => {
      const cfg = methodSet(id);
      const plan = resolvePlan(cfg);
      const shape = buildShape(cfg, createEnv(plan.envConfig), plan);
      const enabled = stagesOf(shape).map((s) => s.name);
      expect(enabled.length).toBeGreaterThan(0);
      expect(enabled.filter((n) => !covered.has(n))).toEqual([]);
      // Per optimizer step: ratios, loss, gradient norm and update, each once.
      const positions = stagePositions(updateSteps(shape));
      expect(positions.filter((p) => p.name === 'ratios').length).toBe(updateSteps(shape));
    });
  }
});

async function cpuTrainer(cfg: RunConfig) {
  return createTrainer(cfg, (shape, params) => createCpuBackend(shape, params));
}

/** Every method (each on its own task, beside GRPO where it is no estimator). */
const SETS = METHOD_IDS.map((id) => [id, {}] as const);

describe('stepThrough() on the CPU backend', () => {
  for (const [id, extra] of SETS) {
    it(`${id}: the same iteration as step(), and every stage dump explains`, async () => {
      const cfg = methodSet(id, extra);
      const a = await cpuTrainer(cfg);
      const b = await cpuTrainer(cfg);
      await a.step();
      await b.step();
      const rowA = await a.step();
      const { row: rowB, capture } = await b.stepThrough();
      expect({ ...rowB, ms: 0 }).toEqual({ ...rowA, ms: 0 });
      expect(await dumpBatch(b)).toEqual(await dumpBatch(a));
      expect(capture.steps.length).toBe(updateSteps(b.shape));

      const dumps = (await packStages(b, capture)).map(unpackBatch);
      expect(dumps.map((d) => d.stage?.point ?? 'final')).toEqual(['rewards', 'advantages', ...capture.steps.map(() => 'step'), 'final']);
      for (const d of dumps) {
        const { checks, unavailable } = checkAll(d);
        const bad = checks.filter((c) => !c.ok);
        expect(bad.slice(0, 3), `${d.stage?.point ?? 'final'} ${d.stage?.step?.index ?? ''}`).toEqual([]);
        for (const u of unavailable) expect(u.why.length).toBeGreaterThan(10);
      }
      // At the advantage stage the advantages check and no ratio does; after step k its minibatch's ratios check.
      const adv = checkAll(dumps[1]!);
      expect(adv.checks.some((c) => c.ref.kind === 'token' && c.ref.q === 'adv')).toBe(true);
      expect(adv.checks.some((c) => c.ref.kind === 'token' && c.ref.q === 'ratio')).toBe(false);
      for (const d of dumps.slice(2, -1)) {
        const s = d.stage!.step!;
        const ratios = checkAll(d).checks.filter((c) => c.ref.kind === 'token' && c.ref.q === 'ratio');
        const inStep = ratios.every((c) => c.ref.kind === 'token' && d.trajs[c.ref.traj]!.minibatch === s.minibatch);
        expect(inStep).toBe(true);
        // A minibatch may hold no trained token (ReGFT keeps correct rows only, DARS leaves slots unused).
        const tokens = d.trajs.filter((t) => t.minibatch === s.minibatch).reduce((a, t) => a + t.tokens.length, 0);
        if (tokens > 0) expect(ratios.length, `step ${s.index}`).toBeGreaterThan(0);
        // SeeUPO: a turn stage whose turn no row of the minibatch reached has a zero gradient, as an empty minibatch.
        expect(Number.isFinite(s.grad_norm) && (s.grad_norm > 0 || id === 'seeupo' || tokens === 0)).toBe(true);
        expect(s.params.delta_norm > 0 || id === 'seeupo' || tokens === 0).toBe(true);
        // Never a checked formula for the gradient norm: the batch holds no gradient.
        const g = explain(explainBatch(d), { kind: 'opt_update', step: s.index, q: 'grad_norm' });
        expect(g.status).toBe('unavailable');
        expect(g.trainer).toBe(s.grad_norm);
      }
      // The last step's gradient norm is the metric row's.
      expect(dumps[dumps.length - 2]!.stage!.step!.grad_norm).toBeCloseTo(rowB.grad_norm, 6);
      a.destroy();
      b.destroy();
    });
  }
});

describe("the worker's stepThrough()", () => {
  it('plays the next iteration as a step does, and hands over rewards, advantages, each step and the final batch', async () => {
    const cfg = methodSet('grpo');
    const api = createTrainerApi(undefined);
    const twin = createTrainerApi(undefined);
    await api.configure(cfg, 'cpu');
    await twin.configure(cfg, 'cpu');
    await api.step();
    await twin.step();
    const { row, packs } = await api.stepThrough();
    const stepped = await twin.step();
    expect(row.iter).toBe(2);
    expect({ ...row, ms: 0 }).toEqual({ ...stepped, ms: 0 });
    // 2 epochs x 2 minibatches.
    expect(packs.map((p) => p.stage?.point ?? 'final')).toEqual(['rewards', 'advantages', 'step', 'step', 'step', 'step', 'final']);
    expect(unpackBatch(packs[packs.length - 1]!)).toEqual(unpackBatch((await twin.packBatch())!));
    // Leaving resumes normally: the next iterations are the twin's.
    expect({ ...(await api.step()), ms: 0 }).toEqual({ ...(await twin.step()), ms: 0 });
    await api.dispose();
    await twin.dispose();
  });
});
