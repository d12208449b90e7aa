/**
 * Seq-TIS: sequence-level truncated importance sampling against a sampler that is not the trainer
 * (docs/METHODS.md 5.19; verl's rollout_is=sequence). Every token of rollout i is weighted by
 * w_i = min(exp(clamp(sum_t (logp_old - logp_rollout), +-20)), C), stopped (volcengine/verl@b178a3cd5
 * rollout_corr_helper.py:536-544, 562), optionally divided by its mean over the rollouts
 * (578-594); C = 2 (decoupled_seq_is, algorithm.py:196-207). Unbiased up to the truncation,
 * higher variance than Token-TIS.
 */
import { defineMethod } from './registry';
import { CALCULATE_LOG_PROBS, CORRECTION_LAB_NOTE, correctionOf, FORCED_TOKEN_METHODS, IS_WEIGHT_WHY, VERL_RC } from './rolloutCorrectionShared';

export const seqis = defineMethod({
  id: 'seqis',
  name: 'Seq-TIS',
  paper: '2512.23075',
  idea: 'Weight each rollout by its whole-sequence trainer/sampler probability ratio, truncated at C.',
  stage: 'loss',
  labNote: CORRECTION_LAB_NOTE,
  conflicts: ['tis', 'vcpo', 'otb', ...FORCED_TOKEN_METHODS],
  conflictReasons: { ...IS_WEIGHT_WHY, tis: 'verl has one rollout_is level: the token and the sequence IS weights are two corrections of the same ratio' },
  params: {
    threshold: { kind: 'number', default: 2, min: 1, max: 100, label: 'truncation C', doc: 'Sequence weights above C are truncated to C (verl rollout_is_threshold, default 2; typical 2-10).' },
    batchNorm: { kind: 'bool', default: false, label: 'batch-normalize', doc: 'Divide the truncated weights by their mean over the batch\'s rollouts (verl rollout_is_batch_normalize).' },
  },
  plan(plan, p) {
    Object.assign(correctionOf(plan), { rolloutIs: 'sequence', rolloutIsThreshold: p.threshold, rolloutIsBatchNormalize: p.batchNorm });
  },
  frameworks: {
    verl: (p) => ({
      set: [
        { key: `${VERL_RC}.rollout_is`, value: 'sequence', from: [] },
        { key: `${VERL_RC}.rollout_is_threshold`, value: p.threshold, from: ['seqis.threshold'] },
        { key: `${VERL_RC}.rollout_is_batch_normalize`, value: p.batchNorm, from: ['seqis.batchNorm'] },
        CALCULATE_LOG_PROBS,
      ],
    }),
    trl: (p) => ({
      set: [
        { key: 'vllm_importance_sampling_correction', value: true, from: [] },
        { key: 'vllm_importance_sampling_mode', value: 'sequence_truncate', from: [] },
        { key: 'vllm_importance_sampling_clip_max', value: p.threshold, from: ['seqis.threshold'] },
      ],
      ...(p.batchNorm
        ? { unsupported: [{ param: 'batchNorm', reason: 'TRL does not normalize its importance weights over the batch' }] }
        : { matches: [{ param: 'batchNorm', reason: 'off, as TRL, which does not normalize its importance weights over the batch' }] }),
    }),
  },
});
