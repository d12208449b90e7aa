/**
 * The explainer (workers/explain/) against the trainer: for every method, and every cell of the
 * arena's full grid, a few CPU iterations off-policy (2 epochs x 2 minibatches, so ratios leave 1
 * and clips happen), then every number the batch dump holds and the explainer derives -- each
 * token's advantage, ratio, clip, KL and loss, each turn reward and trajectory reward with a
 * formula, VCPO's per-step ESS, the batch's loss -- must equal the trainer's to float32 rounding.
 * A formula the explanation shows therefore cannot silently differ from the one that ran.
 */
import { describe, expect, it } from 'vitest';
import { defaultConfig, withFieldText, type RunConfig } from '../../workers/core/config';
import { createCpuBackend } from '../../workers/core/cpuBackend';
import { METHOD_IDS, methodDef, type MethodDef } from '../../workers/core/methods';
import { createTrainer } from '../../workers/core/trainer';
import { ARENA_PRESETS, arenaCells, cellConfig } from '../../workers/content/arena/dimensions';
import { dumpBatch, type BatchDump } from '../../workers/formats/batchDump';
import { checkAll, explain, explainBatch, type Check } from '../../workers/explain';
import { labDumpOf } from '../../workers/explain/labDump';
import { withMethods } from '../../workers/core/config';
import { createRunFile, parseRunFile, serializeRunFile } from '../../workers/formats/runFile';

const OFF_POLICY = { batch: '3', group: '4', 'model.hidden': '8', epochs: '2', minibatches: '2', seed: '5' };

/** Options and compositions the defaults do not reach: each estimator's variants, the KL types, the sampling-stage methods at work. */
const VARIANTS: Array<[string, Record<string, string>, number]> = [
  ['IGPO joint pool, gamma 0.9, prob_diff', { methods: 'igpo', 'igpo.norm': 'joint', 'igpo.gamma': '0.9', 'igpo.igType': 'prob_diff' }, 2],
  ['CM2 turn level', { task: 'tools', methods: 'cm2', 'cm2.level': 'turn' }, 2],
  ['CM2 with std, judge noise', { task: 'tools', methods: 'cm2', 'cm2.stdNorm': 'true', 'env.judgeNoise': '0.2' }, 2],
  ['REINFORCE++-baseline, gamma 0.9', { methods: 'reinforcepp', 'reinforcepp.baseline': 'true', 'reinforcepp.gamma': '0.9' }, 2],
  ['EDGE-GRPO clamped, corrections', { methods: 'grpo,edge', 'edge.clamp': 'true', 'edge.inject': '0.5', 'edge.replace': '0.5' }, 3],
  ['VCPO proxy norm, staleness 2', { methods: 'vcpo', staleness: '2', 'vcpo.gradNorm': 'proxy', 'vcpo.rule': 'linear' }, 3],
  ['VCPO one epoch: every step\'s ESS derivable', { methods: 'vcpo', staleness: '1', epochs: '1' }, 3],
  ['DARS', { methods: 'grpo,dars' }, 2],
  ['PF-PPO pow weights', { methods: 'grpo,pfppo', 'pfppo.weighting': 'pow' }, 2],
  ['KL k1', { methods: 'grpo', klType: 'k1' }, 2],
  ['KL k2', { methods: 'grpo', klType: 'k2' }, 2],
  ['SAMPO past its cold start (filtering)', { methods: 'sampo' }, 7],
  ['GiGPO gamma 0.8, no std', { methods: 'gigpo', 'gigpo.gamma': '0.8', 'gigpo.scaleStd': 'false' }, 2],
  ['Dr. MAS over RLOO', { task: 'roles', methods: 'rloo,drmas' }, 2],
  ['Dr. MAS, role scale', { task: 'roles', methods: 'grpo,drmas', 'env.roleScale': '2', 'env.roleOffset': '0.5' }, 2],
  ['PPO gamma 0.9 lambda 0.8', { methods: 'ppo', 'ppo.gamma': '0.9', 'ppo.lambda': '0.8' }, 3],
  ['OTB without the zero tail', { methods: 'otb', 'otb.zeroTail': 'false' }, 2],
  ['SeeUPO, 3 epochs', { methods: 'grpo,seeupo', epochs: '3' }, 2],
  ['ReGFT after its fine-tuning stage', { methods: 'grpo,regft', 'regft.iters': '2' }, 3],
  ['DAPO refilling', { methods: 'grpo,dapo' }, 3],
  ['noisy reward model, partial credit', { task: 'sequence', methods: 'grpo', 'env.rmNoise': '0.5', 'env.seqReward': 'partial' }, 2],
  ['GSPO, 3 epochs', { methods: 'grpo,gspo', epochs: '3' }, 2],
  ['GMPO, 4 epochs', { methods: 'grpo,gmpo', epochs: '4' }, 2],
];

