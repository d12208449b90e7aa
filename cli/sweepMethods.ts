/**
 * The method sweep behind docs/METHODS_RESULTS.md (issue 5): for every method of the registry, the
 * toy its docs/METHODS.md "Toy" line calls for, run with the method and with plain GRPO on the same toy
 * and the same seeds (CPU backend, the browser's engine), and the metric that toy line says should
 * move, with the spread over seeds and whether it moved the predicted way.
 *
 *   npm run -s sweep:methods                       (writes docs/METHODS_RESULTS.md; ~30 min on 2 cores)
 *   npm run -s sweep:methods -- --seeds 1 --scale 0.3 --out -    (a quick look, table to stdout)
 *
 * Each (configuration, seed) runs in its own child process at nice 10 (`--jobs`, default 2).
 */
import { fileURLToPath } from 'node:url';
import { createCpuBackend } from '../workers/cpuBackend';
import { defaultConfig, withFieldText, type RunConfig } from '../workers/config';
import { METHOD_IDS } from '../workers/methods';
import type { MetricRow } from '../workers/metrics';
import { createTrainer } from '../workers/trainer';
import { parseSweepArgs } from './sweepArgs';
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
}

export const CLAIMS: Record<string, Claim> = {
  grpo: { toy: 'hard', methods: 'grpo', metric: 'allEqual', dir: 0, claim: 'the baseline: collapse plateaus on the hard toy', also: ['success'] },
  ppo: { toy: 'search', methods: 'ppo', metric: 'success', dir: 0, claim: 'a learned (critic) baseline: a reference curve, smoother but lagging while V is poor', also: ['allEqual', 'zeroAdv', 'gradNormStd'] },
  drgrpo: { toy: 'search', methods: 'drgrpo', metric: 'tokens', dir: -1, claim: 'no length bias: wrong answers do not drift longer (fewer tokens)', also: ['success'] },
  rloo: { toy: 'group4', methods: 'rloo', metric: 'success', dir: 0, claim: 'same collapse as GRPO, unbiased baseline at small G', also: ['allEqual'] },
  reinforcepp: { toy: 'hard', methods: 'reinforcepp', metric: 'zeroAdv', dir: -1, claim: 'batch whitening: collapsed groups still get nonzero advantages', also: ['success'] },
  dapo: { toy: 'hard', methods: 'grpo,dapo', metric: 'allEqual', dir: -1, claim: 'dynamic sampling: no collapsed group in the trained batch; clip-higher keeps entropy up', also: ['rollouts', 'entropyEnd', 'success'] },
  gspo: { toy: 'epochs', methods: 'grpo,gspo', metric: 'ratioMax', dir: -1, claim: 'sequence ratio: outlier tokens do not dominate (smaller max ratio)', also: ['gradNormMax', 'success'] },
  igpo: { toy: 'hard', methods: 'igpo', metric: 'zeroAdv', dir: -1, claim: 'information-gain turn rewards: all-wrong groups still learn', also: ['success'] },
  cm2: { toy: 'tools', methods: 'cm2', metric: 'allEqual', dir: -1, claim: 'checklist partial credit: groups rarely tie', also: ['success'] },
  edge: { toy: 'hard', methods: 'grpo,edge', metric: 'success', dir: 1, claim: 'guided error correction puts successes into failing groups', also: ['allEqual'] },
  regft: { toy: 'hard', methods: 'grpo,regft', metric: 'success', dir: 1, claim: 'SFT on hinted successes lifts the start of RL', also: ['allEqual'] },
  pfppo: { toy: 'noisyRm', methods: 'grpo,pfppo', metric: 'success', dir: 1, claim: 'training on reliable (extreme) scores: true success rises faster' },
  zerosearch: { toy: 'noisySearch', methods: 'grpo,zerosearch', set: { 'zerosearch.iters': '150' }, metric: 'success', dir: 1, claim: 'noise curriculum vs fixed 50% noise: faster learning', also: ['tokens'] },
  dars: { toy: 'hard', methods: 'grpo,dars', set: { 'dars.nMax': '24' }, metric: 'success', dir: 1, claim: 'extra rollouts for hard prompts find more successes', also: ['rollouts', 'allEqual'] },
  seeupo: { toy: 'epochs', methods: 'grpo,seeupo', metric: 'success', dir: 1, claim: 'reverse-order per-turn updates: steadier improvement', also: ['ratioMax'] },
  sampo: { toy: 'epochs', methods: 'sampo', metric: 'gradNormMax', dir: -1, claim: 'sequence clipping + filtering: no gradient spikes', also: ['allEqual', 'success'] },
  vcpo: { toy: 'stale', methods: 'vcpo', metric: 'gradNormMax', dir: -1, claim: 'ESS-scaled lr under staleness: smaller spikes, reward tracks', also: ['lrMin', 'essMin', 'success'] },
  prorl: { toy: 'kl', methods: 'grpo,prorl', set: { 'prorl.klCoef': '0.05', 'prorl.resetEvery': '30' }, metric: 'klMean', dir: -1, claim: 'reference resets: KL saws back to 0, reward keeps rising', also: ['success'] },
  gmpo: { toy: 'epochs', methods: 'grpo,gmpo', metric: 'ratioMax', dir: -1, claim: 'geometric mean: narrower ratios', also: ['entropyEnd', 'success'] },
  otb: { toy: 'group4', methods: 'otb', metric: 'gradNormStd', dir: -1, claim: 'per-token optimal baseline: lower gradient variance', also: ['success'] },
  drmas: { toy: 'roles', methods: 'grpo,drmas', metric: 'success', dir: 1, claim: 'per-role normalization: both agents learn', also: ['gradNormMax'] },
};

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

