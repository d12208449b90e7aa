/**
 * The method sweep behind docs/METHODS_RESULTS.md: for every method of the registry, two rows, each
 * the method against plain GRPO on the same toy and the same seeds (CPU backend, the browser's
 * engine), as a paired difference over seeds with a 95 % interval (cli/pairedStats.ts):
 *   mechanism  the quantity the method acts on (zero-advantage tokens, max ratio, ...), on its toy;
 *   outcome    success (the true reward of these tasks), on the regime where the paper's premise
 *              holds: a pretrained start on the hard search task where the premise is a competent
 *              but imperfect policy on hard prompts.
 * ✓ only where the interval excludes 0 on the predicted side.
 *
 *   npm run -s sweep:methods                       (8 seeds; writes docs/METHODS_RESULTS.md)
 *   npm run -s sweep:methods -- --seeds 101-108 --out -    (the same table on seeds it does not list)
 *   npm run -s sweep:methods -- --seeds 1,2 --scale 0.3 --only igpo --out -    (a quick look)
 *
 * Each (configuration, seed) runs in its own child process at nice 10 (`--jobs`, default 2).
 */
import { fileURLToPath } from 'node:url';
import { createCpuBackend } from '../workers/core/cpuBackend';
import { defaultConfig, withFieldText, type RunConfig } from '../workers/core/config';
import { METHOD_IDS, methodDef } from '../workers/core/methods';
import type { MetricRow } from '../workers/core/metrics';
import { createTrainer } from '../workers/core/trainer';
import { exitWithError, printable } from './printable';
import { parseSweepArgs } from './sweepArgs';
import { pairedDiff, verdict, type IntervalKind } from './pairedStats';
import { runChild, runPool } from './sweepPool';
import { writeSection } from './sweepTasks';

/** A toy: knobs shared by the method's run and its GRPO baseline. */
interface Toy {
  id: string;
  note: string;
  set: Record<string, string>;
  iters: number;
}

const TOYS: Record<string, Toy> = {
  search: { id: 'search', note: 'search, 1 hop, 8 values, 3 turns', set: {}, iters: 150 },
  hard: { id: 'hard', note: 'search, 32 values (most groups all-wrong)', set: { 'env.values': '32' }, iters: 150 },
  epochs: { id: 'epochs', note: 'search, 4 epochs x 4 minibatches, lr 0.01 (ratios leave 1)', set: { epochs: '4', minibatches: '4', lr: '0.01' }, iters: 100 },
  stale: { id: 'stale', note: 'search, rollouts 4 updates stale, lr 0.01, 2 minibatches', set: { staleness: '4', lr: '0.01', minibatches: '2' }, iters: 120 },
  noisyRm: { id: 'noisyRm', note: 'search, reward-model noise std 1 at mid rewards', set: { 'env.rmNoise': '1', 'env.rmNoiseFloor': '0.1' }, iters: 150 },
  noisySearch: { id: 'noisySearch', note: 'search, 5 turns; baseline: fixed 50% wrong documents', set: { 'env.maxTurns': '5', 'env.noise': '0.5' }, iters: 150 },
  tools: { id: 'tools', note: 'tools task, 3 steps, outcome reward', set: { task: 'tools' }, iters: 150 },
  roles: { id: 'roles', note: 'roles task, executor reward x5 + 0.5', set: { task: 'roles', 'env.roleScale': '5', 'env.roleOffset': '0.5' }, iters: 150 },
  kl: { id: 'kl', note: 'search, KL coef 0.05 to the reference', set: { klCoef: '0.05' }, iters: 150 },
  group4: { id: 'group4', note: 'search, group 4', set: { group: '4' }, iters: 150 },
  hardPre: { id: 'hardPre', note: 'search, 32 values, pretrained start', set: { 'env.values': '32', init: 'pretrained' }, iters: 100 },
  noisyRmPre: {
    id: 'noisyRmPre',
    note: 'search, 32 values, pretrained start, reward-model noise std 1 at mid rewards',
    set: { 'env.values': '32', init: 'pretrained', 'env.rmNoise': '1', 'env.rmNoiseFloor': '0.1' },
    iters: 100,
  },
};