/** The method's own task where it needs one; an estimator where it has none. */
function methodConfig(id: string): RunConfig {
  const def = methodDef(id) as MethodDef;
  let cfg = withFieldText(defaultConfig(), 'task', def.tasks?.[0] ?? 'search');
  for (const [k, v] of Object.entries(OFF_POLICY)) cfg = withFieldText(cfg, k, v);
  // Stale rollouts for VCPO, so its IS weights and ESS leave 1.
  if (id === 'vcpo') cfg = withFieldText(cfg, 'staleness', '1');
  // The rollout corrections against a sampler that is not the trainer, so their weights leave 1
  // and their rejections take tokens out (the veto at a threshold this toy's ratios reach).
  if (['tis', 'seqis', 'tokenrs', 'seqrs', 'geors', 'veto'].includes(id)) {
    for (const [k, v] of Object.entries({ 'rollout.precision': 'bf16', 'rollout.topK': '3', 'veto.tau': '0.9' })) cfg = withFieldText(cfg, k, v);
  }
  // A KL term in every loss, so it is checked too.
  cfg = withFieldText(cfg, 'klCoef', '0.01');
  return withFieldText(cfg, 'methods', def.estimator ? id : `grpo,${id}`);
}

async function dumpOf(cfg: RunConfig, iters: number): Promise<BatchDump> {
  const t = await createTrainer(cfg, createCpuBackend);
  for (let i = 0; i < iters; i++) await t.step();
  const d = await dumpBatch(t);
  t.destroy();
  return d;
}

/** Tallies across the file, printed at the end: methods x tokens checked and the largest error. */
const tally = { runs: 0, tokens: 0, checks: 0, maxRel: 0, worst: '', maxTokenRel: 0 };

function expectAllAgree(name: string, d: BatchDump, checks: Check[]): void {
  const bad = checks.filter((c) => !c.ok);
  expect(bad.map((c) => `${JSON.stringify(c.ref)}: explained ${c.value}, trainer ${c.trainer}`), name).toEqual([]);
  tally.runs++;
  tally.tokens += d.trajs.reduce((a, t) => a + t.tokens.length, 0);
  tally.checks += checks.length;
  for (const c of checks) {
    if (c.rel > tally.maxRel) [tally.maxRel, tally.worst] = [c.rel, `${name} ${JSON.stringify(c.ref)}`];
    if (c.ref.kind === 'token') tally.maxTokenRel = Math.max(tally.maxTokenRel, c.rel);
  }
  // Per token the two agree to float32 rounding itself (a few ulps), well inside the tolerance the page uses.
  expect(Math.max(0, ...checks.filter((c) => c.ref.kind === 'token').map((c) => c.rel)), name).toBeLessThan(2 ** -21);
}

describe('the explainer equals the trainer, number for number', () => {
  for (const id of METHOD_IDS) {
    it(`${id}: every token's advantage, ratio, clip, KL and loss; turn and trajectory rewards; the batch loss`, async () => {
      // ReGFT's first iterations are its fine-tuning stage: iteration 2 is one of them.
      const d = await dumpOf(methodConfig(id), 2);
      const { checks, unavailable } = checkAll(d);
      const tokens = d.trajs.reduce((a, t) => a + t.tokens.length, 0);
      expect(tokens).toBeGreaterThan(0);
      // Five per token at least, so no quantity was skipped.
      expect(checks.filter((c) => c.ref.kind === 'token').length).toBeGreaterThanOrEqual(5 * tokens);
      expectAllAgree(id, d, checks);
      // What cannot be derived is only ever the earlier optimizer steps' ESS (their parameters' log-probs are not in the dump).
      for (const u of unavailable) expect(u.ref.kind, u.why).toBe('opt_step');
    });
  }

  it('ratios left 1 and clips happened somewhere: the off-policy setting exercises the clip branches', async () => {
    const d = await dumpOf(methodConfig('grpo'), 2);
    const toks = d.trajs.flatMap((t) => t.tokens);
    expect(toks.some((k) => k.ratio !== 1)).toBe(true);
    expect(checkAll(d).checks.every((c) => c.ok)).toBe(true);
  });

  it('a run file keeps what the explainer reads: an exported and imported batch explains the same', async () => {
    for (const set of ['gigpo', 'grpo,dars', 'cm2'] as const) {
      const cfg = set === 'cm2' ? withFieldText(withFieldText(methodConfig('cm2'), 'cm2.level', 'turn'), 'methods', 'cm2') : methodConfig(set.split(',').pop()!);
      const d = await dumpOf(cfg, 2);
      const text = serializeRunFile(createRunFile({ config: cfg, metrics: [], batch: d }));
      const parsed = parseRunFile(text);
      expect(parsed.ok, set).toBe(true);
      const back = parsed.ok ? parsed.run.batch! : null;
      expect(back?.plan, set).toEqual(d.plan);
      const { checks } = checkAll(back!);
      expect(checks.length, set).toBe(checkAll(d).checks.length);
      expect(checks.every((c) => c.ok), set).toBe(true);
    }
  });

  it('a changed number is caught: the explainer recomputes, it does not copy', async () => {
    const d = await dumpOf(methodConfig('grpo'), 2);
    const n = d.trajs.findIndex((t) => t.tokens.length > 0 && t.tokens[0]!.adv !== 0);
    const k = d.trajs[n]!.tokens[0]!;
    const before = explain(explainBatch(d), { kind: 'token', q: 'adv', traj: n, tok: 0 });
    expect(before.status).toBe('checked');
    k.adv = Math.fround(k.adv * 1.001);
    const after = explain(explainBatch(d), { kind: 'token', q: 'adv', traj: n, tok: 0 });
    expect(after.status).toBe('mismatch');
    expect(after.value).toBe(before.value);
    // A reward changed after the fact moves the explained advantage, not the trainer's.
    d.trajs[n]!.reward += 0.5;
    expect(explain(explainBatch(d), { kind: 'token', q: 'adv', traj: n, tok: 0 }).value).not.toBe(before.value);
  });
});

