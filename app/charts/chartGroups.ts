/**
 * The one list of charts: how the scalar metrics are grouped into the live charts, and which of
 * them Compare overlays (one chart per metric: A against B). Only the grouping, axes and colours
 * live here; the metrics, their names in words and their explanations come from
 * workers/core/metrics.ts (SCALAR_METRICS, METRIC_NAMES, METRIC_DOCS). A metric that no group names
 * gets a chart of its own, so a new metric needs no UI code.
 */
import { METRIC_NAMES, SCALAR_METRICS, type ScalarMetric } from '../../workers/meta';
import { niceScale, type AxisScale } from './scale';

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
  /** The metrics Compare overlays, one chart each, in this order. */
  compare?: ScalarMetric[];
}

const GROUPS: ChartGroup[] = [
  { id: 'reward', title: 'Reward', metrics: ['reward_mean', 'success_rate'], doc: 'Mean training reward of the batch, and the fraction of rollouts that solved the task.', domain: 'unit', large: true, compare: ['reward_mean', 'success_rate'] },
  { id: 'groups_all_equal_frac', title: 'Advantage Collapse', metrics: ['groups_all_equal_frac', 'adv_zero_frac'], doc: 'Groups whose rewards all tie (every advantage in them is 0), and tokens whose advantage is 0.', domain: 'fraction', compare: ['groups_all_equal_frac', 'adv_zero_frac'] },
  { id: 'advantage', title: 'Advantage', metrics: ['adv_mean', 'adv_std'], doc: 'Mean and spread (std) of the advantage over policy tokens.' },
  { id: 'clip', title: 'Clipped tokens', metrics: ['clip_frac', 'clip_frac_low', 'clip_frac_high'], doc: 'Policy tokens whose surrogate was clipped: in all, on the low side, on the high side.', domain: 'from-zero', compare: ['clip_frac'] },
  { id: 'ratio', title: 'Importance-sampling (IS) ratio', metrics: ['ratio_mean', 'ratio_min', 'ratio_max'], doc: 'The ratio pi/pi_old over policy tokens: mean, smallest, largest.' },
  { id: 'mismatch', title: 'Sampler vs trainer mismatch', metrics: ['mismatch_logratio', 'mismatch_k3_kl'], doc: 'How far the rollout sampler\'s log-probs (its precision, top-p, top-k; stale parameters) are from the trainer\'s, per policy token: mean log pi_old/pi_rollout and the k3 KL. Both 0 when the sampler is the trainer.' },
  // The chi-squares have their own chart: a stale sampler's reach the hundreds and would flatten the KL beside them.
  { id: 'mismatch_chi2', title: 'Sampler vs trainer chi-square', metrics: ['mismatch_chi2_token', 'mismatch_chi2_seq'], doc: 'The chi-square of the ratio pi_old/pi_rollout, per token and per trajectory (its sequence ratio): 0 when the sampler is the trainer, below 0 under top-p, large when a few tokens are far likelier under the trainer.' },
  { id: 'mismatch_seq', title: 'Sampler vs trainer perplexity', metrics: ['mismatch_ppl_ratio'], doc: 'Per trajectory, the trainer\'s perplexity over the sampler\'s, averaged: 1 when they agree.' },
  { id: 'neg_out_grad_share', title: 'Crash diagnosis', metrics: ['neg_out_grad_share'], doc: "Share of the update's gradient from negative-advantage tokens whose ratio is outside [0.8, 1.2] (ARLArena's diagnosis, docs/ARENA.md).", domain: 'fraction' },
  { id: 'entropy', title: 'Entropy', metrics: ['entropy'], domain: 'from-zero', compare: ['entropy'] },
  { id: 'kl', title: 'KL to the reference', metrics: ['kl_ref'], domain: 'from-zero', compare: ['kl_ref'] },
  { id: 'grad_norm', title: 'Gradient norm', metrics: ['grad_norm'], domain: 'from-zero', compare: ['grad_norm'] },
  { id: 'ess', title: 'Effective sample size (ESS)', metrics: ['ess'], domain: 'fraction' },
  { id: 'lr', title: 'Learning rate', metrics: ['lr'] },
  { id: 'loss', title: 'Loss', metrics: ['loss'] },
  { id: 'tokens', title: 'Policy tokens', metrics: ['tokens'], domain: 'from-zero' },
  { id: 'ms', title: 'Iteration time (ms)', metrics: ['ms'], domain: 'from-zero', compare: ['ms'] },
];

const PALETTE = ['#2563eb', '#16a34a', '#dc2626', '#7c3aed', '#ea580c', '#0891b2', '#4b5563', '#db2777'];
const DASHES = [undefined, '5 4', '2 3'];

/** Every scalar metric but `iter`, each in exactly one group, in the order above. */
export function chartGroups(): ChartGroup[] {
  const known = new Set(SCALAR_METRICS as readonly string[]);
  const out = GROUPS.map((g) => ({ ...g, metrics: g.metrics.filter((m) => known.has(m)) })).filter((g) => g.metrics.length > 0);
  const placed = new Set(out.flatMap((g) => g.metrics));
  for (const m of SCALAR_METRICS) {
    if (m !== 'iter' && !placed.has(m)) out.push({ id: m, title: METRIC_NAMES[m], metrics: [m] });
  }
  return out;
}

/** One Compare chart: a metric of a live chart's group, A against B, on that group's axis. */
export interface CompareChartSpec {
  metric: ScalarMetric;
  title: string;
  domain?: ChartGroup['domain'];
}

/** The charts Compare draws: the groups' `compare` metrics, in the live charts' order. */
export function compareCharts(): CompareChartSpec[] {
  return chartGroups().flatMap((g) => (g.compare ?? []).map((metric) => ({ metric, title: METRIC_NAMES[metric], domain: g.domain })));
}

/** The y axis of a chart over values in [lo, hi] (NaN when there are none), as its group's domain asks. */
export function groupYScale(kind: ChartGroup['domain'], lo: number, hi: number): AxisScale {
  switch (kind) {
    case 'fraction':
    case 'unit':
      // 0 and 1 stay in view; a value past them widens the axis.
      return niceScale(Number.isNaN(lo) ? 0 : Math.min(0, lo), Number.isNaN(hi) ? 1 : Math.max(1, hi));
    case 'from-zero': {
      const from = Number.isNaN(lo) ? 0 : Math.min(0, lo);
      // All zeros: show [0, 1] rather than a range around 0.
      return niceScale(from, hi > from ? hi : from + 1);
    }
    default:
      return Number.isNaN(lo) ? niceScale(0, 1) : niceScale(lo, hi);
  }
}

export function seriesStyle(index: number): { color: string; dash: string | undefined } {
  return { color: PALETTE[index % PALETTE.length]!, dash: DASHES[index % DASHES.length] };
}