type Metric = 'success' | 'allEqual' | 'zeroAdv' | 'entropyEnd' | 'ratioMax' | 'gradNormMax' | 'gradNormStd' | 'klMean' | 'rollouts' | 'tokens' | 'essMin' | 'lrMin';

const METRIC_TEXT: Record<Metric, string> = {
  success: 'success, last 20 iters',
  allEqual: 'all-equal groups (trained), mean',
  zeroAdv: 'zero-advantage tokens, mean',
  entropyEnd: 'entropy, last 20 iters',
  ratioMax: 'max ratio, mean over iters',
  gradNormMax: 'max grad norm',
  gradNormStd: 'std of grad norm over iters',
  klMean: 'KL to reference, mean',
  rollouts: 'rollouts per iteration',
  tokens: 'policy tokens per trajectory',
  essMin: 'min rollout ESS',
  lrMin: 'min lr applied',
};

/** What each method's toy line predicts: the toy, extra knobs of the method run, the metric and its direction. */
interface Claim {
  toy: keyof typeof TOYS;
  methods: string;
  /** Knobs of the method run only (the baseline is GRPO on the toy). */
  set?: Record<string, string>;
  /** Knobs of the baseline only. */
  baseSet?: Record<string, string>;
  metric: Metric;
  /** +1: the method should raise it, -1 lower it, 0: no effect predicted (reference curve). */
  dir: 1 | -1 | 0;
  claim: string;
  also?: Metric[];
  /** The outcome row: success on the regime of the paper's premise (the mechanism's toy if absent). */
  outcome: { toy: keyof typeof TOYS; dir: 1 | -1 | 0; claim: string };
}


/** Each method's regimes, from its entry's `sweep` field (workers/core/methods/); checked against the toys and metrics here. */
export const CLAIMS: Record<string, Claim> = Object.fromEntries(
  METHOD_IDS.flatMap((id) => {
    const r = methodDef(id).sweep;
    if (!r) return [];
    for (const toy of [r.toy, r.outcome.toy]) if (!Object.hasOwn(TOYS, toy)) throw new Error(`${id}.sweep: unknown toy "${toy}"`);
    for (const m of [r.metric, ...(r.also ?? [])]) if (!Object.hasOwn(METRIC_TEXT, m)) throw new Error(`${id}.sweep: unknown metric "${m}"`);
    return [[id, r as Claim]];
  }),
);

export interface RunResult {
  key: string;
  seed: number;
  metrics: Record<Metric, number>;
  seconds: number;
}

const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);
const std = (xs: number[]) => Math.sqrt(mean(xs.map((x) => (x - mean(xs)) ** 2)));

function configOf(set: Record<string, string>, methods: string, seed: number): RunConfig {
  let cfg = defaultConfig();
  if (set.task) cfg = withFieldText(cfg, 'task', set.task);
  cfg = withFieldText(cfg, 'methods', methods);
  for (const [k, v] of Object.entries(set)) if (k !== 'task') cfg = withFieldText(cfg, k, v);
  return withFieldText(cfg, 'seed', String(seed));
}

/** Whether a method's outcome row needs runs of its own (its regime differs from its mechanism toy). */
const ownOutcome = (id: string): boolean => CLAIMS[id]!.outcome.toy !== CLAIMS[id]!.toy;

/**
 * The runs: `m:<id>` the method on its mechanism toy, `o:<id>` on its outcome regime (when that
 * differs), `base:<toy>` GRPO on a toy; one per seed each.
 */