describe('the explainer under options and compositions', () => {
  for (const [name, set, iters] of VARIANTS) {
    it(name, async () => {
      let cfg = defaultConfig();
      const all: Record<string, string> = { ...OFF_POLICY, klCoef: '0.01', ...set };
      if (all.task) cfg = withFieldText(cfg, 'task', all.task);
      cfg = withFieldText(cfg, 'methods', all.methods!);
      for (const [k, v] of Object.entries(all)) if (k !== 'task' && k !== 'methods') cfg = withFieldText(cfg, k, v);
      const d = await dumpOf(cfg, iters);
      expectAllAgree(name, d, checkAll(d).checks);
    });
  }
});

describe("the arena's composed cells", () => {
  const grid = ARENA_PRESETS.find((p) => p.id === 'grid')!.spec;
  const { cells } = arenaCells(grid);
  it('the grid has cells to check', () => expect(cells.length).toBeGreaterThan(20));
  for (const cell of cells) {
    it(`${cell.label}`, async () => {
      let cfg = cellConfig(grid, cell, 1);
      for (const [k, v] of Object.entries({ batch: '3', group: '4', 'model.hidden': '8' })) cfg = withFieldText(cfg, k, v);
      const d = await dumpOf(cfg, 2);
      const { checks } = checkAll(d);
      expectAllAgree(cell.label, d, checks);
    });
  }
});

describe('the batch lab: every set re-scored on one frozen batch', () => {
  for (const task of ['search', 'tools', 'roles'] as const) {
    it(`${task}: each method's set, every token's advantage, aggregation weight and gradient weight as the lab computed them`, async () => {
      let cfg = withFieldText(defaultConfig(), 'task', task);
      for (const [k, v] of Object.entries({ batch: '3', group: '4', 'model.hidden': '8', seed: '5', klCoef: '0.01' })) cfg = withFieldText(cfg, k, v);
      const t = await createTrainer(cfg, createCpuBackend);
      for (let i = 0; i < 2; i++) await t.step();
      let sets = 0;
      for (const id of METHOD_IDS) {
        const def = methodDef(id) as MethodDef;
        if (def.tasks && !def.tasks.includes(task)) continue;
        const lab = await labDumpOf(t, withMethods(t.config, def.estimator ? [id] : ['grpo', id]));
        const { checks } = checkAll(lab.dump, lab);
        expect(checks.filter((c) => c.ref.kind === 'token' && c.ref.q === 'grad').length, id).toBe(lab.dump.trajs.reduce((a, x) => a + x.tokens.length, 0));
        expectAllAgree(`lab ${task} ${id}`, lab.dump, checks);
        sets++;
      }
      expect(sets).toBeGreaterThan(20);
      t.destroy();
    });
  }
});

describe('coverage', () => {
  it('prints the tally', () => {
    console.log(
      `explainer checks: ${tally.runs} runs, ${tally.tokens} tokens, ${tally.checks} numbers; largest relative difference ${tally.maxRel.toExponential(2)} (${tally.worst}), per token ${tally.maxTokenRel.toExponential(2)}`,
    );
    expect(tally.runs).toBeGreaterThan(0);
  });
});