/** The runs: one per (claim, seed) plus one GRPO baseline per (toy, baseline knobs, seed). */
function runSpec(key: string): { set: Record<string, string>; methods: string; iters: number } {
  const [kind, id] = key.split(':') as [string, string];
  if (kind === 'base') {
    const toy = TOYS[id]!;
    return { set: toy.set, methods: 'grpo', iters: toy.iters };
  }
  const c = CLAIMS[id]!;
  const toy = TOYS[c.toy]!;
  const set = { ...toy.set, ...(c.set ?? {}) };
  // ZeroSearch replaces the fixed noise of its baseline by the curriculum.
  if (id === 'zerosearch') delete set['env.noise'];
  return { set, methods: c.methods, iters: toy.iters };
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
const cell = (xs: number[]) => `${fmt(mean(xs))} ± ${fmt(std(xs))}`;

export function renderTable(results: RunResult[], seeds: number[], command: string, minutes: number): string {
  const by = (key: string, m: Metric) => results.filter((r) => r.key === key).sort((a, b) => a.seed - b.seed).map((r) => r.metrics[m]);
  const lines = [
    `Generated ${new Date().toISOString().slice(0, 10)} by \`${command}\` (CPU backend; seeds ${seeds.join(', ')}; ${minutes.toFixed(0)} min of wall time on this 2-core machine).`,
    'Each row: the method on its toy (docs/METHODS.md "Toy" line) against plain GRPO on the same toy, knobs and seeds; mean ± std over seeds. "Effect" compares the means: ✓ moved the predicted way by more than the seeds\' spread (the larger std), ~ the predicted way but within the spread, ✗ the other way; "ref" for a reference curve with no predicted direction.',
    '',
    '| method | toy | claim | metric | GRPO | method | effect | also (GRPO → method) |',
    '|---|---|---|---|---|---|---|---|',
  ];
  for (const id of METHOD_IDS) {
    const c = CLAIMS[id];
    if (!c) continue;
    const base = `base:${c.toy}`;
    const a = by(base, c.metric);
    const b = by(`m:${id}`, c.metric);
    if (!a.length || !b.length) continue;
    const d = mean(b) - mean(a);
    const spread = Math.max(std(a), std(b));
    const effect = c.dir === 0 ? 'ref' : Math.sign(d) === c.dir && Math.abs(d) > spread ? '✓' : Math.sign(d) === c.dir ? '~' : '✗';
    const also = (c.also ?? []).map((m) => `${METRIC_TEXT[m]}: ${fmt(mean(by(base, m)))} → ${fmt(mean(by(`m:${id}`, m)))}`).join('; ');
    lines.push(`| ${id} | ${TOYS[c.toy]!.note} | ${c.claim} | ${METRIC_TEXT[c.metric]} | ${cell(a)} | ${cell(b)} | ${effect} | ${also} |`);
  }
  return lines.join('\n');
}


const HELP =
  'cli/sweepMethods.ts [--seeds 1,2,3] [--jobs 2] [--out docs/METHODS_RESULTS.md | -] [--scale 1] [--only id,id]\n' +
  '  --scale multiplies every toy\'s iterations; --only keeps some methods (and their baselines).\n';

async function main(): Promise<void> {
  const args = parseSweepArgs(process.argv.slice(2), { seeds: [1, 2, 3], out: 'docs/METHODS_RESULTS.md' }, HELP);
  if (args.job) {
    const j = JSON.parse(args.job) as { key: string; seed: number; scale: number };
    process.stdout.write(JSON.stringify(await runOne(j.key, j.seed, j.scale)) + '\n');
    return;
  }
  const ids = METHOD_IDS.filter((id) => CLAIMS[id] && (!args.only || args.only.includes(id)));
  const keys = [...new Set(ids.flatMap((id) => [`base:${CLAIMS[id]!.toy}`, `m:${id}`]))];
  // GRPO's own row is its baseline.
  const jobs = keys.filter((k) => k !== 'm:grpo').flatMap((key) => args.seeds.map((seed) => ({ key, seed, scale: args.scale })));
  const t0 = Date.now();
  let done = 0;
  const results = await runPool(jobs, args.jobs, (j) => runChild<typeof j, RunResult>(fileURLToPath(import.meta.url), j), (r) =>
    process.stderr.write(`${r.key} seed ${r.seed}: ${r.seconds.toFixed(0)} s (${++done}/${jobs.length})\n`),
  );
  // GRPO's own row is the hard toy's baseline.
  results.push(...results.filter((r) => r.key === 'base:hard').map((r) => ({ ...r, key: 'm:grpo' })));
  const command = `npm run -s sweep:methods -- ${process.argv.slice(2).join(' ')}`.trim();
  const table = renderTable(results, args.seeds, command, (Date.now() - t0) / 60000);
  if (args.out === '-') process.stdout.write(table + '\n');
  else writeSection(args.out, table, 'cli/sweepMethods.ts');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main().catch((e) => {
    process.stderr.write(`${(e as Error).message}\n`);
    process.exit(1);
  });
}
