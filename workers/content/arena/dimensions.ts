/**
 * ARLArena's four design dimensions of policy-gradient training (docs/ARENA.md) as levels of the one
 * trainer's config: importance-sampling clipping, dynamic filtering, advantage assignment and loss
 * aggregation; and a fifth that is not ARLArena's, the rollout correction for a sampler that is not
 * the trainer. An arena spec picks levels per dimension; its cells are their cartesian product, each
 * run on several seeds. No React and no WGSL here: the page and Node's CLI (cli/arena.ts) load it.
 *
 * A level is config field texts as withFieldText takes them. `methods` is the one key several levels
 * share: the cell's method set is the union of every level's (and the spec's) methods; any other key
 * belongs to one dimension and may not also be in the spec's own `set`.
 */
import { ConfigError, defaultConfig, TASK_IDS, withFieldText, type RunConfig } from '../../core/config';
import { METHOD_IDS } from '../../core/methods';
import { countText } from '../../core/numberText';
import { overriddenFields } from '../../core/plan';
import { expandSeedRanges, readSeedRanges, seedCount, seedRangesText, SeedTextError, type SeedRange } from '../../core/seedRanges';

export type ArenaDimId = 'clip' | 'filter' | 'advantage' | 'aggregation' | 'correction';
export const ARENA_DIM_IDS: readonly ArenaDimId[] = ['clip', 'filter', 'advantage', 'aggregation', 'correction'];

/**
 * The correction level every arena had before the dimension existed. A spec at it writes no
 * `correction=` and its cells' ids and labels leave it out, so links, CLI output and ids from
 * before read and compare as they did.
 */
const NO_CORRECTION = 'none';
const atNoCorrection = (levels: readonly string[]) => levels.length === 1 && levels[0] === NO_CORRECTION;

export interface ArenaLevel {
  id: string;
  name: string;
  doc: string;
  /** Config field texts as withFieldText takes them ({ methods: 'cispo' }, { lossAgg: 'token-mean' }). */
  set: Record<string, string>;
}
export interface ArenaDimension {
  id: ArenaDimId;
  name: string;
  doc: string;
  levels: readonly ArenaLevel[];
}

