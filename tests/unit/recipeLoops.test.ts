/**
 * The recipe through the frameworks' own rollout loops: tests/unit/recipeLoops.py stands in for verl's
 * tool agent loop (its turn accounting and reward plumbing) and TRL's environment_factory tool loop,
 * and drives the recipe's shipped interaction, reward function and environment with the toy's oracle
 * replies. Every task and both tools rewards must give the toy's own reward on every row: the toy
 * rolled out with its oracle is the reference, so a turn the loop never hands to the environment
 * shows as a lower reward. Needs python3 on PATH; without it the tests name themselves skipped.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { defaultConfig, withFieldText, withMethods, type RunConfig } from '../../workers/core/config';
import { METHOD_IDS, methodDef } from '../../workers/core/methods';
import { searchNoiseAt } from '../../workers/core/envs/search';
import { createEnv } from '../../workers/core/envs';
import { resolvePlan } from '../../workers/core/plan';
import { createRng } from '../../workers/core/rng';
import { buildRecipe } from '../../workers/formats/recipe';
import { VERL_MODEL } from '../../workers/formats/recipe/hyper';
import { environmentMethods } from '../../workers/formats/recipe/whatRuns';
import { batchRows } from '../../workers/formats/recipe/rows';

const hasPython = spawnSync('python3', ['--version']).status === 0;
const tmp = mkdtempSync(join(tmpdir(), 'recipe-loops-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** Rows rolled out per case: one playground batch of 16 prompts. */
export const PROMPTS = 16;
const HARNESS = join(import.meta.dirname, 'recipeLoops.py');

function config(task: RunConfig['task'], set: Record<string, string> = {}): RunConfig {
  let cfg = withFieldText(defaultConfig(), 'task', task);
  for (const [k, v] of Object.entries(set)) cfg = withFieldText(cfg, k, v);
  return cfg;
}

export interface OracleRun {
  /** Row id -> the oracle's action per turn, as the words a model would write. */
  replies: Record<string, string[]>;
  /** Row id -> the toy's reward for that rollout. */
  reward: Record<string, number>;
  solved: number;
}

/**
 * The toy's first batch (16 prompts, one rollout each) rolled out with its oracle, on the environment
 * the run trains on (the resolved plan's): the actions it took and the rewards it got.
 */
export function oracleRun(cfg: RunConfig, tamper?: (n: number, turn: number, action: Int32Array, vocab: readonly string[]) => void): OracleRun {
  const env = createEnv(resolvePlan(cfg).envConfig);
  const batch = env.sample(PROMPTS, 1, createRng(cfg.seed).fork(1), 0);
  const rows = batchRows(resolvePlan(cfg).envConfig, 1, PROMPTS);
  const L = env.layout.actionLen;
  const actions: string[][] = rows.map(() => []);
  for (let turn = 0; turn < env.layout.maxTurns; turn++) {
    const a = new Int32Array(PROMPTS * L);
    for (let n = 0; n < PROMPTS; n++) {
      if (batch.done[n]) continue;
      const o = batch.oracle!(n, turn);
      tamper?.(n, turn, o, env.vocab);
      a.set(o, n * L);
      actions[n]!.push(Array.from(o, (t) => env.vocab[t]!).filter((w) => w !== env.vocab[0]).join(' '));
    }
    batch.step(turn, a);
  }
  const replies: Record<string, string[]> = {};
  const reward: Record<string, number> = {};
  rows.forEach((r, n) => {
    replies[r.id] = actions[n]!;
    reward[r.id] = batch.reward[n]!;
  });
  return { replies, reward, solved: batch.success.reduce((s, x) => s + x, 0) };
}

export interface LoopResult {
  verl: Record<string, { reward: number; assistant_turns: number; num_turns: number; cut: string | null; turn_scores: number[] }>;
  trl: Record<string, { reward: number; calls: number; iterations: number }>;
}