function runSpec(key: string): { set: Record<string, string>; methods: string; iters: number } {
  const [kind, id] = key.split(':') as [string, string];
  if (kind === 'base') {
    const toy = TOYS[id]!;
    return { set: toy.set, methods: 'grpo', iters: toy.iters };
  }
  const c = CLAIMS[id]!;
  const toy = TOYS[kind === 'o' ? c.outcome.toy : c.toy]!;
  const set = { ...toy.set, ...(c.set ?? {}) };
  // ZeroSearch replaces the fixed noise of its baseline by the curriculum.
  if (id === 'zerosearch') delete set['env.noise'];
  return { set, methods: c.methods, iters: toy.iters };
}

/** Every run key the rows of these methods need. */
export function runKeys(ids: readonly string[]): string[] {
  const keys = ids.flatMap((id) => {
    const c = CLAIMS[id]!;
    return [`base:${c.toy}`, `m:${id}`, ...(ownOutcome(id) ? [`base:${c.outcome.toy}`, `o:${id}`] : [])];
  });
  // GRPO's runs are its baselines.
  return [...new Set(keys)].filter((k) => !k.endsWith(':grpo'));
}

export async function runOne(key: string, seed: number, scale = 1): Promise<RunResult> {
  const t0 = Date.now();
  const spec = runSpec(key);
  const t = await createTrainer(configOf(spec.set, spec.methods, seed), createCpuBackend);
  const rows: MetricRow[] = [];
  const iters = Math.max(20, Math.round(spec.iters * scale));
  for (let i = 0; i < iters; i++) rows.push(await t.step());
  t.destroy();
  const N = t.shape.N;
  const tail = rows.slice(-20);
  const g = rows.map((r) => r.grad_norm);
  return {
    key,
    seed,
    metrics: {
      success: mean(tail.map((r) => r.success_rate)),
      allEqual: mean(rows.map((r) => r.groups_all_equal_frac)),
      zeroAdv: mean(rows.map((r) => r.adv_zero_frac)),
      entropyEnd: mean(tail.map((r) => r.entropy)),
      ratioMax: mean(rows.map((r) => r.ratio_max)),
      gradNormMax: Math.max(...g),
      gradNormStd: std(g),
      klMean: mean(rows.map((r) => r.kl_ref)),
      rollouts: mean(rows.map((r) => r.rollouts)),
      tokens: mean(rows.map((r) => r.tokens)) / N,
      essMin: Math.min(...rows.map((r) => r.ess_rollout)),
      lrMin: Math.min(...rows.map((r) => r.lr)),
    },
    seconds: (Date.now() - t0) / 1000,
  };
}

const fmt = (x: number) => (Math.abs(x) >= 100 ? x.toFixed(0) : Math.abs(x) >= 1 ? x.toFixed(2) : x.toFixed(3));
const signed = (x: number) => (x >= 0 ? '+' : '') + fmt(x);

