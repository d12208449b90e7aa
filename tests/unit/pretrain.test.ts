/**
 * The pretrained start: seeded, cached, better than the random weights on a task it was not shown
 * directly, the reference policy of the KL term starting there, and its config keys validated.
 */
import { describe, expect, it } from 'vitest';
import { ConfigError, defaultConfig, getField, parseConfig, withFieldText, type RunConfig } from '../../workers/core/config';
import { createCpuBackend } from '../../workers/core/cpuBackend';
import { createEnv } from '../../workers/core/envs';
import { clearPretrainCache, demoConfig, isPretrainCached, pretrainKey } from '../../workers/core/pretrain';
import { decodeShareLink, encodeShareLink } from '../../workers/content/shareLink';
import { createTrainer, initialParams, startParams } from '../../workers/core/trainer';

function config(sets: Record<string, string>): RunConfig {
  let cfg = defaultConfig();
  for (const [k, v] of Object.entries(sets)) cfg = withFieldText(cfg, k, v);
  return cfg;
}

const HARD_SEARCH = { 'env.values': '32', init: 'pretrained', 'init.steps': '30' };

describe('pretrained start', () => {
  it('is deterministic for the seed and differs across seeds', () => {
    const cfg = config(HARD_SEARCH);
    const env = createEnv(cfg);
    clearPretrainCache();
    const a = startParams(cfg, env).params;
    clearPretrainCache();
    const b = startParams(cfg, env).params;
    expect(b).toEqual(a);
    const other = config({ ...HARD_SEARCH, seed: '2' });
    expect(startParams(other, createEnv(other)).params).not.toEqual(a);
  });

  it('starts well above the random weights on 32 values, having seen at most 8 of them', () => {
    const cfg = config(HARD_SEARCH);
    const { pretrain } = startParams(cfg, createEnv(cfg));
    expect(demoConfig(cfg).env.values).toBe(8);
    expect(pretrain!.startSuccess).toBeGreaterThan(pretrain!.scratchSuccess + 0.08);
    // The demonstrator errs (demoNoise 0.2), so it and the policy fail often.
    expect(pretrain!.demoSuccess).toBeLessThan(0.95);
    expect(pretrain!.startSuccess).toBeLessThan(0.6);
  });

  it('scratch is the random weights, untouched', () => {
    const cfg = config({ 'env.values': '32' });
    const env = createEnv(cfg);
    const s = startParams(cfg, env);
    expect(s.pretrain).toBeNull();
    expect(s.params).toEqual(initialParams(cfg, env));
  });

  it('is cached per (task, model, init, seed): a second run, or one with other noise, does not retrain', () => {
    const cfg = config({ ...HARD_SEARCH, 'init.steps': '12' });
    const env = createEnv(cfg);
    clearPretrainCache();
    expect(isPretrainCached(cfg)).toBe(false);
    const calls: number[] = [];
    startParams(cfg, env, (done) => calls.push(done));
    expect(calls).toHaveLength(12);
    const noisy = withFieldText(cfg, 'env.noise', '0.3');
    expect(pretrainKey(noisy)).toBe(pretrainKey(cfg));
    const again: number[] = [];
    const b = startParams(noisy, createEnv(noisy), (done) => again.push(done));
    expect(again).toEqual([12]);
    expect(b.params).toEqual(startParams(cfg, env).params);
    expect(pretrainKey(withFieldText(cfg, 'model.hidden', '32'))).not.toBe(pretrainKey(cfg));
    expect(pretrainKey(withFieldText(cfg, 'init.demoNoise', '0.5'))).not.toBe(pretrainKey(cfg));
  });

  it('is where the policy and the reference policy start', async () => {
    const cfg = config({ ...HARD_SEARCH, batch: '2', group: '2', klCoef: '0.1' });
    const env = createEnv(cfg);
    const start = startParams(cfg, env).params;
    const trainer = await createTrainer(cfg, (shape, params) => createCpuBackend(shape, params));
    const state = (await trainer.snapshotNow()).state;
    expect(state.params).toEqual(start);
    expect(state.ref).toEqual(start);
    expect(trainer.pretrain!.startSuccess).toBeGreaterThan(0);
    await trainer.step();
    expect((await trainer.snapshotNow()).state.ref).toEqual(start);
    trainer.destroy();
  });

  it('every task pretrains from its demonstrator', () => {
    for (const task of ['tools', 'roles', 'sequence']) {
      const cfg = config({ task, init: 'pretrained', 'init.steps': '5' });
      const r = startParams(cfg, createEnv(cfg)).pretrain!;
      expect(r.demoLoss, task).toBeGreaterThan(0);
      expect(Number.isFinite(r.demoLoss), task).toBe(true);
    }
  });
});

describe('init config keys', () => {
  it('init is a setting and the prefix of its knobs', () => {
    const cfg = config({ init: 'pretrained', 'init.steps': '50', 'init.demos': 'task' });
    expect(getField(cfg, 'init')).toBe('pretrained');
    expect(cfg.init).toEqual({ mode: 'pretrained', steps: 50, demoNoise: 0.2, demos: 'task' });
    expect(parseConfig(JSON.parse(JSON.stringify(cfg))).init).toEqual(cfg.init);
    expect(parseConfig({ init: 'pretrained' }).init.mode).toBe('pretrained');
    expect(encodeShareLink(cfg)).toBe('#v=1&init=pretrained&init.steps=50&init.demos=task');
    expect(decodeShareLink(encodeShareLink(cfg)).config.init).toEqual(cfg.init);
  });

  it('a bad value names its key', () => {
    expect(() => withFieldText(defaultConfig(), 'init', 'sft')).toThrow(ConfigError);
    expect(() => withFieldText(defaultConfig(), 'init', 'sft')).toThrow(/^init: /);
    expect(() => withFieldText(defaultConfig(), 'init.demoNoise', '2')).toThrow(/^init.demoNoise: /);
    expect(() => parseConfig({ init: { mode: 'warm' } })).toThrow(/^init: /);
  });
});