export const ARENA_DIMENSIONS: readonly ArenaDimension[] = [
  {
    id: 'clip',
    name: 'IS clipping',
    doc: 'How the importance ratio pi / pi_old is bounded: a hard token clip, the tolerant clips (CISPO, SAPO) that keep every token\'s gradient, or a clip on the whole sequence\'s ratio.',
    levels: [
      { id: 'token', name: 'token clip (PPO/GRPO)', doc: 'The clipped surrogate per token, [1 - clipLow, 1 + clipHigh] (0.2 / 0.2), dual clip 3.', set: {} },
      { id: 'cispo', name: 'CISPO', doc: 'The IS weight is clipped and its gradient stopped; every token keeps a gradient (docs/METHODS.md 5.15).', set: { methods: 'cispo' } },
      { id: 'sapo', name: 'SAPO', doc: 'A soft, sign-dependent gate instead of a clip (docs/METHODS.md 5.16); it sets seq-mean-token-mean.', set: { methods: 'sapo' } },
      { id: 'sequence', name: 'sequence clip (GSPO)', doc: 'One ratio per trajectory (geometric mean of its tokens\' ratios) clipped to [1 - 3e-4, 1 + 4e-4] (docs/METHODS.md 4.5); it sets seq-mean-token-mean.', set: { methods: 'gspo' } },
    ],
  },
  {
    id: 'filter',
    name: 'dynamic filtering',
    doc: 'Whether groups whose rewards are all equal (no learning signal) are dropped and the batch refilled with new prompts.',
    levels: [
      { id: 'none', name: 'none', doc: 'Every group is trained on, all-equal ones with advantage 0.', set: {} },
      { id: 'dynamic', name: 'dynamic filtering', doc: 'All-equal groups dropped and refilled, at most 3 rollout rounds (docs/METHODS.md 5.18).', set: { methods: 'dynfilter' } },
    ],
  },
  {
    id: 'advantage',
    name: 'advantage assignment',
    doc: 'What an advantage is attached to: the whole trajectory, each step (turn), or each token.',
    levels: [
      { id: 'trajectory', name: 'trajectory (GRPO)', doc: 'The group-normalized outcome, the same on every token of a rollout.', set: { methods: 'grpo' } },
      { id: 'step', name: 'step (GiGPO)', doc: 'Episode advantage plus a step advantage over anchor states (docs/METHODS.md 5.17).', set: { methods: 'gigpo' } },
      { id: 'token', name: 'token (PPO GAE)', doc: "GAE over a learned critic table: each token its own advantage (docs/METHODS.md 4.1), whitened over the batch.", set: { methods: 'ppo' } },
    ],
  },
  {
    id: 'aggregation',
    name: 'loss aggregation',
    doc: 'How token losses become one number (docs/METHODS.md 1.3): which tokens and sequences weigh how much.',
    levels: [
      { id: 'token-mean', name: 'token-mean', doc: 'Every token of the minibatch weighs the same.', set: { lossAgg: 'token-mean' } },
      { id: 'seq-mean-token-mean', name: 'seq-mean-token-mean', doc: 'Every sequence weighs the same; tokens within it equally.', set: { lossAgg: 'seq-mean-token-mean' } },
      { id: 'seq-mean-token-sum', name: 'seq-mean-token-sum', doc: 'Every sequence weighs the same; its tokens summed.', set: { lossAgg: 'seq-mean-token-sum' } },
      { id: 'seq-mean-token-sum-norm', name: 'seq-mean-token-sum-norm', doc: 'Token sums over a constant, the padded length (Dr. GRPO).', set: { lossAgg: 'seq-mean-token-sum-norm' } },
    ],
  },
  {
    id: 'correction',
    name: 'rollout correction',
    doc: "Not one of ARLArena's four: how the update treats tokens drawn by a sampler that is not the trainer (rollout.precision, rollout.topP, rollout.topK, staleness), through the ratio rho = pi_old / pi_sampler of each drawn token (docs/METHODS.md 5.19). With the sampler at the trainer's settings rho is 1 and every level trains exactly as none.",
    levels: [
      { id: 'none', name: 'no correction', doc: "The sampler's tokens are trained on as they came; the gap between sampler and trainer is left in.", set: {} },
      { id: 'tis', name: 'token IS weight (Token-TIS)', doc: "Each token's loss is multiplied by its own rho, capped at 2, as a constant (no gradient through it).", set: { methods: 'tis' } },
      { id: 'seqis', name: 'sequence IS weight (Seq-TIS)', doc: "Every token of a rollout is weighted by the product of its tokens' rho, capped at 2: unbiased up to the cap, noisier than the token weight.", set: { methods: 'seqis' } },
      { id: 'tokenrs', name: 'token rejection (Token RS)', doc: 'A token whose rho is outside [0.5, 2] leaves the loss; the tokens kept train unweighted.', set: { methods: 'tokenrs' } },
      { id: 'seqrs', name: 'sequence rejection (Seq-MIS)', doc: "A rollout whose product of its tokens' rho is outside [0.5, 2] leaves the loss whole.", set: { methods: 'seqrs' } },
      { id: 'geors', name: 'geometric rejection (Geo-RS)', doc: "A rollout whose geometric mean of its tokens' rho is outside [0.999, 1.001] leaves the loss whole: a narrow band that does not tighten with length.", set: { methods: 'geors' } },
      { id: 'veto', name: 'catastrophic-token veto', doc: 'A rollout with any token whose rho is below 1e-4 (a token the trainer all but rules out) leaves the loss whole.', set: { methods: 'veto' } },
    ],
  },
];

