/**
 * Token-TIS: token-level truncated importance sampling against a sampler that is not the trainer
 * (docs/METHODS.md 5.19; verl's rollout_is=token). Each policy token's loss is multiplied by the
 * stopped weight w_t = min(exp(clamp(logp_old - logp_rollout, +-20)), C) (volcengine/verl@b178a3cd5
 * rollout_corr_helper.py:530-534, 562), optionally divided by the batch mean over tokens (569-577,
 * 591-594); C = 2 as verl's default and its decoupled_token_is preset
 * (rollout_correction.yaml:9, algorithm.py:182-193).
 */
import { defineMethod } from './registry';
import { CALCULATE_LOG_PROBS, CORRECTION_LAB_NOTE, correctionOf, FORCED_TOKEN_METHODS, IS_WEIGHT_WHY, VERL_RC } from './rolloutCorrectionShared';

export const tis = defineMethod({
  id: 'tis',
  name: 'Token-TIS',
  paper: '2512.23075',
  idea: 'Weight each token by its trainer/sampler probability ratio, truncated at C: corrects the sampler that is not the trainer, token by token.',
  stage: 'loss',
  labNote: CORRECTION_LAB_NOTE,
  conflicts: ['seqis', 'vcpo', 'otb', ...FORCED_TOKEN_METHODS],
  conflictReasons: { ...IS_WEIGHT_WHY, seqis: 'verl has one rollout_is level: the token and the sequence IS weights are two corrections of the same ratio' },
  params: {
    threshold: { kind: 'number', default: 2, min: 1, max: 100, label: 'truncation C', doc: 'Weights above C are truncated to C (verl rollout_is_threshold, default 2; typical 1.5-5). No lower truncation.' },
    batchNorm: { kind: 'bool', default: false, label: 'batch-normalize', doc: 'Divide the truncated weights by their mean over the batch\'s tokens (verl rollout_is_batch_normalize).' },
  },
  plan(plan, p) {
    Object.assign(correctionOf(plan), { rolloutIs: 'token', rolloutIsThreshold: p.threshold, rolloutIsBatchNormalize: p.batchNorm });
  },
  frameworks: {
    verl: (p) => ({
      set: [
        { key: `${VERL_RC}.rollout_is`, value: 'token', from: [] },
        { key: `${VERL_RC}.rollout_is_threshold`, value: p.threshold, from: ['tis.threshold'] },
        { key: `${VERL_RC}.rollout_is_batch_normalize`, value: p.batchNorm, from: ['tis.batchNorm'] },
        CALCULATE_LOG_PROBS,
      ],
    }),
    trl: (p) => ({
      set: [
        { key: 'vllm_importance_sampling_correction', value: true, from: [] },
        { key: 'vllm_importance_sampling_mode', value: 'token_truncate', from: [] },
        { key: 'vllm_importance_sampling_clip_max', value: p.threshold, from: ['tis.threshold'] },
      ],
      ...(p.batchNorm
        ? { unsupported: [{ param: 'batchNorm', reason: 'TRL does not normalize its importance weights over the batch' }] }
        : { matches: [{ param: 'batchNorm', reason: 'off, as TRL, which does not normalize its importance weights over the batch' }] }),
    }),
  },
});
