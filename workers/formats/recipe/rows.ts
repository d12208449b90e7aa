/**
 * The recipe's episodes: one JSON row per task instance (question, per-episode tables, answer and
 * the seeds of its noise streams), drawn exactly as the playground's batches draw them. Batch i
 * (1-based) is `env.sample(batch, group, createRng(seed).fork(i), i - 1)`, so row k of batch i is
 * the i-th iteration's k-th prompt. The draws below repeat, in order, those of each task's
 * sample() in workers/core/envs/; the recipe's Python package (py/toyenv) repeats them again, and
 * tests/unit/recipeParity.test.ts holds all three to the same rows.
 */
import type { RunConfig } from '../../core/config';
import { searchNoiseAt } from '../../core/envs/search';
import { sequenceTargets } from '../../core/envs/sequence';
import { createRng, pcgHash, type Rng } from '../../core/rng';

/** Labels of the streams forked from a batch's generator (workers/core/envs/*.ts). */
const RM_STREAM = 0x524d;
const NOISE_STREAM = 0x2e5;
const JUDGE_STREAM = 0x10d9e;

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export interface RecipeRow {
  id: string;
  task: RunConfig['task'];
  seed: number;
  /** The playground iteration (1-based) whose batch holds this prompt. */
  iteration: number;
  /** The prompt's index within that batch. */
  index: number;
  /** The question as the toy's words (the user message). */
  question: string[];
  /** The reference answer (search, roles), call list (tools) or target (sequence), as words. */
  answer: Json;
  /** The per-episode tables the environment answers from. */
  tables: { [key: string]: Json };
  /** Seeds of the batch's noise streams (reward model, search engine, judge). */
  keys: { [key: string]: number };
  search_noise?: number;
  [key: string]: Json | undefined;
}

/** The seed of createRng(seed).fork(label), whatever the parent has drawn. */
export function forkSeed(seed: number, label: number): number {
  return pcgHash(((seed >>> 0) ^ pcgHash(label >>> 0)) >>> 0);
}

/** The first 32-bit word of createRng(seed): how the tasks turn a forked stream into a seed. */
function firstWord(seed: number): number {
  return Math.floor(createRng(seed).next() * 4294967296);
}

const ints = (rng: Rng, count: number, n: number) => Array.from({ length: count }, () => rng.int(n));

type Drawn = Pick<RecipeRow, 'index' | 'question' | 'answer' | 'tables'>;

function searchRows(cfg: RunConfig, rng: Rng, prompts: number): Drawn[] {
  const { entities: E, attributes: A, values: V, hops } = cfg.env;
  const R = hops > 1 ? A : 0;
  const rows: Drawn[] = [];
  for (let b = 0; b < prompts; b++) {
    const kb = ints(rng, E * A, V);
    const links = ints(rng, E * R, E);
    const question = [rng.int(E)];
    for (let h = 1; h < hops; h++) question.push(rng.int(R));
    question.push(rng.int(A));
    let e = question[0]!;
    for (let h = 1; h < hops; h++) e = links[e * R + question[h]!]!;
    const truth = kb[e * A + question[hops]!]!;
    const words = [`e${question[0]}`, ...question.slice(1, hops).map((r) => `r${r}`), `a${question[hops]}`];
    rows.push({ index: b, question: ['Q', ...words], answer: ['ANSWER', `v${truth}`], tables: { kb, links, question, truth } });
  }
  return rows;
}

const PLAN_TOOLS = ['RATE', 'CONV', 'BOOK', 'CONFIRM'];
const KINDS = ['c', 'n', 'x', 'm', 'k'];

