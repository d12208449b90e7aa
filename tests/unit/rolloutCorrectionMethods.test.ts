/**
 * The rollout-correction entries (workers/core/methods/rolloutCorrections.ts): their hooks compose
 * one verl-style correction in plan.rolloutCorrection that kernels/loss/rolloutCorrection.ts
 * accepts, their verl and TRL mappings name the reference's keys, and their refusals are the ones
 * docs/METHODS.md 5.19 gives.
 */
import { describe, expect, it } from 'vitest';
import { parseRolloutRs, rolloutCorrection } from '../../kernels/loss/rolloutCorrection';
import { defaultConfig, withMethods } from '../../workers/core/config';
import { exportToFramework } from '../../workers/formats/frameworkExport';
import { resolvePlan, type Plan } from '../../workers/core/plan';
import type { MethodDef } from '../../workers/core/methods/registry';
import { ROLLOUT_CORRECTION_METHODS } from '../../workers/core/methods/rolloutCorrections';
import type { ParamValues } from '../../workers/core/methods/params';

const ENTRIES = Object.values(ROLLOUT_CORRECTION_METHODS) as MethodDef[];
const defaults = (d: MethodDef) => Object.fromEntries(Object.entries(d.params).map(([k, s]) => [k, s.default])) as ParamValues<MethodDef['params']>;
const base = (): Plan => resolvePlan(defaultConfig());
const withHooks = (ids: Array<keyof typeof ROLLOUT_CORRECTION_METHODS>, over: Record<string, Record<string, unknown>> = {}): Plan => {
  const plan = base();
  // In the order the registry runs them (ROLLOUT_CORRECTION_METHODS' order).
  for (const d of ENTRIES) if ((ids as string[]).includes(d.id)) d.plan!(plan, { ...defaults(d), ...(over[d.id] ?? {}) } as never, defaultConfig());
  return plan;
};

describe('the rollout-correction entries', () => {
  it('are well-formed entries: ids, arXiv ids, defaults inside their ranges, a hook each', () => {
    for (const d of ENTRIES) {
      expect(d.id).toMatch(/^[a-z][a-z0-9]*$/);
      expect(d.paper).toMatch(/^\d{4}\.\d{5}$/);
      expect(typeof d.plan).toBe('function');
      for (const [k, s] of Object.entries(d.params)) {
        if (s.kind === 'number' || s.kind === 'int') expect(s.default >= s.min && s.default <= s.max, `${d.id}.${k}`).toBe(true);
        if (s.kind === 'choice') expect(s.options).toContain(s.default);
      }
    }
  });

  it('a run without them has no correction', () => {
    expect(base().rolloutCorrection).toBeNull();
  });

  it("compose verl's one config: an IS level, chained rejections, the veto", () => {
    const plan = withHooks(['tis', 'tokenrs', 'geors', 'veto']);
    expect(plan.rolloutCorrection).toEqual({
      rolloutIs: 'token', rolloutIsThreshold: 2, rolloutIsBatchNormalize: false,
      rolloutRs: 'token_k1,seq_mean_k1', rolloutRsThreshold: '0.5_2,0.999_1.001',
      vetoThreshold: 1e-4,
    });
    const c = plan.rolloutCorrection!;
    expect(parseRolloutRs(c.rolloutRs!, c.rolloutRsThreshold!).map((o) => o.bounds)).toEqual([{ lower: 0.5, upper: 2 }, { lower: 0.999, upper: 1.001 }]);
    // The kernels' reference runs it: a rollout off by 1 % per token fails the geometric band.
    const r = rolloutCorrection([0, 0, 0, 0], [-0.01, -0.01, 0, 0], [1, 1, 1, 1], 2, c);
    expect(Array.from(r.mask)).toEqual([0, 0, 1, 1]);
    expect(r.weights![0]).toBeCloseTo(Math.exp(0.01), 12);
  });

  it('seqis sets the sequence level; seqrs writes the k2/k3 bound alone, k1 as "lower_upper"', () => {
    expect(withHooks(['seqis'], { seqis: { threshold: 5, batchNorm: true } }).rolloutCorrection).toMatchObject({ rolloutIs: 'sequence', rolloutIsThreshold: 5, rolloutIsBatchNormalize: true, rolloutRs: null });
    expect(withHooks(['seqrs']).rolloutCorrection).toMatchObject({ rolloutRs: 'seq_sum_k1', rolloutRsThreshold: '0.5_2' });
    expect(withHooks(['seqrs'], { seqrs: { option: 'seq_mean_k3', upper: 0.01 } }).rolloutCorrection).toMatchObject({ rolloutRs: 'seq_mean_k3', rolloutRsThreshold: '0.01' });
    const seqrs = ROLLOUT_CORRECTION_METHODS.seqrs;
    for (const option of (seqrs.params.option as { options: readonly string[] }).options) {
      const c = withHooks(['seqrs'], { seqrs: { option } }).rolloutCorrection!;
      expect(parseRolloutRs(c.rolloutRs!, c.rolloutRsThreshold!)).toHaveLength(1);
    }
  });

  it('refuse what docs/METHODS.md 5.19 refuses, naming it', () => {
    const { tis, seqis, tokenrs, seqrs, geors, veto } = ROLLOUT_CORRECTION_METHODS;
    expect(tis.conflicts).toEqual(expect.arrayContaining(['seqis', 'vcpo', 'regft', 'edge']));
    expect(seqis.conflicts).toEqual(expect.arrayContaining(['tis', 'vcpo', 'regft', 'edge']));
    for (const d of [tokenrs, seqrs, geors, veto]) {
      expect([...d.conflicts].sort()).toEqual(['edge', 'regft']);
    }
  });
});

