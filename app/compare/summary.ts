/** The one-line verdict above the compared curves: who reaches a success rate first, and recent reward. */
import type { MetricRow } from '../../workers/core/metrics';

/** Iterations the "recent reward" averages over. */
const RECENT = 10;

function firstReach(rows: MetricRow[], threshold: number): number | null {
  return rows.find((r) => r.success_rate >= threshold)?.iter ?? null;
}

function best(rows: MetricRow[]): number {
  return rows.reduce((m, r) => Math.max(m, r.success_rate), 0);
}

function recentReward(rows: MetricRow[]): number {
  const tail = rows.slice(-RECENT);
  return tail.reduce((s, r) => s + r.reward_mean, 0) / tail.length;
}

const f2 = (v: number) => v.toFixed(2);

/** The metrics that tell two runs apart when their configs differ in anything that acts. */
const TELLING = ['reward_mean', 'entropy', 'loss', 'grad_norm', 'kl_ref'] as const;

/** True when both runs have iterations and every shared one matches on TELLING. */
function identical(a: MetricRow[], b: MetricRow[]): boolean {
  const n = Math.min(a.length, b.length);
  if (n < 2) return false;
  for (let i = 0; i < n; i++) {
    const x = a[i]!;
    const y = b[i]!;
    if (x.iter !== y.iter || TELLING.some((k) => x[k] !== y[k])) return false;
  }
  return true;
}

/**
 * e.g. "B reaches success 0.8 at iteration 143, A at 187", "B reaches success 0.8 at iteration 143;
 * A not yet (best 0.62 in 200 iterations)", then the mean reward of each run's last 10 iterations.
 */
export function compareSummary(a: MetricRow[], b: MetricRow[], threshold: number): string {
  if (a.length === 0 && b.length === 0) return 'No iterations yet: press Start to run A and B from the same seed.';
  const t = String(threshold);
  const runs = [
    { name: 'A', rows: a, at: firstReach(a, threshold) },
    { name: 'B', rows: b, at: firstReach(b, threshold) },
  ];
  const reached = runs.filter((r) => r.at !== null).sort((x, y) => x.at! - y.at!);
  const notYet = runs.filter((r) => r.at === null);
  const pending = (r: (typeof runs)[number]) =>
    r.rows.length === 0 ? `${r.name} has no iterations yet` : `${r.name} not yet (best ${f2(best(r.rows))} in ${r.rows.length} iterations)`;
  let head: string;
  if (reached.length === 2) {
    const [x, y] = reached as [(typeof runs)[number], (typeof runs)[number]];
    head = x.at === y.at ? `A and B both reach success ${t} at iteration ${x.at}` : `${x.name} reaches success ${t} at iteration ${x.at}, ${y.name} at ${y.at}`;
  } else if (reached.length === 1) {
    head = `${reached[0]!.name} reaches success ${t} at iteration ${reached[0]!.at}; ${pending(notYet[0]!)}`;
  } else {
    const bests = notYet.map((r) => (r.rows.length === 0 ? `${r.name} no iterations` : `${r.name} ${f2(best(r.rows))} in ${r.rows.length} iterations`));
    head = `Neither reaches success ${t} yet (best: ${bests.join(', ')})`;
  }
  const recent = runs
    .filter((r) => r.rows.length > 0)
    .map((r) => `${r.name} ${f2(recentReward(r.rows))}`)
    .join(', ');
  return `${head}. Mean reward of the last ${RECENT} iterations: ${recent}.${identical(a, b) ? ' The two runs are identical so far: B\'s change has had no effect yet.' : ''}`;
}