function toolsRows(cfg: RunConfig, rng: Rng, prompts: number): Drawn[] {
  const { toolSteps: S, toolValues: K, strictArgs } = cfg.env;
  const rows: Drawn[] = [];
  for (let b = 0; b < prompts; b++) {
    const rate = ints(rng, K, K);
    const conv = ints(rng, K * K, K);
    const code = ints(rng, K, K);
    const cur = rng.int(K);
    const amt = rng.int(K);
    const x = rate[cur]!;
    const m = conv[amt * K + x]!;
    const k = code[m]!;
    const args = [[`c${cur}`], [`n${amt}`, `x${x}`], [`m${m}`], [`k${k}`]].slice(0, S);
    const src = [[`prompt: requested currency c${cur}`], [`prompt: requested amount n${amt}`, `turn 0 result: the rate of c${cur}`], ['turn 1 result: the converted amount'], ['turn 2 result: the booking code']];
    const checklists = args.map((a, t) => {
      const name = PLAN_TOOLS[t]!;
      const items: Json[] = [{ id: `${name}.tool`, focus: 'tool call', question: `Is the call at turn ${t} ${name}?`, strict: true, deps: [], weight: 0.5, step: 0 }];
      const kinds = [[0], [1, 2], [3], [4]][t]!;
      a.forEach((text, j) => {
        items.push({ id: `${name}.${KINDS[kinds[j]!]}`, focus: 'tool argument', question: `Is argument ${j + 1} of ${name} ${text} (${src[t]![j]})?`, strict: strictArgs, deps: [0], weight: 0.5 / a.length, step: j + 1 });
      });
      return items;
    });
    rows.push({
      index: b,
      question: ['REQ', `n${amt}`, `c${cur}`],
      answer: args.map((a, t) => [PLAN_TOOLS[t]!, ...a]),
      tables: { rate, conv, code, currency: cur, amount: amt, checklists },
    });
  }
  return rows;
}

function rolesRows(cfg: RunConfig, rng: Rng, prompts: number): Drawn[] {
  const { entities: E, attributes: A, values: V } = cfg.env;
  const rows: Drawn[] = [];
  for (let b = 0; b < prompts; b++) {
    const kb = ints(rng, E * A, V);
    const e = rng.int(E);
    const a = rng.int(A);
    const truth = kb[e * A + a]!;
    rows.push({ index: b, question: ['Q', `e${e}`, `a${a}`, '@P'], answer: ['ANSWER', `v${truth}`], tables: { kb, entity: e, attribute: a, truth } });
  }
  return rows;
}

function sequenceRows(cfg: RunConfig, rng: Rng, prompts: number): Drawn[] {
  const L = cfg.env.seqLen;
  const flat = Array.from(sequenceTargets({ ...cfg.env, seed: cfg.seed }));
  const rows: Drawn[] = [];
  for (let b = 0; b < prompts; b++) {
    const k = rng.int(cfg.env.targets);
    const target = flat.slice(k * L, (k + 1) * L);
    rows.push({ index: b, question: [`T${k}`], answer: target.map((s) => `s${s}`), tables: { target_id: k, target } });
  }
  return rows;
}

/** The first `prompts` task instances of the playground's batch `iteration` (1-based). */
export function batchRows(cfg: RunConfig, iteration: number, prompts: number): RecipeRow[] {
  const batchSeed = forkSeed(cfg.seed, iteration);
  const rng = createRng(batchSeed);
  const drawn = { search: searchRows, tools: toolsRows, roles: rolesRows, sequence: sequenceRows }[cfg.task](cfg, rng, prompts);
  const keys: Record<string, number> = { rm_seed: forkSeed(batchSeed, RM_STREAM) };
  if (cfg.task === 'search') keys.noise_seed = firstWord(forkSeed(batchSeed, NOISE_STREAM));
  if (cfg.task === 'tools') keys.judge_seed = firstWord(forkSeed(batchSeed, JUDGE_STREAM));
  return drawn.map((d) => ({
    id: `${cfg.task}-${iteration}-${d.index}`,
    task: cfg.task,
    seed: cfg.seed,
    iteration,
    ...d,
    keys,
    ...(cfg.task === 'search' ? { search_noise: searchNoiseAt(iteration, cfg.env) } : {}),
  }));
}

/** `episodes` rows: batch 1's prompts, then batch 2's, ... (`cfg.batch` each), as the playground draws them. */
export function recipeRows(cfg: RunConfig, episodes: number): RecipeRow[] {
  if (!Number.isInteger(episodes) || episodes < 1) throw new Error(`episodes ${episodes}: expected a positive integer`);
  const rows: RecipeRow[] = [];
  for (let iteration = 1; rows.length < episodes; iteration++) rows.push(...batchRows(cfg, iteration, Math.min(cfg.batch, episodes - rows.length)));
  return rows;
}