export interface ArenaSpec {
  task: string;
  /** Config field texts every cell gets (the regime: epochs, staleness, task knobs, extra methods). */
  set: Record<string, string>;
  levels: Record<ArenaDimId, string[]>;
  seeds: number[];
  iters: number;
}

export interface ArenaPreset {
  id: string;
  name: string;
  doc: string;
  spec: ArenaSpec;
}

/** The off-policy regime the presets run in: four passes over each batch in two minibatches, so ratios leave 1. */
const OFF_POLICY: Record<string, string> = { epochs: '4', minibatches: '2' };
const SEEDS_1_8 = [1, 2, 3, 4, 5, 6, 7, 8];

/** SAMPO's choice in every dimension: the base ARLArena's ablations vary one dimension from. */
const SAMPO_LEVELS: Record<ArenaDimId, string[]> = { clip: ['sequence'], filter: ['dynamic'], advantage: ['step'], aggregation: ['seq-mean-token-mean'], correction: [NO_CORRECTION] };

/**
 * The sampler-mismatch preset's regime, one constant so that the regime changes in one place: an
 * asynchronous engine, a sampler that rounds its logits to bf16 and runs 8 updates behind the f32
 * trainer, the regime of the corrections' entries in workers/content/whyCorrections.ts. A bf16 or
 * top-p gap alone is too small on this toy for a correction to act on (docs/ARENA.md).
 */
export const SAMPLER_MISMATCH_SET: Readonly<Record<string, string>> = { init: 'pretrained', minibatches: '2', lr: '0.03', 'rollout.precision': 'bf16', staleness: '8' };

const ablation = (dim: ArenaDimId, note = '', base: Partial<Record<ArenaDimId, string[]>> = {}): ArenaPreset => ({
  id: `ablate-${dim}`,
  name: `ablation: ${dim}`,
  doc: `ARLArena's ablation of the ${dim} dimension: every level of it, the other three at SAMPO's choice (sequence clip, dynamic filtering, step advantages, seq-mean-token-mean).${note}`,
  spec: {
    task: 'search',
    set: OFF_POLICY,
    levels: { ...SAMPO_LEVELS, ...base, [dim]: ARENA_DIMENSIONS.find((d) => d.id === dim)!.levels.map((l) => l.id) },
    seeds: SEEDS_1_8,
    iters: 60,
  },
});

export const ARENA_PRESETS: readonly ArenaPreset[] = [
  {
    id: 'clipping',
    name: 'clipping comparison',
    doc: 'Token clip, the tolerant clips CISPO and SAPO, and the sequence clip, everything else fixed (no filtering, trajectory advantages, seq-mean-token-mean, which SAPO and GSPO set themselves), off-policy (4 epochs, 2 minibatches).',
    spec: { task: 'search', set: OFF_POLICY, levels: { clip: ['token', 'cispo', 'sapo', 'sequence'], filter: ['none'], advantage: ['trajectory'], aggregation: ['seq-mean-token-mean'], correction: [NO_CORRECTION] }, seeds: SEEDS_1_8, iters: 60 },
  },
  {
    id: 'grid',
    name: 'full grid',
    doc: "Every level of ARLArena's four dimensions, no rollout correction (combinations the config refuses or overrides are skipped with the reason).",
    spec: {
      task: 'search',
      set: OFF_POLICY,
      // The correction is left out: on this preset's sampler (the trainer's) every correction level is the none cell again.
      levels: { ...(Object.fromEntries(ARENA_DIMENSIONS.map((d) => [d.id, d.levels.map((l) => l.id)])) as Record<ArenaDimId, string[]>), correction: [NO_CORRECTION] },
      seeds: [1, 2, 3],
      iters: 60,
    },
  },
  ablation('clip'),
  ablation('filter'),
  ablation('advantage'),
  // GSPO sets seq-mean-token-mean itself: under the sequence clip the aggregation has one cell.
  ablation('aggregation', ' The clip is the token clip here: the sequence clip (GSPO) fixes the aggregation at seq-mean-token-mean.', { clip: ['token'] }),
  {
    id: 'sampo-parts',
    name: 'SAMPO against its parts',
    doc: "SAMPO's three choices (sequence clip, dynamic filtering, step advantages) each on and off against the GRPO baseline, seq-mean-token-mean throughout. The composed cell is SAMPO's design, not the `sampo` method bit for bit: that one also clips per step (3e-3 / 4e-3), trains on step rows and adds a KL of 0.01.",
    spec: { task: 'search', set: OFF_POLICY, levels: { clip: ['token', 'sequence'], filter: ['none', 'dynamic'], advantage: ['trajectory', 'step'], aggregation: ['seq-mean-token-mean'], correction: [NO_CORRECTION] }, seeds: SEEDS_1_8, iters: 60 },
  },
  {
    id: 'sampler-mismatch',
    name: 'when the sampler is not the trainer',
    doc: 'Every rollout correction against none, on a sampler that rounds its logits to bf16 and runs 8 updates behind the f32 trainer (an asynchronous engine); from a pretrained start, 2 minibatches, lr 0.03, token clip, no filtering, trajectory advantages, token-mean.',
    spec: {
      task: 'search',
      set: { ...SAMPLER_MISMATCH_SET },
      levels: { clip: ['token'], filter: ['none'], advantage: ['trajectory'], aggregation: ['token-mean'], correction: arenaDimension('correction').levels.map((l) => l.id) },
      seeds: SEEDS_1_8,
      iters: 100,
    },
  },
];

