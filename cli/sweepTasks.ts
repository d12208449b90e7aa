/**
 * The task sweep behind docs/TASKS.md: for each toy task at its default and its hard setting, the
 * success of a random policy, the share of all-equal groups at the start, and the success after N
 * iterations of GRPO (CPU backend, the same engine as the browser).
 *
 *   npx tsx --import ./cli/registerRaw.mjs cli/sweepTasks.ts            (writes docs/TASKS.md)
 *   ... cli/sweepTasks.ts --seeds 1 --jobs 2 --scale 0.5 --out -        (table to stdout)
 *
 * "Random policy" = the initial policy (near-uniform over the tokens the grammar allows, since the
 * output layer starts at ~0) run for RANDOM_ITERS iterations with lr = 0, so it never changes; its
 * success rate and groups_all_equal_frac are averaged over those iterations. GRPO rows train from
 * the same initial weights with the config's defaults (learning rate, batch, group, epochs: the
 * table says which) plus the setting's knobs. Jobs run in parallel child processes (`--jobs`, default 2), each at nice 10.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createCpuBackend } from '../workers/core/cpuBackend';
import { exitWithError, printable } from './printable';
import { parseSweepArgs } from './sweepArgs';
import { runChild, runPool } from './sweepPool';
import { defaultConfig, withFieldText, type RunConfig } from '../workers/core/config';
import { createTrainer } from '../workers/core/trainer';

/** Iterations of the lr = 0 policy that measure chance level and the starting collapse. */
export const RANDOM_ITERS = 10;
/** Trailing window (iterations) over which the trained success and collapse are averaged. */
export const TAIL = 20;

export interface Setting {
  task: RunConfig['task'];
  name: 'default' | 'hard' | string;
  /** Knobs on top of the defaults, as `--set` key=value pairs. */
  set: Record<string, string>;
  /** GRPO iterations. */
  iters: number;
  /** What the setting changes, in words. */
  note: string;
}

/** The sweep. Hard settings run fewer iterations: they mostly collapse, so little changes. */
export const SETTINGS: Setting[] = [
  { task: 'search', name: 'default', set: {}, iters: 300, note: '1 hop, 3 entities x 2 attributes, 8 values, 3 turns, no noise' },
  { task: 'search', name: 'hard', set: { 'env.hops': '2', 'env.values': '32', 'env.noise': '0.2' }, iters: 100, note: '2 hops, 32 values, 20% wrong documents' },
  { task: 'tools', name: 'default', set: {}, iters: 300, note: 'RATE, CONV, BOOK; 3 tokens per argument kind; outcome reward' },
  { task: 'tools', name: 'checklist', set: { 'env.toolReward': 'checklist' }, iters: 300, note: 'the default with the judged checklist reward (what CM2 switches on)' },
  { task: 'tools', name: 'hard', set: { 'env.toolReward': 'outcome', 'env.toolSteps': '4', 'env.distractors': '2', 'env.toolValues': '4' }, iters: 100, note: 'outcome reward, 4 steps, 2 distractor tools, 4 tokens per kind' },
  { task: 'roles', name: 'default', set: {}, iters: 300, note: 'planner TELL, executor LOOK, planner ANSWER; 3 x 2 facts, 8 values' },
  { task: 'roles', name: 'hard', set: { 'env.entities': '32', 'env.attributes': '16', 'env.values': '64' }, iters: 100, note: '32 x 16 facts, 64 values' },
  { task: 'sequence', name: 'default', set: {}, iters: 300, note: '4 symbols, length 3, 4 targets, exact match (docs/METHODS.md 3)' },
  { task: 'sequence', name: 'hard', set: { 'env.symbols': '8', 'env.seqLen': '4' }, iters: 100, note: '8 symbols, length 4 (chance 1/4096)' },
  { task: 'sequence', name: 'partial', set: { 'env.seqReward': 'partial' }, iters: 100, note: 'default with partial-match reward: the collapse dial near 0' },
];

export interface JobResult {
  task: string;
  name: string;
  seed: number;
  iters: number;
  randomSuccess: number;
  randomAllEqual: number;
  /** Mean success over the last TAIL iterations of GRPO. */
  success: number;
  allEqualEnd: number;
  /** First iteration whose trailing 10-iteration mean success reaches 0.8, or null. */
  itersTo80: number | null;
  seconds: number;
}

function configOf(s: Setting, seed: number): RunConfig {
  let cfg = withFieldText(defaultConfig(), 'task', s.task);
  cfg = withFieldText(cfg, 'seed', String(seed));
  for (const [k, v] of Object.entries(s.set)) cfg = withFieldText(cfg, k, v);
  return cfg;
}

/** Runs one (setting, seed): the lr = 0 policy, then GRPO. */
export async function runJob(s: Setting, seed: number, iters = s.iters): Promise<JobResult> {
  const t0 = Date.now();
  const cfg = configOf(s, seed);
  // lr = 0 is below the schema's minimum on purpose: the weights never move (a frozen random policy).
  const rnd = await createTrainer({ ...cfg, lr: 0 }, createCpuBackend);
  let rs = 0;
  let re = 0;
  for (let i = 0; i < RANDOM_ITERS; i++) {
    const r = await rnd.step();
    rs += r.success_rate;
    re += r.groups_all_equal_frac;
  }
  rnd.destroy();
  const t = await createTrainer(cfg, createCpuBackend);
  const succ: number[] = [];
  const eq: number[] = [];
  let itersTo80: number | null = null;
  for (let i = 0; i < iters; i++) {
    const r = await t.step();
    succ.push(r.success_rate);
    eq.push(r.groups_all_equal_frac);
    if (itersTo80 === null && succ.length >= 10 && mean(succ.slice(-10)) >= 0.8) itersTo80 = r.iter;
  }
  t.destroy();
  return {
    task: s.task,
    name: s.name,
    seed,
    iters,
    randomSuccess: rs / RANDOM_ITERS,
    randomAllEqual: re / RANDOM_ITERS,
    success: mean(succ.slice(-TAIL)),
    allEqualEnd: mean(eq.slice(-TAIL)),
    itersTo80,
    seconds: (Date.now() - t0) / 1000,
  };
}