describe('their framework mappings', () => {
  const verl = (d: MethodDef, over: Record<string, unknown> = {}) => Object.fromEntries(d.frameworks!.verl!({ ...defaults(d), ...over } as never).set.map((s) => [s.key, s.value]));
  it("set verl's algorithm.rollout_correction keys and turn the rollout's log-probs on", () => {
    const { tis, seqis, tokenrs, seqrs, geors, veto } = ROLLOUT_CORRECTION_METHODS;
    expect(verl(tis as MethodDef)).toEqual({
      'algorithm.rollout_correction.rollout_is': 'token',
      'algorithm.rollout_correction.rollout_is_threshold': 2,
      'algorithm.rollout_correction.rollout_is_batch_normalize': false,
      'actor_rollout_ref.rollout.calculate_log_probs': true,
    });
    expect(verl(seqis as MethodDef)['algorithm.rollout_correction.rollout_is']).toBe('sequence');
    expect(verl(tokenrs as MethodDef, { estimator: 'k2', upper: 2.5 })).toMatchObject({
      'algorithm.rollout_correction.rollout_rs': 'token_k2',
      'algorithm.rollout_correction.rollout_rs_threshold': '2.5',
    });
    expect(verl(seqrs as MethodDef)['algorithm.rollout_correction.rollout_rs_threshold']).toBe('0.5_2');
    expect(verl(geors as MethodDef)).toMatchObject({ 'algorithm.rollout_correction.rollout_rs': 'seq_mean_k1', 'algorithm.rollout_correction.rollout_rs_threshold': '0.999_1.001' });
    expect(veto.frameworks!.verl).toBeNull();
    expect(veto.frameworks!.noEquivalent).toMatch(/97eac9048/);
  });
  it('chained in one run, export one verl comma list per rollout_rs key and each shared option once', () => {
    const cfg = withMethods(defaultConfig(), ['grpo', 'tis', 'tokenrs', 'seqrs', 'geors']);
    const out = exportToFramework(cfg, 'verl');
    const keys = out.settings.map((x) => x.key);
    expect(new Set(keys).size).toBe(keys.length);
    const value = (k: string) => out.settings.find((x) => x.key === k)?.value;
    expect(value('algorithm.rollout_correction.rollout_rs')).toBe('token_k1,seq_sum_k1,seq_mean_k1');
    expect(value('algorithm.rollout_correction.rollout_rs_threshold')).toBe('0.5_2,0.5_2,0.999_1.001');
    expect(value('actor_rollout_ref.rollout.calculate_log_probs')).toBe(true);
    // The list is the one the run's plan composes.
    const c = resolvePlan(cfg).rolloutCorrection!;
    expect([c.rolloutRs, c.rolloutRsThreshold]).toEqual([value('algorithm.rollout_correction.rollout_rs'), value('algorithm.rollout_correction.rollout_rs_threshold')]);
  });
  it("map the truncated IS weights onto TRL's vllm_importance_sampling_mode, and nothing else", () => {
    const { tis, seqis, tokenrs, seqrs, geors } = ROLLOUT_CORRECTION_METHODS;
    const trl = (d: MethodDef) => Object.fromEntries(d.frameworks!.trl!(defaults(d) as never).set.map((s) => [s.key, s.value]));
    expect(trl(tis as MethodDef)).toEqual({ vllm_importance_sampling_correction: true, vllm_importance_sampling_mode: 'token_truncate', vllm_importance_sampling_clip_max: 2 });
    expect(trl(seqis as MethodDef).vllm_importance_sampling_mode).toBe('sequence_truncate');
    for (const d of [tokenrs, seqrs, geors]) expect(d.frameworks!.trl).toBeNull();
  });
});