export interface ArenaCell {
  /** The level ids joined by dots, in dimension order; the correction's only when it is not none. */
  id: string;
  /** The levels of the dimensions the spec varies (when it varies none, all of them but a correction of none). */
  label: string;
  levels: Record<ArenaDimId, string>;
  /** The levels' config texts merged: methods united, the other keys as the levels set them. */
  set: Record<string, string>;
}

export function arenaDimension(id: string): ArenaDimension {
  const d = ARENA_DIMENSIONS.find((x) => x.id === id);
  if (!d) throw new Error(`arena: unknown dimension "${id}"; expected one of ${ARENA_DIM_IDS.join(', ')}`);
  return d;
}

export function arenaLevel(dim: ArenaDimId, id: string): ArenaLevel {
  const d = arenaDimension(dim);
  const l = d.levels.find((x) => x.id === id);
  if (!l) throw new Error(`arena: unknown ${dim} level "${id}"; expected one of ${d.levels.map((x) => x.id).join(', ')}`);
  return l;
}

/**
 * Most runs (cells x seeds) one arena holds. The page keeps a summary per run and the CLI a child
 * process per run; a link of a few kilobytes can name millions of seeds (`0-10000,10001-20001,...`),
 * so this is checked on the counts, before any seed is expanded or any cell drawn.
 */
export const MAX_ARENA_RUNS = 10_000;
/** Most iterations one arena trains (cells x seeds x iterations): long, not endless (a single link's run is at most 100,000). */
export const MAX_ARENA_ITERATIONS = 1_000_000;
/** Most iterations of one run. */
export const MAX_ARENA_ITERS = 100_000;

/** The spec's grid size before any combination is skipped: the product of its level counts. */
function gridCells(levels: Record<ArenaDimId, string[]>): number {
  return ARENA_DIM_IDS.reduce((n, d) => n * levels[d].length, 1);
}

/** Refuses an arena over the budget, naming the counts: its cells, seeds and iterations are counts here, nothing expanded. */
function checkArenaBudget(cells: number, seeds: number, iters: number): void {
  const runs = cells * seeds;
  // Written only for the error: the check runs on every arena spec, the page's default one at load.
  const grid = () => `${countText(seeds)} seed${seeds === 1 ? '' : 's'} x ${countText(cells)} cell${cells === 1 ? '' : 's'} = ${countText(runs)} runs`;
  if (runs > MAX_ARENA_RUNS) throw new Error(`arena: ${grid()}; an arena holds at most ${countText(MAX_ARENA_RUNS)} runs (seeds x cells)`);
  if (runs * iters > MAX_ARENA_ITERATIONS) {
    throw new Error(`arena: ${grid()} of ${countText(iters)} iterations = ${countText(runs * iters)}; an arena trains at most ${countText(MAX_ARENA_ITERATIONS)} iterations (seeds x cells x iterations)`);
  }
}