const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);
const f2 = (x: number) => x.toFixed(2);

/** The markdown table (one row per setting, seeds averaged). */
export function renderTable(results: JobResult[], seeds: number[], command: string, minutes: number): string {
  const d = defaultConfig();
  const lines = [
    `Generated ${new Date().toISOString().slice(0, 10)} by \`${command}\` (seeds ${seeds.join(', ')}; ${minutes.toFixed(1)} min of wall time here).`,
    `Random policy: the initial weights with lr = 0, ${RANDOM_ITERS} iterations of batch ${d.batch} x group ${d.group} (random success and all-equal at start: mean over seeds). GRPO: the config defaults (lr ${d.lr}, batch ${d.batch}, group ${d.group}, ${d.epochs} epoch${d.epochs > 1 ? 's' : ''}) plus the knobs shown; success (one value per seed, in seed order) and all-equal at end (mean over seeds) averaged over the last ${TAIL} iterations; "to 0.8": per seed, the first iteration whose 10-iteration mean success reaches 0.8 (— never). Hard settings run fewer iterations.`,
    '',
    '| task | setting | knobs | random success | all-equal at start | GRPO iters | GRPO success | all-equal at end | to 0.8 |',
    '|---|---|---|---|---|---|---|---|---|',
  ];
  for (const s of SETTINGS) {
    const rs = results.filter((r) => r.task === s.task && r.name === s.name);
    if (!rs.length) continue;
    const knobs = Object.entries(s.set).map(([k, v]) => `\`${k}=${v}\``).join(' ') || '(defaults)';
    rs.sort((x, y) => x.seed - y.seed);
    const to80 = rs.map((r) => (r.itersTo80 === null ? '—' : String(r.itersTo80))).join(' / ');
    const succ = rs.map((r) => f2(r.success)).join(' / ');
    lines.push(
      `| ${s.task} | ${s.name} | ${knobs} | ${f2(mean(rs.map((r) => r.randomSuccess)))} | ${f2(mean(rs.map((r) => r.randomAllEqual)))} | ${[...new Set(rs.map((r) => r.iters))].join(' / ')} | ${succ} | ${f2(mean(rs.map((r) => r.allEqualEnd)))} | ${to80} |`,
    );
  }
  return lines.join('\n');
}

const begin = (generator: string) => `<!-- sweep:begin (generated by ${generator}; edits inside are overwritten) -->`;
const END = '<!-- sweep:end -->';

/** Replaces the generated section of `file` (between the markers), or appends it. */
export function writeSection(file: string, table: string, generator = 'cli/sweepTasks.ts'): void {
  const BEGIN = begin(generator);
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    text = '# Toy tasks\n\n';
  }
  const block = `${BEGIN}\n${table}\n${END}`;
  const a = text.indexOf(BEGIN.slice(0, 20));
  const b = text.indexOf(END);
  text = a >= 0 && b > a ? text.slice(0, a) + block + text.slice(b + END.length) : `${text.trimEnd()}\n\n${block}\n`;
  writeFileSync(file, text);
}


const HELP =
  'cli/sweepTasks.ts [--seeds 1,2] [--jobs 2] [--out docs/TASKS.md | -] [--scale 1] [--only task,task]\n' +
  '  defaults: seeds 1,2; 2 parallel jobs; writes the generated section of docs/TASKS.md.\n' +
  '  --scale multiplies every setting\'s GRPO iterations (a quick look: 0.2); --only keeps some tasks (task,task).\n';

async function main(): Promise<void> {
  const a = parseSweepArgs(process.argv.slice(2), { seeds: [1, 2], out: 'docs/TASKS.md' }, HELP, [...new Set(SETTINGS.map((s) => s.task))]);
  if (a.job) {
    const j = JSON.parse(a.job) as { setting: number; seed: number; iters: number };
    const r = await runJob(SETTINGS[j.setting]!, j.seed, j.iters);
    process.stdout.write(JSON.stringify(r) + '\n');
    return;
  }
  const t0 = Date.now();
  const jobs = SETTINGS.flatMap((s, i) =>
    a.only && !a.only.includes(s.task) ? [] : a.seeds.map((seed) => ({ setting: i, seed, iters: Math.max(TAIL, Math.round(s.iters * a.scale)) })),
  );
  const results = await runPool(jobs, a.jobs, (j) => runChild<typeof j, JobResult>(fileURLToPath(import.meta.url), j), (r) =>
    process.stderr.write(
      `${r.task}/${r.name} seed ${r.seed}: random ${f2(r.randomSuccess)} (all-equal ${f2(r.randomAllEqual)}), ` +
        `GRPO ${r.iters} iters ${f2(r.success)} (all-equal ${f2(r.allEqualEnd)}), ${r.seconds.toFixed(0)} s\n`,
    ),
  );
  const cmd = 'npx tsx --import ./cli/registerRaw.mjs cli/sweepTasks.ts' + process.argv.slice(2).map((x) => ` ${printable(x)}`).join('');
  const table = renderTable(results, a.seeds, cmd, (Date.now() - t0) / 60000);
  if (a.out === '-') process.stdout.write(table + '\n');
  else {
    writeSection(a.out, table);
    process.stderr.write(`table written to ${printable(a.out)}\n`);
  }
}

const isMain = process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1];
if (isMain) {
  main().catch(exitWithError);
}
