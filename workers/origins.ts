/** Where a trained row came from: the batch dump's `origin` (the collect stage records the index). */
export const ORIGINS = ['policy', 'gec_inject', 'gec_replace', 'hint', 'extra'] as const;
export type Origin = (typeof ORIGINS)[number];
