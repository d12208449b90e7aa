/**
 * How the scalar metrics are grouped into charts. Only the grouping and colours live here; the list
 * of metrics and their explanations come from workers/core/metrics.ts (SCALAR_METRICS, METRIC_DOCS). A
 * metric that no group names gets a chart of its own, so a new metric needs no UI code.
 */
import { SCALAR_METRICS, type ScalarMetric } from '../../workers/core/metrics';

export interface ChartGroup {
  /** The chart's data-testid is `chart-<id>`. */
  id: string;
  title: string;
  metrics: ScalarMetric[];
  /** One line for the chart; without it, the metrics' own METRIC_DOCS. */
  doc?: string;
  /** [0, 1] for fractions; undefined: auto. `unit` keeps 0 and 1 in view but grows past them. */
  domain?: 'fraction' | 'unit' | 'from-zero';
  /** The big chart at the top. */
  large?: boolean;
}

const GROUPS: ChartGroup[] = [
  { id: 'reward', title: 'Reward', metrics: ['reward_mean', 'success_rate'], doc: 'Mean training reward over the batch, and the fraction of rollouts that solved the task.', domain: 'unit', large: true },
  { id: 'groups_all_equal_frac', title: 'Advantage Collapse', metrics: ['groups_all_equal_frac', 'adv_zero_frac'], doc: 'Groups whose rewards are all equal (so every advantage in them is 0), and policy tokens whose advantage is 0 (|A| <= 1e-6).', domain: 'fraction' },
  { id: 'advantage', title: 'Advantage', metrics: ['adv_mean', 'adv_std'], doc: 'Mean and std of the advantage over policy tokens.' },
  { id: 'clip', title: 'Clip fraction', metrics: ['clip_frac', 'clip_frac_low', 'clip_frac_high'], doc: 'Policy tokens whose surrogate was clipped: in all, on the low side, on the high side.', domain: 'from-zero' },
  { id: 'ratio', title: 'IS ratio', metrics: ['ratio_mean', 'ratio_min', 'ratio_max'], doc: 'Importance ratio pi/pi_old over policy tokens: mean, smallest, largest.' },
  { id: 'mismatch', title: 'Sampler vs trainer mismatch', metrics: ['mismatch_logratio', 'mismatch_k3_kl', 'mismatch_chi2_token'], doc: 'How far the rollout sampler\'s log-probs (its precision, top-p, top-k; stale parameters) are from the trainer\'s, per policy token: mean log pi_old/pi_rollout, the k3 KL and the chi-square. All 0 when the sampler is the trainer.' },
  { id: 'mismatch_seq', title: 'Sampler vs trainer per trajectory', metrics: ['mismatch_ppl_ratio', 'mismatch_chi2_seq'], doc: 'Per trajectory: the trainer\'s perplexity over the sampler\'s (1 when they agree) and the chi-square of the sequence ratio.' },
  { id: 'neg_out_grad_share', title: 'Crash diagnosis', metrics: ['neg_out_grad_share'], doc: "Share of the update's gradient from negative-advantage tokens whose ratio is outside [0.8, 1.2] (ARLArena's diagnosis, docs/ARENA.md).", domain: 'fraction' },
  { id: 'entropy', title: 'Entropy', metrics: ['entropy'], domain: 'from-zero' },
  { id: 'kl', title: 'KL to the reference', metrics: ['kl_ref'], domain: 'from-zero' },
  { id: 'grad_norm', title: 'Gradient norm', metrics: ['grad_norm'], domain: 'from-zero' },
  { id: 'ess', title: 'Effective sample size', metrics: ['ess'], domain: 'fraction' },
  { id: 'lr', title: 'Learning rate', metrics: ['lr'] },
  { id: 'loss', title: 'Loss', metrics: ['loss'] },
  { id: 'tokens', title: 'Policy tokens', metrics: ['tokens'], domain: 'from-zero' },
  { id: 'ms', title: 'Iteration time (ms)', metrics: ['ms'], domain: 'from-zero' },
];

const PALETTE = ['#2563eb', '#16a34a', '#dc2626', '#7c3aed', '#ea580c', '#0891b2', '#4b5563', '#db2777'];
const DASHES = [undefined, '5 4', '2 3'];

/** Every scalar metric but `iter`, each in exactly one group, in the order above. */
export function chartGroups(): ChartGroup[] {
  const known = new Set(SCALAR_METRICS as readonly string[]);
  const out = GROUPS.map((g) => ({ ...g, metrics: g.metrics.filter((m) => known.has(m)) })).filter((g) => g.metrics.length > 0);
  const placed = new Set(out.flatMap((g) => g.metrics));
  for (const m of SCALAR_METRICS) {
    if (m !== 'iter' && !placed.has(m)) out.push({ id: m, title: m, metrics: [m] });
  }
  return out;
}

export function seriesStyle(index: number): { color: string; dash: string | undefined } {
  return { color: PALETTE[index % PALETTE.length]!, dash: DASHES[index % DASHES.length] };
}