export function renderTable(results: RunResult[], seeds: number[], command: string, minutes: number, interval: IntervalKind): string {
  const runs = (key: string) => results.filter((r) => r.key === key).sort((a, b) => a.seed - b.seed);
  const lines = [
    `Generated ${new Date().toISOString().slice(0, 10)} by \`${command}\` (CPU backend; seeds ${seeds.join(', ')}; ${minutes.toFixed(0)} min of wall time on this 2-core machine).`,
    `Each method has two rows against plain GRPO on the same toy, knobs and seeds: its *mechanism* (the quantity it acts on) and its *outcome* (success, the true reward of these tasks, on the regime where its paper's premise holds). Columns: the mean over seeds of GRPO and of the method, and the paired difference (method - GRPO, seed by seed) with its 95 % interval (${interval === 't' ? "Student's t" : 'percentile bootstrap, fixed seed'}). Effect: ✓ the interval excludes 0 on the predicted side, ✗ it excludes 0 on the other side, ~ it contains 0; "ref" for a row with no predicted direction.`,
    '',
    '| method | row | regime | claim | metric | GRPO | method | difference [95 % interval] | effect | also (GRPO → method) |',
    '|---|---|---|---|---|---|---|---|---|---|',
  ];
  const row = (id: string, kind: 'mechanism' | 'outcome', toy: string, claim: string, metric: Metric, dir: -1 | 0 | 1, key: string, also: Metric[]) => {
    const base = runs(`base:${toy}`);
    const own = key === 'm:grpo' || key === 'o:grpo' ? base : runs(key);
    const common = base.filter((b) => own.some((o) => o.seed === b.seed)).map((b) => b.seed);
    if (common.length < 2) return;
    const pick = (rs: RunResult[], m: Metric) => common.map((seed) => rs.find((r) => r.seed === seed)!.metrics[m]);
    const a = pick(base, metric);
    const b = pick(own, metric);
    const alsoText = also.map((m) => `${METRIC_TEXT[m]}: ${fmt(mean(pick(base, m)))} → ${fmt(mean(pick(own, m)))}`).join('; ');
    // GRPO's rows are its baseline itself: the values, with no difference to take.
    const d = own === base ? null : pairedDiff(a, b, interval);
    const diff = d ? `${signed(d.mean)} [${signed(d.lo)}, ${signed(d.hi)}]` : '—';
    lines.push(
      `| ${id} | ${kind} | ${TOYS[toy]!.note} | ${claim} | ${METRIC_TEXT[metric]} | ${fmt(mean(a))} | ${fmt(mean(b))} | ${diff} | ${d ? verdict(d, dir) : 'ref'} | ${alsoText} |`,
    );
  };
  for (const id of METHOD_IDS) {
    const c = CLAIMS[id];
    if (!c) continue;
    row(id, 'mechanism', c.toy, c.claim, c.metric, c.dir, `m:${id}`, c.also ?? []);
    const o = c.outcome;
    if (ownOutcome(id)) row(id, 'outcome', o.toy, o.claim, 'success', o.dir, `o:${id}`, ['allEqual', 'rollouts']);
    else row(id, 'outcome', c.toy, o.claim, 'success', o.dir, `m:${id}`, []);
  }
  return lines.join('\n');
}

const HELP =
  'cli/sweepMethods.ts [--seeds 1-8] [--jobs 2] [--out docs/METHODS_RESULTS.md | -] [--scale 1] [--only id,id] [--interval t|bootstrap]\n' +
  '  --seeds takes a list and ranges (1-8, 101-108); --scale multiplies every toy\'s iterations;\n' +
  '  --only keeps some methods (and their baselines); --interval: Student\'s t (default) or a seeded bootstrap.\n';

async function main(): Promise<void> {
  const args = parseSweepArgs(process.argv.slice(2), { seeds: [1, 2, 3, 4, 5, 6, 7, 8], out: 'docs/METHODS_RESULTS.md' }, HELP, METHOD_IDS.filter((id) => CLAIMS[id]));
  if (args.job) {
    const j = JSON.parse(args.job) as { key: string; seed: number; scale: number };
    process.stdout.write(JSON.stringify(await runOne(j.key, j.seed, j.scale)) + '\n');
    return;
  }
  const ids = METHOD_IDS.filter((id) => CLAIMS[id] && (!args.only || args.only.includes(id)));
  const jobs = runKeys(ids).flatMap((key) => args.seeds.map((seed) => ({ key, seed, scale: args.scale })));
  const t0 = Date.now();
  let done = 0;
  const results = await runPool(jobs, args.jobs, (j) => runChild<typeof j, RunResult>(fileURLToPath(import.meta.url), j), (r) =>
    process.stderr.write(`${r.key} seed ${r.seed}: ${r.seconds.toFixed(0)} s (${++done}/${jobs.length})\n`),
  );
  const command = `npm run -s sweep:methods -- ${process.argv.slice(2).map(printable).join(' ')}`.trim();
  const table = renderTable(results, args.seeds, command, (Date.now() - t0) / 60000, args.interval);
  if (args.out === '-') process.stdout.write(table + '\n');
  else writeSection(args.out, table, 'cli/sweepMethods.ts');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main().catch(exitWithError);
}
