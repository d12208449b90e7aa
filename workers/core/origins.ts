/**
 * Where a row's trajectory came from (the batch dump's `origin`; the collect stage records the
 * index): the policy's own rollout, an EDGE-GRPO correction (the reference finished it, or replaced
 * it), a ReGFT hinted rollout, a DARS extra rollout, or a DARS slot its prompt did not use (never
 * rolled out; it belongs to the prompt before it and holds no token).
 */
export const ORIGINS = ['policy', 'gec_inject', 'gec_replace', 'hint', 'extra', 'unused'] as const;
export type Origin = (typeof ORIGINS)[number];