/** The levels' names: known dimensions and levels, at least one each, none twice. */
function checkArenaLevels(levels: Record<ArenaDimId, string[]>): void {
  for (const dim of ARENA_DIM_IDS) {
    const ls = levels[dim];
    if (!Array.isArray(ls) || ls.length === 0) throw new Error(`arena: ${dim}: expected at least one level`);
    for (const l of ls) arenaLevel(dim, l);
    if (new Set(ls).size !== ls.length) throw new Error(`arena: ${dim}: a level is listed twice`);
  }
  for (const k of Object.keys(levels)) arenaDimension(k);
}

function checkArenaIters(iters: number): void {
  if (!(Number.isInteger(iters) && iters >= 1 && iters <= MAX_ARENA_ITERS)) throw new Error(`arena: iters: expected an integer in [1, ${MAX_ARENA_ITERS}], got ${iters}`);
}

/** Checks a spec's shape, names and budget; throws naming what is wrong. */
export function checkArenaSpec(spec: ArenaSpec): void {
  if (typeof spec.task !== 'string' || !(TASK_IDS as readonly string[]).includes(spec.task)) throw new Error(`arena: task: expected one of ${TASK_IDS.join(', ')}, got "${spec.task}"`);
  checkArenaLevels(spec.levels);
  checkArenaIters(spec.iters);
  if (!Array.isArray(spec.seeds) || spec.seeds.length === 0) throw new Error('arena: seeds: expected at least one seed');
  checkArenaBudget(gridCells(spec.levels), spec.seeds.length, spec.iters);
  for (const s of spec.seeds) if (!(Number.isInteger(s) && s >= 0 && s < 2 ** 31)) throw new Error(`arena: seeds: ${s} is not a seed (an integer in [0, 2^31))`);
  if (new Set(spec.seeds).size !== spec.seeds.length) throw new Error('arena: seeds: a seed is listed twice');
  if ('task' in spec.set || 'seed' in spec.set) throw new Error('arena: set: task and seed are the spec\'s own fields, not set keys');
  // The spec's own methods join every cell's: each must be a method (the text form could not hold one with a ';' or '=').
  const unknown = (spec.set.methods ?? '').split(',').filter((id) => id && !(METHOD_IDS as readonly string[]).includes(id));
  if (unknown.length) throw new Error(`arena: set: methods: unknown method "${unknown[0]!.slice(0, 24)}"; expected some of ${METHOD_IDS.join(', ')}`);
  // The task and the spec's own keys alone, so that a bad one is named once, not as every cell's skip.
  let cfg = withFieldText(defaultConfig(), 'task', spec.task);
  for (const [k, v] of Object.entries(spec.set)) {
    try {
      if (k !== 'methods') cfg = withFieldText(cfg, k, v);
    } catch (e) {
      throw new Error(`arena: set: ${(e as Error).message}`);
    }
  }
  for (const dim of ARENA_DIM_IDS) {
    for (const l of spec.levels[dim]) {
      for (const k of Object.keys(arenaLevel(dim, l).set)) {
        if (k !== 'methods' && k in spec.set) throw new Error(`arena: set: ${k} is the ${dim} dimension's; choose it with its levels instead`);
      }
    }
  }
}

