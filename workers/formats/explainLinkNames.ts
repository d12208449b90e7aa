/**
 * The words the share link's `explain=` and `stage=` keys accept (workers/formats/shareUrl.ts). The
 * link format owns them so that it reads links without the explainer; workers/explain/ checks its
 * quantities and step-through stages against these lists (explain/types.ts, explain/stages.ts).
 */

/** The per-token quantities a link may name after a token (`explain=ITER.TRAJ.TOKEN:ratio`). */
export const LINK_QUANTITIES = ['adv', 'ratio', 'clip', 'loss', 'kl', 'weight'] as const;
export type LinkQuantity = (typeof LINK_QUANTITIES)[number];

/** Step-through's stages of an iteration, in order (`stage=NAME`). */
export const STAGE_NAMES = ['sample', 'rewards', 'advantages', 'ratios', 'loss', 'gradnorm', 'update'] as const;
export type StageName = (typeof STAGE_NAMES)[number];
