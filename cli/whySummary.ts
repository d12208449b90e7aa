/**
 * The rows of `npm run -s why` (cli/why.ts) from each run's statistics per seed: the paired
 * difference with its 95 % interval (cli/pairedStats.ts) and the verdict under the committed margin.
 */
import { rowRuns, scaledStat, statText, whyRunLabel, type WhyRegime, type WhyRow, type WhyRunId, type WhyStat } from '../workers/content/why';
import { pairedDiff, type PairedDiff } from './pairedStats';

/** One (run, seed): the statistics the regime reads (by statKey) and the arena's crash verdict. */
export interface WhyRunResult {
  run: WhyRunId;
  seed: number;
  values: Record<string, number>;
  crashed: boolean;
  crashWhy: string | null;
  seconds: number;
}

export const statKey = (s: WhyStat): string => `${s.metric}:${s.agg}:${s.from}-${s.to}`;

/** Every statistic a regime reads, at the windows of a run of `iters` iterations. */
export function regimeStats(r: WhyRegime, iters: number): WhyStat[] {
  const all = [r.disease.stat, r.cureRow.stat, ...(r.also ?? [])].map((s) => scaledStat(s, r.iters, iters));
  return all.filter((s, i) => all.findIndex((t) => statKey(t) === statKey(s)) === i);
}

/**
 * A row holds when the mean paired difference is past the margin on the predicted side and, with two
 * seeds or more, its 95 % interval excludes 0 on that side.
 */
export function rowHolds(d: PairedDiff | null, mean: number, dir: 1 | -1, margin: number): boolean {
  if (!Number.isFinite(mean) || dir * mean < margin) return false;
  return d === null || (dir > 0 ? d.lo > 0 : d.hi < 0);
}

export interface WhyRowResult {
  label: string;
  metric: string;
  window: { from: number; to: number; agg: string };
  dir: 1 | -1;
  margin: number;
  /** The two runs compared: a − b is the difference. */
  a: { run: WhyRunId; label: string; mean: number; perSeed: number[] };
  b: { run: WhyRunId; label: string; mean: number; perSeed: number[] };
  /** Mean of a − b over seeds with its 95 % interval (Student's t); null interval with one seed. */
  diff: { n: number; mean: number; lo: number | null; hi: number | null };
  holds: boolean;
}

const avg = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;

export function whyRow(r: WhyRegime, which: 'disease' | 'cure', results: readonly WhyRunResult[], seeds: readonly number[], iters: number): WhyRowResult {
  const spec: WhyRow = which === 'disease' ? r.disease : r.cureRow;
  const stat = scaledStat(spec.stat, r.iters, iters);
  const [ra, rb] = rowRuns(which);
  const pick = (run: WhyRunId) => seeds.map((seed) => results.find((x) => x.run === run && x.seed === seed)?.values[statKey(stat)] ?? NaN);
  const a = pick(ra);
  const b = pick(rb);
  const ds = a.map((x, i) => x - b[i]!);
  const mean = avg(ds);
  const finite = ds.every(Number.isFinite);
  const d = finite && seeds.length >= 2 ? pairedDiff(b, a) : null;
  return {
    label: statText(spec.label, stat),
    metric: stat.metric,
    window: { from: stat.from, to: stat.to, agg: stat.agg },
    dir: spec.dir,
    margin: spec.margin,
    a: { run: ra, label: whyRunLabel(r, ra), mean: avg(a), perSeed: a },
    b: { run: rb, label: whyRunLabel(r, rb), mean: avg(b), perSeed: b },
    diff: { n: seeds.length, mean, lo: d ? d.lo : null, hi: d ? d.hi : null },
    holds: finite && rowHolds(d, mean, spec.dir, spec.margin),
  };
}

const fmt = (x: number) => (!Number.isFinite(x) ? String(x) : Math.abs(x) >= 100 ? x.toFixed(0) : Math.abs(x) >= 1 ? x.toFixed(2) : x.toFixed(3));
const signed = (x: number) => (x >= 0 ? '+' : '') + fmt(x);

export function rowText(name: string, row: WhyRowResult): string {
  const interval = row.diff.lo === null ? '' : ` [${signed(row.diff.lo)}, ${signed(row.diff.hi!)}]`;
  const side = row.dir > 0 ? `≥ +${fmt(row.margin)}` : `≤ −${fmt(row.margin)}`;
  return (
    `${name.padEnd(8)}${row.label}: ${row.b.label} ${fmt(row.b.mean)} | ${row.a.label} ${fmt(row.a.mean)} | ` +
    `difference ${signed(row.diff.mean)}${interval} over ${row.diff.n} seed${row.diff.n === 1 ? '' : 's'}, committed ${side} → ${row.holds ? 'holds ✓' : 'does not hold ✗'}`
  );
}
