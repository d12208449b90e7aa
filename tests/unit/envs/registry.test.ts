import { describe, expect, it } from 'vitest';
import { SETTINGS } from '../../../cli/sweepTasks';
import { CONFIG_FIELDS, defaultConfig, TASK_IDS, withFieldText, type RunConfig } from '../../../workers/core/config';
import { createCpuBackend } from '../../../workers/core/cpuBackend';
import { createEnv, TASK_KNOBS } from '../../../workers/core/envs';
import { searchNoiseAt } from '../../../workers/core/envs/search';
import { createRng } from '../../../workers/core/rng';
import { createTrainer } from '../../../workers/core/trainer';
import { dumpBatch } from '../../../workers/formats/batchDump';
import { rollout } from './rollout';

function config(set: Record<string, string>): RunConfig {
  let cfg = defaultConfig();
  for (const [k, v] of Object.entries(set)) cfg = withFieldText(cfg, k, v);
  return cfg;
}

describe('task registry: every task keeps the contract', () => {
  const cases = SETTINGS.map((s) => ({ label: `${s.task}/${s.name}`, cfg: config({ task: s.task, ...s.set }) }));

  it('every env.* knob is read by some task, and each task lists its knobs', () => {
    const used = new Set<string>(Object.values(TASK_KNOBS).flat());
    for (const key of Object.keys(CONFIG_FIELDS)) if (key.startsWith('env.')) expect(used.has(key), key).toBe(true);
    expect(Object.keys(TASK_KNOBS).sort()).toEqual([...TASK_IDS].sort());
    // A knob a task does not list leaves that task unchanged.
    for (const task of TASK_IDS) {
      for (const key of Object.keys(CONFIG_FIELDS).filter((k) => k.startsWith('env.') && !(TASK_KNOBS[task] as readonly string[]).includes(k))) {
        const spec = CONFIG_FIELDS[key as keyof typeof CONFIG_FIELDS];
        const other = spec.kind === 'bool' ? String(!spec.default) : spec.kind === 'choice' ? spec.options.find((o) => o !== spec.default)! : String(spec.max);
        const a = createEnv(config({ task }));
        const b = createEnv(config({ task, [key]: other }));
        expect(b.vocab, `${task} ${key}`).toEqual(a.vocab);
        expect(b.layout, `${task} ${key}`).toEqual(a.layout);
        const ra = rollout(a, a.sample(2, 4, createRng(1), 50), createRng(2)).batch;
        const rb = rollout(b, b.sample(2, 4, createRng(1), 50), createRng(2)).batch;
        expect(Array.from(rb.reward), `${task} ${key}`).toEqual(Array.from(ra.reward));
      }
    }
  });

  it('the sweep covers every task at its default and a hard setting', () => {
    for (const t of TASK_IDS) {
      expect(SETTINGS.some((s) => s.task === t && s.name === 'default' && Object.keys(s.set).length === 0)).toBe(true);
      expect(SETTINGS.some((s) => s.task === t && s.name === 'hard')).toBe(true);
    }
  });

  for (const { label, cfg } of cases) {
    it(`${label}: PAD first, no empty grammar row, lockstep turns, all episodes end, reward = rewardTrue`, () => {
      const env = createEnv(cfg);
      const V = env.vocab.length;
      expect(env.id).toBe(cfg.task);
      expect(env.vocab[0]).toBe('·');
      expect(new Set(env.vocab).size).toBe(V);
      expect(env.grammar.length).toBe(V * V);
      for (let prev = 0; prev < V; prev++) expect(env.grammar.subarray(prev * V, (prev + 1) * V).some((x) => x === 1)).toBe(true);
      const batch = env.sample(8, 4, createRng(1), 0);
      expect(batch.prompt.length).toBe(32 * env.layout.promptLen);
      const { seqs, turnsRun } = rollout(env, batch, createRng(2));
      expect(turnsRun).toBeLessThanOrEqual(env.layout.maxTurns);
      expect(batch.done.every((d) => d === 1)).toBe(true);
      expect(Array.from(batch.reward)).toEqual(Array.from(batch.rewardTrue));
      for (let n = 0; n < 32; n++) {
        expect(batch.turns(n).length).toBeGreaterThan(0);
        expect(batch.describe(n).length).toBeGreaterThan(0);
        // The policy tokens of the turn log are the kept tokens of the sequence, in order.
        const kept = batch.turns(n).flatMap((t) => t.policy);
        const seqKept: number[] = [];
        const { promptLen, actionLen, obsLen } = env.layout;
        for (let t = 0; t < batch.turns(n).length; t++) {
          for (let a = 0; a < actionLen; a++) {
            const tok = seqs[n]![promptLen + t * (actionLen + obsLen) + a]!;
            if (tok !== 0) seqKept.push(tok);
          }
        }
        expect(kept).toEqual(seqKept);
        if (batch.answerTokens) expect(batch.answerTokens.length).toBe(32 * actionLen);
      }
    });
  }
});

describe('trainer with every task (CPU backend)', () => {
  const small = { batch: '2', group: '4', 'model.hidden': '8' };

  for (const task of TASK_IDS) {
    it(`${task}: one iteration; the batch dump carries reward_true and the task's own fields`, async () => {
      const t = await createTrainer(config({ task, ...small }), createCpuBackend);
      const row = await t.step();
      expect(Number.isFinite(row.loss)).toBe(true);
      const d = await dumpBatch(t);
      expect(d.trajs).toHaveLength(8);
      for (const tr of d.trajs) {
        expect(tr.reward_true).toBe(tr.reward);
        expect(tr.role).toBeNull();
        if (task === 'tools') {
          expect(tr.checklist!.length).toBe(tr.turn_rewards!.length);
          expect(tr.checklist![0]![0]).toMatchObject({ item: 'RATE.tool', weight: 0.5, strict: true });
        }
        if (task === 'roles') {
          expect(tr.turn_roles).toEqual(['planner', 'executor', 'planner']);
          expect(Object.keys(tr.role_rewards!)).toEqual(['planner', 'executor']);
        }
        if (task === 'search' || task === 'sequence') expect(tr.checklist ?? tr.turn_roles).toBeUndefined();
      }
      t.destroy();
    });
  }

  it('the trainer gives the task its iteration: the search noise follows the curriculum', async () => {
    const set = { ...small, 'env.noise': '0.5', 'env.noiseSchedule': 'exp', 'env.noiseIters': '4' };
    const t = await createTrainer(config(set), createCpuBackend);
    const o = { noise: 0.5, noiseSchedule: 'exp' as const, noiseStart: 0, noiseBase: 4, noiseIters: 4 };
    for (let i = 1; i <= 5; i++) {
      await t.step();
      // Iteration i is ZeroSearch's step i (its counter starts at 1).
      expect(t.lastBatch!.episodes.info!.search_noise).toBeCloseTo(searchNoiseAt(i, o), 12);
    }
    t.destroy();
  });

  it('noisy reward-model channel: trains on the noisy reward, the dump keeps the true one', async () => {
    const t = await createTrainer(config({ task: 'sequence', ...small, 'env.rmNoise': '0.5', 'env.seqReward': 'partial' }), createCpuBackend);
    await t.step();
    const d = await dumpBatch(t);
    expect(d.trajs.some((tr) => tr.reward !== tr.reward_true)).toBe(true);
    for (const tr of d.trajs) expect([0, 1 / 3, 2 / 3, 1].some((v) => Math.abs(v - tr.reward_true) < 1e-6)).toBe(true);
    t.destroy();
  });
});