/** Writes the recipe of `cfg` and rolls its first batch out through both loops with `replies`. */
export function throughLoops(cfg: RunConfig, name: string, replies: Record<string, string[]>): LoopResult {
  const dir = join(tmp, name.replace(/[^a-z0-9]+/gi, '-'));
  for (const f of buildRecipe(cfg, { episodes: PROMPTS }).files) {
    mkdirSync(dirname(join(dir, f.path)), { recursive: true });
    writeFileSync(join(dir, f.path), f.text);
  }
  const casePath = join(dir, 'case.json');
  writeFileSync(casePath, JSON.stringify({ replies, rows: PROMPTS, batch: 8 }));
  const run = spawnSync('python3', [HARNESS, dir, casePath], { encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`recipeLoops.py failed: ${run.stderr}`);
  return JSON.parse(run.stdout) as LoopResult;
}

/** Every task, and the tools task under both of its rewards; the noise channels off, so one oracle run is the reference. */
const CASES: Array<[string, RunConfig]> = [
  ['search, 1 hop', config('search')],
  ['search, 2 hops', config('search', { 'env.hops': '2' })],
  ['tools, outcome reward', config('tools', { 'env.toolReward': 'outcome' })],
  ['tools, checklist reward', config('tools', { 'env.toolReward': 'checklist' })],
  ['roles', config('roles')],
  ['sequence', config('sequence')],
];

describe('the recipe through verl\'s and TRL\'s rollout loops (oracle replies)', () => {
  for (const [name, cfg] of CASES) {
    it.skipIf(!hasPython)(hasPython ? `${name}: every row gets the toy's reward, 16 of 16, on both` : `SKIPPED: python3 not on PATH (${name})`, () => {
      const toy = oracleRun(cfg);
      // The oracle solves every prompt here: the reference is the task's best reward.
      expect(toy.solved).toBe(PROMPTS);
      const got = throughLoops(cfg, name, toy.replies);
      const ids = Object.keys(toy.reward);
      const verlSame = ids.filter((id) => got.verl[id]!.reward === toy.reward[id]).length;
      const trlSame = ids.filter((id) => got.trl[id]!.reward === toy.reward[id]).length;
      const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
      const summary = `toy ${mean(ids.map((id) => toy.reward[id]!)).toFixed(3)}; verl ${mean(ids.map((id) => got.verl[id]!.reward)).toFixed(3)} (${verlSame}/16), TRL ${mean(ids.map((id) => got.trl[id]!.reward)).toFixed(3)} (${trlSame}/16)`;
      console.log(`${name}: ${summary}`);
      expect(verlSame, summary).toBe(PROMPTS);
      expect(trlSame, summary).toBe(PROMPTS);
      // The environment, not the loop's turn limit, ended every verl rollout.
      for (const id of ids) expect(got.verl[id]!.cut, id).toBeNull();
    });
  }
});

/** verl's advantage estimators (verl/trainer/ppo/core_algos.py:97-109 at b178a3cd5). */
const VERL_ESTIMATORS = ['gae', 'grpo', 'reinforce_plus_plus', 'reinforce_plus_plus_baseline', 'remax', 'rloo', 'opo', 'grpo_passk', 'gpg', 'rloo_vectorized', 'grpo_vectorized', 'optimal_token_baseline', 'tir_optimal_token_baseline'];
/** verl's policy losses (register_policy_loss in core_algos.py:1159-2064). */
const VERL_LOSSES = ['vanilla', 'gspo', 'sapo', 'gpg', 'clip_cov', 'kl_cov', 'geo_mean', 'cispo', 'bypass_mode'];

/** A method on a task it runs on: alone if it is an estimator, beside GRPO otherwise. */
function methodConfig(id: string): RunConfig {
  const def = methodDef(id);
  const task = (def.tasks?.[0] ?? 'search') as RunConfig['task'];
  return withMethods(config(task), def.estimator ? [id] : ['grpo', id]);
}

const overrides = (runSh: string) => Object.fromEntries([...runSh.matchAll(/^\s*"([\w.]+)=([^"]*)"$/gm)].map((m) => [m[1]!, m[2]!]));

describe('every method: the recipe runs something verl has, says what, and keeps the toy\'s rewards', () => {
  for (const id of METHOD_IDS) {
    it.skipIf(!hasPython)(hasPython ? `${id}` : `SKIPPED: python3 not on PATH (${id})`, () => {
      const cfg = methodConfig(id);
      const def = methodDef(id);
      const files = Object.fromEntries(buildRecipe(cfg, { episodes: PROMPTS }).files.map((f) => [f.path, f.text]));
      const runSh = files['verl_run/run.sh']!;
      const o = overrides(runSh);
      // An estimator verl has, always set: verl's default (gae) would start a critic nothing configures.
      expect(VERL_ESTIMATORS).toContain(o['algorithm.adv_estimator']);
      if (o['actor_rollout_ref.actor.policy_loss.loss_mode']) expect(VERL_LOSSES).toContain(o['actor_rollout_ref.actor.policy_loss.loss_mode']);
      if (o['algorithm.adv_estimator'] === 'gae') {
        expect(o['critic.model.path']).toBe(VERL_MODEL);
        expect(o['critic.model.path']).toBe(o['actor_rollout_ref.model.path']);
        expect(Number(o['critic.ppo_micro_batch_size_per_gpu'])).toBeGreaterThan(0);
      }
      // The headers say what runs, and name the method wherever a framework does not run it as such.
      const verlHead = runSh.split('\n').filter((l) => l.startsWith('# ')).join('\n');
      const trlHead = files['trl_run/train_grpo.py']!.split('\n').filter((l) => l.startsWith('# ')).join('\n');
      expect(verlHead).toMatch(/^# What runs: verl's /m);
      expect(trlHead).toMatch(/^# What runs: TRL's GRPOTrainer: GRPO/m);
      const viaEnv = environmentMethods(cfg).some((m) => m.id === id);
      if (!def.frameworks?.verl) expect(verlHead, 'verl header').toContain(`(${id})`);
      if (!def.frameworks?.trl) expect(trlHead, 'TRL header').toContain(`(${id})`);
      if (viaEnv) expect(verlHead).toContain(`Carried by the environment (config.json): ${def.name} (${id})`);
      const readme = files['README.md']!;
      for (const line of [...verlHead.split('\n'), ...trlHead.split('\n')].filter((l) => /^# (What runs|In place of|Not carried|Carried)/.test(l))) {
        expect(readme).toContain(`- ${line.slice(2)}`);
      }
      // The oracle through both loops gets the toy's reward on the environment this method trains on.
      const toy = oracleRun(cfg);
      const got = throughLoops(cfg, `method-${id}`, toy.replies);
      const ids = Object.keys(toy.reward);
      expect(ids.filter((r) => got.verl[r]!.reward === toy.reward[r]).length).toBe(PROMPTS);
      expect(ids.filter((r) => got.trl[r]!.reward === toy.reward[r]).length).toBe(PROMPTS);
    });
  }
});

describe("the recipe's environment is the one the playground trains on", () => {
  it.skipIf(!hasPython)(hasPython ? "CM2: the checklist reward; a wrong last call earns the playground's partial credit through both loops" : 'SKIPPED: python3 not on PATH', () => {
    const cfg = withMethods(config('tools'), ['cm2']);
    expect(cfg.env.toolReward).toBe('outcome');
    const files = Object.fromEntries(buildRecipe(cfg, { episodes: PROMPTS }).files.map((f) => [f.path, f.text]));
    expect(JSON.parse(files['config.json']!).env.toolReward).toBe('checklist');
    // The oracle's calls, but the last one's argument is another code: the tool item is met, the argument is not.
    const last = cfg.env.toolSteps - 1;
    const toy = oracleRun(cfg, (_n, turn, action, vocab) => {
      if (turn !== last) return;
      const word = vocab[action[1]!]!;
      const other = vocab.indexOf(`${word[0]}${(Number(word.slice(1)) + 1) % cfg.env.toolValues}`);
      action[1] = other;
    });
    const rewards = Object.values(toy.reward);
    expect(toy.solved).toBe(0);
    // (1 + 1 + 0.5) / 3: two full turns, the last one's tool item (weight 1/2) alone.
    for (const r of rewards) expect(r).toBeCloseTo(2.5 / 3, 6);
    const got = throughLoops(cfg, 'cm2-wrong-last', toy.replies);
    for (const [id, r] of Object.entries(toy.reward)) {
      expect(got.verl[id]!.reward, id).toBe(r);
      expect(got.trl[id]!.reward, id).toBe(r);
    }
  });

  it("ZeroSearch: every row carries the curriculum's noise for its iteration, as the playground's batches draw it", () => {
    const cfg = withFieldText(withMethods(config('search'), ['grpo', 'zerosearch']), 'batch', '4');
    expect(cfg.env.noiseSchedule).toBe('fixed');
    const files = Object.fromEntries(buildRecipe(cfg, { episodes: 4 * 250 }).files.map((f) => [f.path, f.text]));
    const env = JSON.parse(files['config.json']!).env as RunConfig['env'];
    expect([env.noiseSchedule, env.noise, env.noiseIters]).toEqual(['exp', 0.5, 200]);
    const rows = files['data/train.jsonl']!.trim().split('\n').map((l) => JSON.parse(l) as { iteration: number; search_noise: number });
    const trained = resolvePlan(cfg).envConfig.env;
    for (const r of rows) expect(r.search_noise).toBe(searchNoiseAt(r.iteration, trained));
    expect(rows[0]!.search_noise).toBeGreaterThan(0);
    expect(rows.at(-1)!.search_noise).toBe(0.5);
    // The playground's own batch draws the same p (the env reports it per batch).
    for (const it of [1, 100, 250]) expect(createEnv(resolvePlan(cfg).envConfig).sample(4, 1, createRng(cfg.seed).fork(it), it - 1).info?.search_noise).toBe(rows.find((r) => r.iteration === it)!.search_noise);
  });
});
