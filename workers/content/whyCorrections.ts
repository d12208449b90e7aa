/**
 * Why each rollout correction exists (docs/METHODS.md 5.19), in the form of the paper methods'
 * regimes (why.ts): the baseline's failure when the sampler is not the trainer, then the
 * correction's cure in the same regime, paired by seed, with margins committed before the seeds
 * that test them (round three of WHY_ROUNDS: development seeds 501-508).
 *
 * The regime is an asynchronous engine: a sampler that stores its logits in bf16 and runs 8
 * updates behind the trainer. On this toy the precision and top-p gaps alone are too small to hurt
 * (a bf16 sampler's mean log-ratio is about 1e-5; top-p 0.8 lowered success by 0.07-0.12 on three
 * development seeds, within their spread, and crashed no run), so the gap the corrections face is
 * the stale parameters', which verl lists among the mismatches its corrections are for.
 *
 * Type imports only from why.ts: why.ts reads this table at run time.
 */
import type { ScalarMetric } from '../core/metrics';
import type { WhyRegime, WhyRow, WhyStat } from './why';

const w = (metric: ScalarMetric, agg: WhyStat['agg'], from: number, to: number): WhyStat => ({ metric, agg, from, to });

/** The asynchronous engine: search from a pretrained start, 16 prompts x 8 rollouts, 2 minibatches per batch at lr 0.03, a bf16 sampler. */
const ASYNC = { init: 'pretrained', minibatches: '2', lr: '0.03', 'rollout.precision': 'bf16' } as const;
const ASYNC_NOTE = 'search from a pretrained start, 1 hop, 8 values, 16 prompts x 8 rollouts, 2 minibatches per batch at lr 0.03, the sampler in bf16; healthy: the sampler has the trainer\'s parameters; diseased: the sampler is 8 updates behind';
/** About half the development seeds' gap (-0.444 [-0.578, -0.309] on 501-508). */
const ASYNC_DISEASE: WhyRow = { label: 'success', stat: w('success_rate', 'mean', 21, 100), dir: -1, margin: 0.2 };
const ASYNC_SEE = 'GRPO with a bf16 sampler 8 updates behind the trainer: the mismatch (k3 KL) is large, success falls from its early level and most runs crash (the arena\'s rule), far below GRPO with a fresh bf16 sampler in iterations 21-100.';
const ALSO = [w('mismatch_k3_kl', 'mean', 1, 100), w('mismatch_chi2_seq', 'mean', 1, 100), w('tokens', 'mean', 1, 100)];
const WHY_STALE_SAMPLER = 'When the rollouts come from a sampler that is not the trainer (an inference engine in bf16, with top-p, or several updates behind), PPO\'s ratio against the trainer\'s old policy does not see the gap; tokens the sampler drew that the trainer finds unlikely get large, unweighted gradients.';

const regime = (method: string, cureMargin: number, see: string, extra: Partial<WhyRegime> = {}): WhyRegime => ({
  method,
  baseline: 'grpo',
  why: WHY_STALE_SAMPLER,
  regime: ASYNC_NOTE,
  set: ASYNC,
  healthy: {},
  sick: { staleness: '8' },
  cure: { methods: `grpo,${method}` },
  iters: 100,
  disease: ASYNC_DISEASE,
  cureRow: { label: 'success', stat: w('success_rate', 'mean', 21, 100), dir: 1, margin: cureMargin },
  also: ALSO,
  see: { disease: ASYNC_SEE, cure: see },
  found: true,
  round: 3,
  ...extra,
});

/** Where a correction did not cure on the development seeds: what it did there, seed by seed (cure minus diseased baseline, success in iterations 21-100). */
const NOT_CURED = (what: string) =>
  `Development seeds 501-508, the same regime: ${what} The diseased baseline crashed on 5 of 8, the veto on none (+0.384 [+0.238, +0.531], every seed above 0). The precision and top-p gaps alone were tried first (bf16 with top-p 0.8, fp16 with top-k 2, lr 0.03, 3 seeds each): success fell by 0.07-0.12, within the seeds' spread, no run crashed, and no correction changed that by more than the spread; the default-threshold token rejection and the veto rejected nothing there.`;

export const WHY_CORRECTIONS: Readonly<Record<string, WhyRegime>> = {
  veto: regime('veto', 0.2, 'GRPO + veto: trajectories with a token the trainer finds near impossible (ratio to the sampler below 1e-4) leave the loss, and success in iterations 21-100 stays near the fresh sampler\'s, far above GRPO\'s with the stale one, with no crash.', {
    note: 'Development seeds 501-508: +0.384 [+0.238, +0.531], above 0 on every seed; no crash against the baseline\'s 5 of 8. verl removed the veto; its successor is two-sided sequence rejection (seqrs with seq_max_k2), which is not this entry\'s default (seq_sum_k1) and was not tried here.',
  }),
  seqis: regime('seqis', 0.1, 'GRPO + sequence-level IS: each trajectory\'s loss weighted by its truncated sequence ratio.', {
    found: false,
    tried: NOT_CURED('the sequence IS weight (truncated at 2) gave +0.101 [-0.160, +0.361]: +0.53, +0.02, +0.12, -0.56, +0.17, +0.30, +0.08, +0.15; 3 of 8 crashed. The weight is below 1 exactly on the trajectories that carry the catastrophic tokens, so it shrinks their gradient without removing it.'),
  }),
  tis: regime('tis', 0.1, 'GRPO + token-level truncated IS: each token\'s loss weighted by min(ratio to the sampler, 2).', {
    found: false,
    tried: NOT_CURED('the token TIS weight gave -0.006 [-0.182, +0.170] (5 of 8 crashed): a token the trainer finds near impossible gets a weight near 0, but the other tokens of its trajectory keep their full, stale gradient.'),
  }),
  tokenrs: regime('tokenrs', 0.1, 'GRPO + token rejection: tokens whose ratio to the sampler is outside [0.5, 2] leave the loss.', {
    found: false,
    tried: NOT_CURED('token rejection gave -0.154 [-0.440, +0.131] (6 of 8 crashed): removing single tokens leaves the rest of a diverged trajectory in the update.'),
  }),
  seqrs: regime('seqrs', 0.1, 'GRPO + sequence rejection: trajectories whose summed log-ratio is outside [log 0.5, log 2] leave the loss.', {
    found: false,
    tried: NOT_CURED('sequence rejection (seq_sum_k1, bounds 0.5 and 2) gave +0.020 [-0.211, +0.251] (5 of 8 crashed), training on about 0.7 of the baseline\'s tokens: the bounds reject on the whole trajectory\'s drift, not on its worst token.'),
  }),
  geors: regime('geors', 0.1, 'GRPO + geometric rejection: trajectories whose geometric-mean ratio to the sampler is outside [0.999, 1.001] leave the loss.', {
    found: false,
    tried: NOT_CURED('geometric rejection made it worse: -0.411 [-0.544, -0.278], every seed below 0, 8 of 8 crashed, training on about 0.37 of the baseline\'s tokens: with a sampler 8 updates behind, most trajectories drift past its tight bounds, and the few kept are the ones the policy has already moved least on.'),
  }),
};