/** The cell's config texts: the spec's methods and every level's united, the levels' other keys. */
function mergeLevels(spec: ArenaSpec, levels: Record<ArenaDimId, string>): Record<string, string> {
  const methods: string[] = (spec.set.methods ?? '').split(',').filter((s) => s);
  const set: Record<string, string> = {};
  for (const dim of ARENA_DIM_IDS) {
    for (const [k, v] of Object.entries(arenaLevel(dim, levels[dim]).set)) {
      if (k === 'methods') methods.push(...v.split(',').filter((s) => s));
      else set[k] = v;
    }
  }
  return { methods: [...new Set(methods)].join(','), ...set };
}

/**
 * Every combination of the spec's levels, in dimension order (clip slowest). A combination the config
 * refuses (a method conflict, a method on the wrong task) or in which an active method overrides a
 * level's own setting (SAPO and GSPO set seq-mean-token-mean, so they have no token-mean cell) is
 * skipped, with the config's reason.
 */
export function arenaCells(spec: ArenaSpec): { cells: ArenaCell[]; skipped: { label: string; why: string }[] } {
  checkArenaSpec(spec);
  const varied = ARENA_DIM_IDS.filter((d) => spec.levels[d].length > 1);
  const shown = varied.length ? varied : ARENA_DIM_IDS.filter((d) => d !== 'correction' || !atNoCorrection(spec.levels.correction));
  let combos: Array<Record<ArenaDimId, string>> = [{} as Record<ArenaDimId, string>];
  for (const dim of ARENA_DIM_IDS) combos = combos.flatMap((c) => spec.levels[dim].map((l) => ({ ...c, [dim]: l })));
  const cells: ArenaCell[] = [];
  const skipped: { label: string; why: string }[] = [];
  for (const levels of combos) {
    const cell: ArenaCell = {
      // Ids name runs in the CLI's JSON lines and the page's test hooks: a correction of none keeps the four-part id they had.
      id: ARENA_DIM_IDS.filter((d) => d !== 'correction' || levels[d] !== NO_CORRECTION).map((d) => levels[d]).join('.'),
      label: shown.map((d) => `${d}=${levels[d]}`).join(' '),
      levels,
      set: mergeLevels(spec, levels),
    };
    try {
      const cfg = cellConfig(spec, cell, spec.seeds[0]!);
      const over = overriddenFields(cfg).filter((o) => o.key in cell.set);
      if (over.length) {
        skipped.push({ label: cell.label, why: over.map((o) => `${o.key}: the active methods (${cfg.methods.join(', ')}) use ${o.value}`).join('; ') });
        continue;
      }
    } catch (e) {
      skipped.push({ label: cell.label, why: (e as Error).message });
      continue;
    }
    cells.push(cell);
  }
  return { cells, skipped };
}

/**
 * One run's config: the defaults, the task, the spec's `set`, the cell's merged levels, the seed.
 * Throws an Error whose message names the cell and the bad key.
 */
export function cellConfig(spec: ArenaSpec, cell: ArenaCell, seed: number): RunConfig {
  try {
    let cfg = withFieldText(defaultConfig(), 'task', spec.task);
    for (const [k, v] of Object.entries(spec.set)) if (k !== 'methods') cfg = withFieldText(cfg, k, v);
    for (const [k, v] of Object.entries(cell.set)) if (k !== 'methods') cfg = withFieldText(cfg, k, v);
    cfg = withFieldText(cfg, 'methods', cell.set.methods ?? '');
    return withFieldText(cfg, 'seed', String(seed));
  } catch (e) {
    if (e instanceof ConfigError) throw new Error(`arena cell ${cell.label}: ${e.message}`);
    throw e;
  }
}

/** Seed text read into ranges (nothing expanded); errors are `arena: seeds: ...`. */
function arenaSeedRanges(text: string): SeedRange[] {
  try {
    return readSeedRanges(text);
  } catch (e) {
    throw e instanceof SeedTextError ? new Error(`arena: seeds: ${e.message}`) : e;
  }
}

/** Expands ranges whose count has been checked; errors are `arena: seeds: ...`. */
function expandArenaSeeds(ranges: readonly SeedRange[]): number[] {
  try {
    return expandSeedRanges(ranges);
  } catch (e) {
    throw e instanceof SeedTextError ? new Error(`arena: seeds: ${e.message}`) : e;
  }
}

/**
 * "1-3,5" -> 1,2,3,5 for an arena: more than the runs an arena holds is refused before a seed is
 * expanded. Throws naming the bad part.
 */
export function parseSeedsText(text: string): number[] {
  const ranges = arenaSeedRanges(text);
  const n = seedCount(ranges);
  if (n > MAX_ARENA_RUNS) throw new Error(`arena: seeds: ${countText(n)} seeds; an arena holds at most ${countText(MAX_ARENA_RUNS)} runs (seeds x cells)`);
  return expandArenaSeeds(ranges);
}

/**
 * The compact text of a spec (the share link's `arena=` parameter, the CLI's --spec):
 * `task=search;iters=60;seeds=1-8;clip=token,cispo;filter=none;advantage=trajectory;aggregation=token-mean;correction=none,tis;set.epochs=4`.
 */
export function arenaSpecToText(spec: ArenaSpec): string {
  checkArenaSpec(spec);
  const parts = [`task=${spec.task}`, `iters=${spec.iters}`, `seeds=${seedRangesText(spec.seeds)}`];
  for (const dim of ARENA_DIM_IDS) {
    // Left out at none, as a link from before the dimension reads it: such a link is written as it was.
    if (dim === 'correction' && atNoCorrection(spec.levels[dim])) continue;
    parts.push(`${dim}=${spec.levels[dim].join(',')}`);
  }
  for (const [k, v] of Object.entries(spec.set)) {
    if (/[;=]/.test(k) || /[;=]/.test(v)) throw new Error(`arena: set: "${k}=${v}" has a ';' or '=' the text form cannot hold`);
    parts.push(`set.${k}=${v}`);
  }
  return parts.join(';');
}

/**
 * Parses arenaSpecToText's form; a dimension left out takes its first level (the correction's is
 * none, so a spec from before that dimension means what it meant). Errors name the part.
 * The seeds are counted against the budget with the levels and iterations before they are expanded.
 */
export function parseArenaSpec(text: string): ArenaSpec {
  const spec: ArenaSpec = { task: 'search', set: {}, levels: { clip: [], filter: [], advantage: [], aggregation: [], correction: [] }, seeds: [1], iters: 60 };
  let seedRanges: SeedRange[] | null = null;
  const seen = new Set<string>();
  for (const part of text.split(';').filter((p) => p.trim())) {
    const eq = part.indexOf('=');
    if (eq <= 0) throw new Error(`arena: "${part}": expected key=value`);
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (seen.has(key)) throw new Error(`arena: ${key} is given twice`);
    seen.add(key);
    if (key === 'task') spec.task = value;
    else if (key === 'iters') {
      if (!/^\d+$/.test(value)) throw new Error(`arena: iters: expected a whole number, got "${value}"`);
      spec.iters = Number(value);
    } else if (key === 'seeds') seedRanges = arenaSeedRanges(value);
    else if ((ARENA_DIM_IDS as readonly string[]).includes(key)) spec.levels[key as ArenaDimId] = value.split(',').filter((s) => s);
    else if (key.startsWith('set.') && key.length > 4) spec.set[key.slice(4)] = value;
    else throw new Error(`arena: unknown key "${key}"; expected task, iters, seeds, ${ARENA_DIM_IDS.join(', ')} or set.<config key>`);
  }
  for (const dim of ARENA_DIM_IDS) if (!seen.has(dim)) spec.levels[dim] = [arenaDimension(dim).levels[0]!.id];
  if (seedRanges) {
    checkArenaLevels(spec.levels);
    checkArenaIters(spec.iters);
    checkArenaBudget(gridCells(spec.levels), seedCount(seedRanges), spec.iters);
    spec.seeds = expandArenaSeeds(seedRanges);
  }
  checkArenaSpec(spec);
  return spec;
}
