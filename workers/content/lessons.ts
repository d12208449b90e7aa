/**
 * Lessons: guided classroom demonstrations, as data. A lesson is a handful of runs (share
 * links of the one RunConfig, fixed seed, a fixed number of iterations), numbered steps that load
 * them with a "what you should see" line each, and the claims behind those lines as checkable specs.
 *
 * The claims are measured, not hoped for: tests/unit/lessonClaims.*.test.ts run every run of every lesson
 * headless on the CPU backend with these exact configs and checks every claim with its margin; the
 * Lessons panel (app/lessons/) computes the same statistics from the live run and shows the numbers
 * next to each line. Numbers quoted in the text are those of the CPU backend on the lesson's seed.
 *
 * Pure data and pure functions: no DOM, no trainer. Statistics read metric rows (workers/core/metrics.ts,
 * by their contract names) and the batch dump of a run's last iteration (docs/ARCHITECTURE.md "The batch dump").
 */
import { defaultConfig, withFieldText, type RunConfig } from '../core/config';
import type { MetricRow, ScalarMetric } from '../core/metrics';
import type { PanelId } from '../formats/shareUrl';
import type { BatchDump } from '../formats/batchDump';

// ---------------------------------------------------------------------------------------------
// Types
// ---------------------------------------------------------------------------------------------

/** One configuration of a lesson: flat config keys as a share link writes them (`task`, `methods`, `env.values`...). */
export interface LessonRun {
  id: string;
  /** Short name shown in the panel ("GRPO", "GRPO + DAPO"). */
  label: string;
  set: Readonly<Record<string, string>>;
  /** Iterations the step runs (the link's `step=`, where it pauses) and the claims measure. */
  iters: number;
}

export type Agg = 'mean' | 'max' | 'min' | 'last';

/** A statistic of a run's metric rows: `agg` of `metric` over iterations `from`..`to` (1-based, inclusive). */
export interface SeriesStat {
  run: string;
  metric: ScalarMetric;
  agg: Agg;
  /** First iteration of the window (default 1). */
  from?: number;
  /** Last iteration of the window (default: the run's iters). */
  to?: number;
}

/** Statistics of the batch dump of a run's last iteration (see DUMP_STATS). */
export type DumpStatId = keyof typeof DUMP_STATS;

export interface DumpStat {
  run: string;
  dump: DumpStatId;
}

export type Stat = SeriesStat | DumpStat;

/**
 * A checkable claim: `a` compared with `b` (another statistic or a constant).
 *   op '>' holds when a >= b + by (or a >= b * times);  op '<' when a <= b - by (or a <= b / times).
 * Exactly one of `by` and `times` is given (by: 0 for a plain comparison).
 */
export interface Claim {
  id: string;
  /** The line the panel shows ("what you should see"), with the measured numbers of the CPU backend. */
  see: string;
  a: Stat;
  op: '>' | '<';
  b: Stat | number;
  by?: number;
  times?: number;
}

export interface LessonStep {
  /** The run this step's link loads. */
  run: string;
  /** What to do, in a sentence or three. */
  text: string;
  /** What you should see (one line). */
  see: string;
  /** The claims this step's line makes (ids into the lesson's claims). */
  claims: string[];
  /** Open the batch inspector's trajectory view on this step (its numbers live in the batch dump). */
  inspect?: boolean;
  /** The live charts the text tells you to watch (chart ids as in `charts`): the panel shows them beside the text. */
  watch?: string[];
}

export interface Lesson {
  id: string;
  title: string;
  /** One or two sentences: the question the lesson answers. */
  summary: string;
  /** Methods whose papers the panel links (arXiv ids come from the registry). */
  methods: string[];
  runs: LessonRun[];
  steps: LessonStep[];
  claims: Claim[];
  /** Presenter mode hides these panels (share-link `hide=` ids). */
  hide: PanelId[];
  /** Presenter mode keeps only these charts (app/lessons/charts.ts: chart group ids and the distribution charts). */
  charts: string[];
  /** What to take away, one sentence, shown after the last step. */
  takeaway: string;
  /** The seeds every run trains on (LESSON_SEEDS when absent); claims hold on the mean over them. */
  seeds?: readonly number[];
}

/**
 * The seeds of a lesson: every run trains on each, and each claim is asserted on the mean over
 * them, so one unlucky seed (or a GPU's slightly different floats, which is another seed) does not
 * put a false ✗ in front of a class.
 */
export const LESSON_SEEDS: readonly number[] = [1, 2, 3, 4];

export function lessonSeeds(lesson: Lesson): readonly number[] {
  return lesson.seeds ?? LESSON_SEEDS;
}

/**
 * `count` seeds outside the lesson's, drawn deterministically from the lesson id: the held-out
 * check that the claims were not fitted to the lesson's own seeds.
 */
export function heldOutSeeds(lesson: Lesson, count = 4): number[] {
  const own = new Set(lessonSeeds(lesson));
  let h = 0x811c9dc5;
  for (const ch of `held-out:${lesson.id}`) h = Math.imul(h ^ ch.charCodeAt(0), 0x01000193);
  const out: number[] = [];
  while (out.length < count) {
    h = Math.imul(h ^ (h >>> 15), 0x2c1b3c6d) >>> 0;
    const seed = 100 + (h % 100_000);
    if (!own.has(seed) && !out.includes(seed)) out.push(seed);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// The lessons
// ---------------------------------------------------------------------------------------------

const SMALL = { batch: '8', group: '8' } as const;
/**
 * Lesson 1's hard search task on a pretrained start: two hops and 32 values, from a policy trained on
 * demonstrations of this task whose turns are random half of the time. It knows every move
 * (relation search, attribute search, copy) but rarely strings them together: about 1 success in
 * 25. Groups of 4 (16 prompts, the same 64 rollouts) leave most groups all wrong, so GRPO's rare
 * signal stays too thin to take off within the lesson; with groups of 8, or demonstrations that
 * err less, it took off on some seeds by iteration 30. Easier demonstrations (one hop) never show
 * the relation tokens, and that start is at chance for every method (docs/LESSONS.md, the regimes
 * tried).
 */
const PRE_HARD = { batch: '16', group: '4', 'env.values': '32', 'env.hops': '2', init: 'pretrained', 'init.demos': 'task', 'init.demoNoise': '0.5' } as const;
/** Lesson 3: 4 epochs x 2 minibatches per batch, so the ratios move away from 1. */
const EPOCHS = { batch: '4', group: '8', epochs: '4', minibatches: '2' } as const;
const STALE = { ...SMALL, staleness: '4', minibatches: '2', lr: '0.01' } as const;
const PARTIAL = { ...SMALL, task: 'sequence', 'env.seqReward': 'partial' } as const;
const ROLES = { ...SMALL, task: 'roles', 'env.roleScale': '5', 'env.roleOffset': '0.5' } as const;
/**
 * The crash lesson's regime (docs/LESSONS.md "Why training crashes: the regime search"): the
 * sequence task with partial credit, 8 epochs x 2 minibatches per batch at lr 0.02, so every batch
 * takes 16 optimizer steps and the ratios leave any clip range within the first iteration.
 */
const PRESSURE = { ...PARTIAL, epochs: '8', minibatches: '2', lr: '0.02' } as const;

/**
 * The sampler lesson's first part: the search task from a pretrained start, one optimizer step per
 * batch, so PPO's ratio is exactly 1 and any gap between sampler and trainer is the sampler's.
 */
const SAMPLER_ON = { init: 'pretrained' } as const;
/**
 * Its second part, an asynchronous engine: the regime of the corrections' entries in
 * workers/content/whyCorrections.ts (2 minibatches per batch at lr 0.03, a bf16 sampler), fresh or
 * 8 updates behind the trainer.
 */
const ASYNC = { init: 'pretrained', minibatches: '2', lr: '0.03', 'rollout.precision': 'bf16' } as const;

/** Lesson 4's margin: about half the rise the lesson seeds showed (0.95), docs/LESSONS.md. */
const CLEAN_BY = 0.45;
const mean = (run: string, metric: ScalarMetric, from?: number, to?: number): SeriesStat => ({
  run,
  metric,
  agg: 'mean',
  ...(from !== undefined ? { from } : {}),
  ...(to !== undefined ? { to } : {}),
});
const dump = (run: string, id: DumpStatId): DumpStat => ({ run, dump: id });

export const LESSONS: readonly Lesson[] = [
  {
    id: 'collapse',
    title: 'Advantage Collapse',
    summary:
      'GRPO learns from differences within a group. When all 4 rollouts of a prompt fail, every advantage in the group is 0 and the prompt teaches nothing. The policy starts pretrained: it can search and copy, but rarely solves the hard task. Which remedy lifts its success, and what does it cost?',
    methods: ['grpo', 'igpo', 'edge', 'dars', 'dapo', 'cm2'],
    runs: [
      { id: 'grpo', label: 'GRPO, hard search, pretrained', set: { ...PRE_HARD }, iters: 30 },
      { id: 'igpo', label: 'IGPO, hard search, pretrained', set: { ...PRE_HARD, methods: 'igpo' }, iters: 30 },
      { id: 'edge', label: 'GRPO + EDGE-GRPO, hard search, pretrained', set: { ...PRE_HARD, methods: 'grpo,edge' }, iters: 30 },
      { id: 'dars', label: 'GRPO + DARS, hard search, pretrained', set: { ...PRE_HARD, methods: 'grpo,dars', 'dars.nMax': '32' }, iters: 30 },
      { id: 'dapo', label: 'GRPO + DAPO, hard search, pretrained', set: { ...PRE_HARD, methods: 'grpo,dapo' }, iters: 30 },
      { id: 'tools', label: 'GRPO, tools, outcome reward', set: { ...SMALL, task: 'tools' }, iters: 40 },
      { id: 'cm2', label: 'CM2, tools, checklist reward', set: { ...SMALL, task: 'tools', methods: 'cm2' }, iters: 40 },
    ],
    steps: [
      {
        run: 'grpo',
        text: 'Load this step: a pretrained policy on a two-hop search task with 32 possible answers (16 prompts x 4 rollouts); GRPO runs 30 iterations and pauses. Watch the Advantage Collapse chart and the success curve.',
        watch: ['groups_all_equal_frac', 'reward'],
        see: 'About 6 groups in 7 are all-equal (0.85) and as many tokens have an advantage of exactly 0. Success stays flat and low: about 1 in 25 (0.039 in iterations 1-10, 0.045 in 21-30; chance is 1 in 32). The few groups with a success are too thin a signal to take off within the lesson.',
        claims: ['grpo-collapse', 'grpo-zero', 'grpo-low', 'grpo-flat'],
      },
      {
        run: 'igpo',
        text: 'Switch on IGPO (it replaces GRPO\'s estimator) and run the same 30 iterations on the same seeds.',
        see: 'The outcomes still tie (all-equal groups 0.86), but zero-advantage tokens drop from 0.85 to 0.35: each search turn is rewarded by how much it raised the policy\'s probability of the true answer, which differs even when every answer is wrong. Within 30 iterations that is not yet more success (0.039 in iterations 21-30 against 0.045): the signal is back, the learning it drives is slow.',
        claims: ['igpo-zero', 'igpo-ties'],
      },
      {
        run: 'edge',
        text: 'Back to GRPO, with EDGE-GRPO on: its guided error correction finishes some failing rollouts with the reference answer, or replaces them by the reference solution.',
        see: 'All-equal groups fall from 0.85 to 0.14, for about 93 rollouts per iteration instead of 64 (1.45x). The policy\'s own success lifts: 0.15 in iterations 21-30 against 0.045 with GRPO, as it imitates the injected solutions of moves it already knows.',
        claims: ['edge-alleq', 'edge-rollouts', 'edge-lifts'],
      },
      {
        run: 'dars',
        text: 'GRPO with DARS instead: prompts below 50% accuracy get extra rollouts, up to 32 in all.',
        see: 'About 150 rollouts per iteration (2.4x). The rare success now turns up in some hard prompts\' enlarged groups; prompts still without one are dropped, so no trained group is all-equal (0.00). But success does not lift (0.030 in iterations 21-30 against 0.045): from a start this weak, more rollouts find too few successes to learn from.',
        claims: ['dars-rollouts', 'dars-alleq'],
      },
      {
        run: 'dapo',
        text: 'GRPO with DAPO: dynamic sampling drops all-equal groups and rolls out more prompts to refill the batch.',
        see: 'About 190 rollouts per iteration (3 generation rounds) and all-equal groups fall to about 0.6: after 3 rounds DAPO gives up and fills the batch with what it has.',
        claims: ['dapo-alleq', 'dapo-rollouts'],
      },
      {
        run: 'tools',
        text: 'A different remedy needs a different task. On the tools task (three calls in order, random initial weights) the outcome reward is 1 only if every call and argument is right. Load GRPO there (40 iterations).',
        see: 'Nearly every group is all-equal (0.98) and success is about 0.',
        claims: ['tools-collapse', 'tools-fail'],
      },
      {
        run: 'cm2',
        text: 'Switch to CM2: a checklist gives partial credit for each right call and argument.',
        see: 'No group is all-equal any more (0.00), and true success starts to rise: 0.05 in iterations 21-40 against 0.006 with the outcome reward.',
        claims: ['cm2-alleq', 'cm2-success'],
      },
    ],
    // Margins set on seeds 1-4 (docs/LESSONS.md, "Advantage Collapse on a pretrained start") before
    // the held-out seeds were run on this regime.
    claims: [
      { id: 'grpo-collapse', see: 'GRPO: most groups all-equal', a: mean('grpo', 'groups_all_equal_frac'), op: '>', b: 0.6 },
      { id: 'grpo-zero', see: 'GRPO: most tokens have zero advantage', a: mean('grpo', 'adv_zero_frac'), op: '>', b: 0.6 },
      { id: 'grpo-low', see: 'GRPO: success stays low', a: mean('grpo', 'success_rate'), op: '<', b: 0.08 },
      { id: 'grpo-flat', see: 'GRPO: success in iterations 21-30 under twice that of 1-10', a: mean('grpo', 'success_rate', 21, 30), op: '<', b: mean('grpo', 'success_rate', 1, 10), times: 0.5 },
      { id: 'igpo-zero', see: 'IGPO: fewer zero-advantage tokens', a: mean('igpo', 'adv_zero_frac'), op: '<', b: mean('grpo', 'adv_zero_frac'), by: 0.25 },
      { id: 'igpo-ties', see: 'IGPO: the outcomes still tie', a: mean('igpo', 'groups_all_equal_frac'), op: '>', b: 0.5 },
      { id: 'edge-alleq', see: 'EDGE-GRPO: far fewer all-equal groups', a: mean('edge', 'groups_all_equal_frac'), op: '<', b: mean('grpo', 'groups_all_equal_frac'), by: 0.35 },
      { id: 'edge-rollouts', see: 'EDGE-GRPO: corrections cost rollouts', a: mean('edge', 'rollouts'), op: '>', b: mean('grpo', 'rollouts'), by: 15 },
      { id: 'edge-lifts', see: 'EDGE-GRPO: success well above GRPO\'s (iterations 21-30)', a: mean('edge', 'success_rate', 21, 30), op: '>', b: mean('grpo', 'success_rate', 21, 30), by: 0.05 },
      { id: 'dars-rollouts', see: 'DARS: more than twice the rollouts', a: mean('dars', 'rollouts'), op: '>', b: mean('grpo', 'rollouts'), times: 2 },
      { id: 'dars-alleq', see: 'DARS: no trained group all-equal', a: mean('dars', 'groups_all_equal_frac'), op: '<', b: 0.05 },
      { id: 'dapo-alleq', see: 'DAPO: fewer all-equal groups', a: mean('dapo', 'groups_all_equal_frac'), op: '<', b: mean('grpo', 'groups_all_equal_frac'), by: 0.1 },
      { id: 'dapo-rollouts', see: 'DAPO: about 3x the rollouts', a: mean('dapo', 'rollouts'), op: '>', b: mean('grpo', 'rollouts'), times: 2.5 },
      { id: 'tools-collapse', see: 'Tools, outcome reward: nearly all groups all-equal', a: mean('tools', 'groups_all_equal_frac'), op: '>', b: 0.9 },
      { id: 'tools-fail', see: 'Tools, outcome reward: success about 0', a: mean('tools', 'success_rate'), op: '<', b: 0.02 },
      { id: 'cm2-alleq', see: 'CM2: no all-equal groups', a: mean('cm2', 'groups_all_equal_frac'), op: '<', b: 0.05 },
      { id: 'cm2-success', see: 'CM2: true success rises', a: mean('cm2', 'success_rate', 21, 40), op: '>', b: mean('tools', 'success_rate', 21, 40), by: 0.02 },
    ],
    hide: ['task', 'methods', 'export', 'frameworks'],
    charts: ['reward', 'groups_all_equal_frac', 'adv-heatmap', 'tokens'],
    takeaway:
      'Each remedy puts a signal back where GRPO has none, and each pays for it. From a start that can already do the moves but rarely succeeds, GRPO stays flat. Within 30 iterations EDGE-GRPO lifts success, for 1.45x the rollouts, by injecting reference solutions (off-policy); IGPO gives almost every token an advantage again for no extra rollout, but the lift it drives is slower; DARS and DAPO spend 2-3x the rollouts looking for successes too rare to find. On the tools task, partial credit is what moves it.',
  },
  {
    id: 'turns',
    title: 'Turn credit',
    summary:
      'A multi-turn episode gets one outcome reward. Which turn earned it? Plain GRPO cannot tell: every turn of a trajectory gets the same advantage.',
    methods: ['grpo', 'igpo', 'seeupo'],
    runs: [
      { id: 'grpo', label: 'GRPO', set: { ...SMALL }, iters: 8 },
      { id: 'igpo', label: 'IGPO', set: { ...SMALL, methods: 'igpo' }, iters: 8 },
      { id: 'seeupo', label: 'GRPO + SeeUPO', set: { ...SMALL, methods: 'grpo,seeupo' }, iters: 8 },
    ],
    steps: [
      {
        run: 'grpo',
        text: 'Load GRPO on the default search task (search, then answer; 8 iterations). Then open a trajectory in the batch inspector and read the advantage column turn by turn.',
        see: 'Every turn of a trajectory carries the same advantage: no multi-turn trajectory (0%) has turns with different advantages. With one optimizer step per batch every ratio is exactly 1.',
        claims: ['grpo-same', 'grpo-ratio-one'],
        inspect: true,
      },
      {
        run: 'igpo',
        text: 'Switch on IGPO and load the same 8 iterations. Open a trajectory again.',
        see: 'The search turn and the answer turn now get different advantages in every multi-turn trajectory (100%): a search that raised the policy\'s probability of the right answer earns credit even when the final answer is wrong.',
        claims: ['igpo-distinct'],
        inspect: true,
      },
      {
        run: 'seeupo',
        text: 'Now GRPO with SeeUPO, which updates one turn at a time, the last turn first.',
        see: 'The advantage column is the outcome\'s again (0% with different advantages); what differs per turn is the ratio (100%): each turn is trained in its own stage after the later turns, and their ratios multiply its advantage in the loss.',
        claims: ['seeupo-adv-same', 'seeupo-ratio-distinct'],
        inspect: true,
      },
    ],
    claims: [
      { id: 'grpo-same', see: 'GRPO: one advantage per trajectory', a: dump('grpo', 'turn_adv_distinct'), op: '<', b: 0 },
      { id: 'grpo-ratio-one', see: 'GRPO: ratios all 1', a: { run: 'grpo', metric: 'ratio_max', agg: 'max' }, op: '<', b: 1.0001 },
      { id: 'igpo-distinct', see: 'IGPO: turns get different advantages', a: dump('igpo', 'turn_adv_distinct'), op: '>', b: 0.5 },
      { id: 'seeupo-adv-same', see: 'SeeUPO: the advantage is still the outcome\'s', a: dump('seeupo', 'turn_adv_distinct'), op: '<', b: 0 },
      { id: 'seeupo-ratio-distinct', see: 'SeeUPO: turns get different ratios', a: dump('seeupo', 'turn_ratio_distinct'), op: '>', b: 0.5 },
    ],
    hide: ['task', 'methods', 'export', 'frameworks'],
    charts: ['reward', 'advantage', 'ratio'],
    takeaway:
      'Outcome-only credit is shared equally by every turn. IGPO changes the advantage of each turn (a per-turn reward); SeeUPO keeps the outcome advantage but changes how each turn is updated.',
  },
  {
    id: 'ratios',
    title: 'Importance ratios out of control',
    summary:
      'Several optimizer steps per batch, or rollouts from an older policy, move pi/pi_old away from 1. How do token clipping, sequence-level ratios and VCPO\'s step size cope?',
    methods: ['grpo', 'gspo', 'gmpo', 'sampo', 'vcpo'],
    runs: [
      { id: 'one', label: 'GRPO, 1 step per batch', set: { ...EPOCHS, epochs: '1', minibatches: '1' }, iters: 12 },
      { id: 'grpo', label: 'GRPO, 4 epochs x 2 minibatches', set: { ...EPOCHS }, iters: 12 },
      { id: 'gspo', label: 'GSPO, 4 epochs x 2 minibatches', set: { ...EPOCHS, methods: 'grpo,gspo' }, iters: 12 },
      { id: 'gmpo', label: 'GMPO, 4 epochs x 2 minibatches', set: { ...EPOCHS, methods: 'grpo,gmpo' }, iters: 12 },
      { id: 'sampo', label: 'SAMPO, 4 epochs x 2 minibatches', set: { ...EPOCHS, methods: 'sampo' }, iters: 12 },
      { id: 'stale', label: 'GRPO, rollouts 4 updates stale', set: { ...STALE }, iters: 20 },
      { id: 'vcpo', label: 'VCPO, rollouts 4 updates stale', set: { ...STALE, methods: 'vcpo' }, iters: 20 },
    ],
    steps: [
      {
        run: 'one',
        text: 'Load GRPO with one optimizer step per batch (4 prompts x 8 rollouts, 12 iterations). Watch the importance-sampling (IS) ratio and effective sample size (ESS) charts.',
        watch: ['ratio', 'ess'],
        see: 'Every ratio is exactly 1 (the largest is 1.00) and the ESS stays at 1: the policy being trained is the one that rolled out.',
        claims: ['one-ratio', 'one-ess'],
      },
      {
        run: 'grpo',
        text: 'Now reuse each batch for 4 epochs of 2 minibatches (8 steps per batch).',
        see: 'Ratios leave 1: the largest averages 2.9, about 1 token in 5 is clipped, and the ESS falls to 0.60. Token clipping cuts inside a trajectory: 95% of clipped trajectories also have unclipped tokens.',
        claims: ['grpo-ratio', 'grpo-clip', 'grpo-ess', 'grpo-mixed'],
        inspect: true,
      },
      {
        run: 'gspo',
        text: 'Switch on GSPO: one ratio per sequence (the geometric mean of its token ratios), clipped as a whole.',
        see: 'No clipped trajectory is split any more (0%), though more tokens lie in clipped sequences (0.52 vs 0.18, mean of seeds 1-4). Whether the policy also moves less per batch (a higher ESS, a smaller largest ratio) depends on the seed here: it did on the lesson seeds, not on others.',
        claims: ['gspo-mixed', 'gspo-clip'],
        inspect: true,
      },
      {
        run: 'gmpo',
        text: 'GMPO instead: the geometric mean of the token ratios, each clipped in log space at ±0.4 (ratios 0.67 to 1.49).',
        see: 'Its clip is wider than the token clip (0.8 to 1.2), so it clips half as many tokens (0.11 vs 0.21); ratios are not narrower here (largest 3.4 on average) and entropy falls fastest (0.50 vs 0.83).',
        claims: ['gmpo-clip', 'gmpo-entropy'],
      },
      {
        run: 'sampo',
        text: 'SAMPO: a tight clip of each step\'s sequence ratio (1 - 0.003 to 1 + 0.004; its reference trains on one row per step), GiGPO step advantages, and filtering of all-equal groups after 5 iterations.',
        see: 'A step is clipped whole, but one trajectory\'s steps are clipped apart, so trajectories are split again (0.38 of the clipped ones). All-equal groups fall to 0.23 (0.54 with GRPO), for about 53 rollouts per iteration instead of 32.',
        claims: ['sampo-split', 'sampo-alleq', 'sampo-rollouts'],
      },
      {
        run: 'stale',
        text: 'Another way to leave the policy: train on rollouts from the policy of 4 updates ago (asynchronous RL), at lr 0.01 with 2 minibatches. Watch the ESS of the stale rollouts and the learning rate.',
        watch: ['ess_rollout', 'lr'],
        see: 'The ESS of the stale rollouts (ess_rollout) averages about 0.62 while the learning rate stays at 0.01.',
        claims: ['stale-ess', 'stale-lr'],
      },
      {
        run: 'vcpo',
        text: 'Switch to VCPO: it scales each minibatch\'s step by the square root of that minibatch\'s ESS.',
        see: 'The applied learning rate drops to about 0.007 on average, lowest exactly where the rollouts are most off-policy.',
        claims: ['vcpo-lr'],
      },
    ],
    claims: [
      { id: 'one-ratio', see: 'One step: ratios exactly 1', a: { run: 'one', metric: 'ratio_max', agg: 'max' }, op: '<', b: 1.0001 },
      { id: 'one-ess', see: 'One step: ESS 1', a: { run: 'one', metric: 'ess', agg: 'min' }, op: '>', b: 0.9999 },
      { id: 'grpo-ratio', see: '8 steps: large ratios', a: mean('grpo', 'ratio_max'), op: '>', b: 2 },
      { id: 'grpo-clip', see: '8 steps: tokens get clipped', a: mean('grpo', 'clip_frac'), op: '>', b: 0.1 },
      { id: 'grpo-ess', see: '8 steps: ESS falls', a: mean('grpo', 'ess'), op: '<', b: 0.75 },
      { id: 'grpo-mixed', see: 'Token clipping splits trajectories', a: dump('grpo', 'clip_mixed'), op: '>', b: 0.5 },
      { id: 'gspo-mixed', see: 'GSPO clips whole sequences', a: dump('gspo', 'clip_mixed'), op: '<', b: 0 },
      { id: 'gspo-clip', see: 'GSPO: more tokens in clipped sequences', a: mean('gspo', 'clip_frac'), op: '>', b: mean('grpo', 'clip_frac'), by: 0.15 },
      { id: 'gmpo-clip', see: 'GMPO: fewer clipped tokens', a: mean('gmpo', 'clip_frac'), op: '<', b: mean('grpo', 'clip_frac'), times: 1.5 },
      { id: 'gmpo-entropy', see: 'GMPO: entropy falls faster', a: mean('gmpo', 'entropy'), op: '<', b: mean('grpo', 'entropy'), by: 0.15 },
      { id: 'sampo-split', see: 'SAMPO clips steps, not whole sequences', a: dump('sampo', 'clip_mixed'), op: '>', b: 0 },
      { id: 'sampo-alleq', see: 'SAMPO: filtering removes all-equal groups', a: mean('sampo', 'groups_all_equal_frac'), op: '<', b: mean('grpo', 'groups_all_equal_frac'), by: 0.2 },
      { id: 'sampo-rollouts', see: 'SAMPO: filtering costs rollouts', a: mean('sampo', 'rollouts'), op: '>', b: mean('grpo', 'rollouts'), times: 1.3 },
      { id: 'stale-ess', see: 'Stale rollouts: low rollout ESS', a: mean('stale', 'ess_rollout'), op: '<', b: 0.8 },
      { id: 'stale-lr', see: 'Stale rollouts: lr unchanged', a: { run: 'stale', metric: 'lr', agg: 'min' }, op: '>', b: 0.0099 },
      { id: 'vcpo-lr', see: 'VCPO: smaller steps', a: mean('vcpo', 'lr'), op: '<', b: mean('stale', 'lr'), times: 1.25 },
    ],
    hide: ['task', 'methods', 'export', 'frameworks'],
    charts: ['ratio-hist', 'ratio', 'clip', 'ess', 'ess_rollout', 'lr', 'entropy'],
    takeaway:
      'Token clipping bounds each token and cuts trajectories apart; sequence ratios (GSPO, SAMPO) keep a trajectory whole; a wider log-space clip (GMPO) moves further; and VCPO answers stale rollouts with a smaller step rather than a clip.',
  },
  {
    id: 'reward',
    title: 'When the reward lies',
    summary:
      'A reward model is a noisy judge. Here the success rate is measured on the true outcome, so you can watch what training on a noisy score costs, and whether PF-PPO\'s filter buys it back.',
    methods: ['grpo', 'pfppo'],
    runs: [
      { id: 'clean', label: 'GRPO, true reward', set: { ...PARTIAL }, iters: 80 },
      { id: 'noisy', label: 'GRPO, noisy reward model', set: { ...PARTIAL, 'env.rmNoise': '1' }, iters: 80 },
      { id: 'pfppo', label: 'GRPO + PF-PPO, noisy reward model', set: { ...PARTIAL, 'env.rmNoise': '1', methods: 'grpo,pfppo' }, iters: 80 },
    ],
    steps: [
      {
        run: 'clean',
        text: 'Load GRPO on the sequence task with partial credit (the fraction of positions right), trained on the true reward for 80 iterations.',
        see: 'True success (exact match) climbs from about 0.05 to about 0.99 in iterations 71-80 (mean of seeds 1-4; some seeds take longer).',
        claims: ['clean-learns'],
      },
      {
        run: 'noisy',
        text: 'Now train on a reward model instead: the true reward plus noise whose std is 1 at mid-range rewards and 0.1 at 0 and 1 (env.rmNoise = 1).',
        see: 'The training reward still rises. True success lags the true-reward run (about 0.67 against 0.99 in iterations 71-80 on seeds 1-4), by an amount that depends on the seed.',
        claims: ['noisy-reward-rises'],
      },
      {
        run: 'pfppo',
        text: 'Switch on PF-PPO: it trusts the extremes of the score and trains only on each group\'s best and worst rollout.',
        see: 'On this toy it does not help. The extreme scores are mostly mid-range rollouts with large noise: the rollouts it trains on are about twice as wrong as the batch (|reward − true| 1.14 vs 0.60, last batch). True success is lower still (0.13 in iterations 71-80 on seeds 1-4), by how much depends on the seed.',
        claims: ['pf-selects-noise'],
        inspect: true,
      },
    ],
    claims: [
      { id: 'clean-learns', see: 'True reward: success rises', a: mean('clean', 'success_rate', 71, 80), op: '>', b: mean('clean', 'success_rate', 1, 10), by: CLEAN_BY },
      { id: 'noisy-reward-rises', see: 'Noisy reward: the training reward still rises', a: mean('noisy', 'reward_mean', 71, 80), op: '>', b: mean('noisy', 'reward_mean', 1, 10), by: 0.05 },
      { id: 'pf-selects-noise', see: 'PF-PPO trains on the noisiest scores', a: dump('pfppo', 'rm_error_trained'), op: '>', b: dump('pfppo', 'rm_error_all'), times: 1.5 },
    ],
    hide: ['task', 'methods', 'export', 'frameworks'],
    charts: ['reward', 'entropy'],
    takeaway:
      'Filtering on the score helps only where the score\'s extremes are reliable. When the noise grows toward the middle of the range, the highest and lowest scores are the most inflated ones, and a filter that keeps them keeps the noise.',
  },
  {
    id: 'roles',
    title: 'Two agents, one reward',
    summary:
      'A planner and an executor share one policy and one episode, but the executor\'s reward is 5 times larger (plus 0.5). One baseline for both roles, or one per role?',
    methods: ['grpo', 'drmas'],
    runs: [
      { id: 'grpo', label: 'GRPO, one baseline', set: { ...ROLES }, iters: 30 },
      { id: 'drmas', label: 'GRPO + Dr. MAS, per-role baselines', set: { ...ROLES, methods: 'grpo,drmas' }, iters: 30 },
    ],
    steps: [
      {
        run: 'grpo',
        text: 'Load GRPO on the two-role task with the executor\'s reward scaled by 5 (30 iterations). Open a trajectory: both roles\' turns carry one advantage.',
        see: 'The executor\'s large reward dominates that advantage: the planner\'s turns follow the planner\'s own reward only loosely (correlation 0.45, last batch).',
        claims: ['grpo-corr'],
        inspect: true,
      },
      {
        run: 'drmas',
        text: 'Switch on Dr. MAS: each role\'s reward is normalized with that role\'s mean and std within the group.',
        see: 'Each role\'s advantage now tracks its own reward (correlation 0.97), planner and executor turns get different advantages (94% of trajectories), and the mean reward rises faster (0.88 vs 0.75); success itself is not higher within 30 iterations (0.11 for both).',
        claims: ['drmas-corr', 'drmas-distinct', 'drmas-reward', 'drmas-success'],
        inspect: true,
      },
    ],
    claims: [
      { id: 'grpo-corr', see: 'GRPO: the planner\'s credit is blurred', a: dump('grpo', 'role_adv_corr_min'), op: '<', b: 0.7 },
      { id: 'drmas-corr', see: 'Dr. MAS: each role gets its own credit', a: dump('drmas', 'role_adv_corr_min'), op: '>', b: dump('grpo', 'role_adv_corr_min'), by: 0.3 },
      { id: 'drmas-distinct', see: 'Dr. MAS: roles get different advantages', a: dump('drmas', 'turn_adv_distinct'), op: '>', b: 0.5 },
      { id: 'drmas-reward', see: 'Dr. MAS: reward rises faster', a: mean('drmas', 'reward_mean'), op: '>', b: mean('grpo', 'reward_mean'), by: 0.05 },
      { id: 'drmas-success', see: 'Dr. MAS: success not higher yet', a: mean('drmas', 'success_rate'), op: '<', b: mean('grpo', 'success_rate'), by: -0.03 },
    ],
    hide: ['task', 'methods', 'export', 'frameworks'],
    charts: ['reward', 'advantage'],
    takeaway:
      'When agents share an episode but not a reward scale, one baseline hands each agent the other\'s credit; per-role normalization gives each its own.',
  },
  {
    id: 'length',
    title: 'Length and normalization bias',
    summary:
      'How token losses are averaged, and whether advantages are divided by the group std, both bias what GRPO learns. Dr. GRPO removes both.',
    methods: ['grpo', 'drgrpo'],
    runs: [
      { id: 'grpo', label: 'GRPO, per-sequence token mean', set: { ...SMALL, 'env.maxTurns': '5', lossAgg: 'seq-mean-token-mean' }, iters: 6 },
      { id: 'drgrpo', label: 'Dr. GRPO', set: { ...SMALL, 'env.maxTurns': '5', methods: 'drgrpo' }, iters: 6 },
    ],
    steps: [
      {
        run: 'grpo',
        text: 'Load GRPO with its original loss: each trajectory\'s token losses averaged over its own length, then over trajectories (search task with up to 5 turns, 6 iterations). Open the batch inspector.',
        see: 'A token of the shortest trajectory weighs 4 times as much as a token of the longest (last batch), so a long wrong answer is punished less per token; advantages are divided by the group std (their std over tokens is 0.65).',
        claims: ['grpo-weight', 'grpo-std'],
        inspect: true,
      },
      {
        run: 'drgrpo',
        text: 'Switch to Dr. GRPO: advantage R − mean (no std), and every token divided by one constant (G x the longest possible response).',
        see: 'Every token weighs the same (ratio 1.00); the advantages are smaller (std 0.27) and, with the constant normalizer, so are the gradients: about 10 times smaller at the same learning rate (0.026 vs 0.27).',
        claims: ['dr-weight', 'dr-std', 'dr-grad'],
        inspect: true,
      },
    ],
    claims: [
      { id: 'grpo-weight', see: 'GRPO: short trajectories\' tokens weigh more', a: dump('grpo', 'weight_short_long'), op: '>', b: 2 },
      { id: 'grpo-std', see: 'GRPO: std-normalized advantages', a: mean('grpo', 'adv_std'), op: '>', b: 0.5 },
      { id: 'dr-weight', see: 'Dr. GRPO: every token weighs the same', a: dump('drgrpo', 'weight_short_long'), op: '<', b: 1.01 },
      { id: 'dr-std', see: 'Dr. GRPO: no std division', a: mean('drgrpo', 'adv_std'), op: '<', b: mean('grpo', 'adv_std'), by: 0.2 },
      { id: 'dr-grad', see: 'Dr. GRPO: smaller gradients', a: mean('drgrpo', 'grad_norm'), op: '<', b: mean('grpo', 'grad_norm'), times: 5 },
    ],
    hide: ['task', 'methods', 'export', 'frameworks'],
    charts: ['reward', 'advantage', 'grad_norm', 'tokens'],
    takeaway:
      'The per-sequence mean gives short answers\' tokens more weight and long ones\' less; the std division rescales each prompt by how much its rollouts disagree. Dr. GRPO\'s constants remove both, and its smaller gradients may want a larger learning rate.',
  },
  {
    id: 'entropy',
    title: 'Entropy and exploration',
    summary:
      'A policy that stops exploring stops learning. DAPO\'s clip-higher lets unlikely tokens grow; ProRL keeps a KL leash to a reference but resets the reference now and then.',
    methods: ['grpo', 'dapo', 'prorl'],
    runs: [
      { id: 'grpo', label: 'GRPO, 2 epochs x 2 minibatches', set: { ...SMALL, epochs: '2', minibatches: '2' }, iters: 30 },
      { id: 'dapo', label: 'GRPO + DAPO clip-higher', set: { ...SMALL, epochs: '2', minibatches: '2', methods: 'grpo,dapo', 'dapo.dynamicSampling': 'false' }, iters: 30 },
      { id: 'kl', label: 'GRPO, KL 0.05 to the initial policy', set: { ...SMALL, klCoef: '0.05' }, iters: 40 },
      { id: 'prorl', label: 'GRPO + ProRL, reference reset every 10', set: { ...SMALL, methods: 'grpo,prorl', 'prorl.resetEvery': '10' }, iters: 40 },
    ],
    steps: [
      {
        run: 'grpo',
        text: 'Load GRPO with 2 epochs of 2 minibatches per batch, so that clipping comes into play (30 iterations). Watch entropy and the clip fractions.',
        see: 'Entropy falls to about 0.6 in iterations 16-30 (from about 1.0 at the start); about 2% of tokens are clipped on the high side.',
        claims: ['grpo-entropy-falls', 'grpo-clip-high'],
      },
      {
        run: 'dapo',
        text: 'Switch on DAPO with clip-higher only (ceiling 1 + 0.28 instead of 1 + 0.2; dynamic sampling off).',
        see: 'High-side clipping falls as intended (0.011 vs 0.021). Whether entropy then stays higher is not settled by the clip: the extra room can go to tokens that are already winning (entropy fell faster on all 4 lesson seeds, but on only 2 of 4 others).',
        claims: ['dapo-clip'],
      },
      {
        run: 'kl',
        text: 'Now a KL penalty instead (coefficient 0.05, k3 estimator) to the initial policy, 40 iterations. Watch the KL chart.',
        watch: ['kl'],
        see: 'The KL to the reference keeps growing: from about 0.055 on average over iterations 1-10 to 0.125 over iterations 31-40.',
        claims: ['kl-grows'],
      },
      {
        run: 'prorl',
        text: 'ProRL: the same penalty, but every 10 iterations the reference (and Adam\'s moments) jump to the current policy.',
        see: 'The KL drops back to 0 at each reset (iteration 21, for one) and averages 0.087 against 0.120, so the leash pulls toward a recent policy instead of the initial one.',
        claims: ['prorl-reset', 'prorl-kl'],
      },
    ],
    claims: [
      { id: 'grpo-entropy-falls', see: 'GRPO: entropy falls', a: mean('grpo', 'entropy', 16, 30), op: '<', b: { run: 'grpo', metric: 'entropy', agg: 'mean', from: 1, to: 5 }, by: 0.2 },
      { id: 'grpo-clip-high', see: 'GRPO: some high-side clipping', a: mean('grpo', 'clip_frac_high'), op: '>', b: 0.015 },
      { id: 'dapo-clip', see: 'Clip-higher: less high-side clipping', a: mean('dapo', 'clip_frac_high'), op: '<', b: mean('grpo', 'clip_frac_high'), times: 1.3 },
      { id: 'kl-grows', see: 'Fixed reference: KL grows', a: mean('kl', 'kl_ref', 31, 40), op: '>', b: mean('kl', 'kl_ref', 1, 10), by: 0.05 },
      { id: 'prorl-reset', see: 'ProRL: KL back to 0 at a reset', a: { run: 'prorl', metric: 'kl_ref', agg: 'last', from: 21, to: 21 }, op: '<', b: 0.01 },
      { id: 'prorl-kl', see: 'ProRL: lower KL on average', a: mean('prorl', 'kl_ref'), op: '<', b: mean('kl', 'kl_ref'), times: 1.3 },
    ],
    hide: ['task', 'methods', 'export', 'frameworks'],
    charts: ['reward', 'entropy', 'clip', 'kl'],
    takeaway:
      'Entropy is shaped by what the clip lets through, not by the clip\'s width alone: clip-higher clips less, and on some seeds the room goes to winning tokens and speeds up the collapse it is meant to slow. ProRL\'s resets keep a KL penalty from turning into a tether to the initial policy.',
  },
  {
    id: 'crash',
    title: 'Why training crashes',
    summary:
      'A tolerant clip (CISPO clips the importance weight but keeps every token\'s gradient; SAPO fades it smoothly) lets an off-policy update go further than a token clip does. Does that buy a faster climb, and what does it cost? A sequence-level clip (GSPO) is the control.',
    methods: ['grpo', 'sapo', 'cispo', 'gspo'],
    runs: [
      { id: 'grpo', label: 'GRPO, token clip, 8 epochs x 2 minibatches', set: { ...PRESSURE }, iters: 20 },
      { id: 'sapo', label: 'GRPO + SAPO (soft gate)', set: { ...PRESSURE, methods: 'grpo,sapo' }, iters: 20 },
      { id: 'cispo', label: 'GRPO + CISPO (clipped weight, gradient kept)', set: { ...PRESSURE, methods: 'grpo,cispo' }, iters: 20 },
      { id: 'gspo', label: 'GRPO + GSPO (sequence clip)', set: { ...PRESSURE, methods: 'grpo,gspo' }, iters: 20 },
    ],
    steps: [
      {
        run: 'grpo',
        text: 'Load GRPO with PPO\'s token clip on the sequence task (partial credit), under heavy off-policy pressure: every batch is reused for 8 epochs of 2 minibatches at lr 0.02 (20 iterations). Watch success and entropy.',
        see: 'Success (exact match) climbs slowly at first (0.08 in iterations 2-3, 0.19 in 2-5) and reaches about 0.96 in iterations 16-20 (mean of seeds 1-4); entropy falls gradually, from about 1.0 in iterations 1-3.',
        claims: ['grpo-learns'],
      },
      {
        run: 'sapo',
        text: 'Switch the clip to SAPO\'s soft gate, same seed. No token\'s gradient is switched off at a clip edge, so the 16 steps on each batch go much further.',
        see: 'The first update already moved the policy far: entropy about 0.18 against 1.0 and a KL to the start about 6x the token clip\'s in iterations 1-3. Success is ahead right after it (0.27 against 0.08 in iterations 2-3) but ends far below (0.11 against 0.96 in iterations 16-20; means of seeds 1-4). Where it falls from its best depends on the seed: on 2 of the 4 lesson seeds it climbed to 0.5-1.0 and then dropped to 0, on others it stalls lower.',
        claims: ['sapo-first', 'sapo-entropy', 'sapo-kl', 'sapo-late'],
      },
      {
        run: 'cispo',
        text: 'Now CISPO: the importance weight is clipped to [0.8, 1.2] but every token keeps its gradient.',
        see: 'ARLArena\'s diagnosis is high from the first update, long before the fall: in iterations 1-2 about 0.37 of the update\'s gradient comes from negative-advantage tokens whose ratio is outside [0.8, 1.2], against 0.14 under the token clip. Then the same early collapse of entropy (0.10 in iterations 1-3), a brief lead (0.17 against 0.08 in iterations 2-3), a best of about 0.40 within iterations 2-7 and a crash: 0.06 in iterations 16-20, against the token clip\'s 0.96.',
        claims: ['cispo-diag', 'cispo-first', 'cispo-entropy', 'cispo-crash', 'cispo-late'],
      },
      {
        run: 'gspo',
        text: 'Finally GSPO: one ratio per sequence (the geometric mean of its tokens\') and a tight sequence clip, so a sequence whose ratio has passed the clip in the direction its advantage pushes gives no gradient at all, whatever its tokens\' own ratios.',
        see: 'No crash: success keeps rising (0.70 in iterations 6-10, 0.85 in 16-20) and ends far above SAPO\'s (0.11). It gives up the early lead: its first iterations look like the token clip\'s.',
        claims: ['gspo-stable', 'gspo-vs-sapo'],
      },
    ],
    claims: [
      { id: 'grpo-learns', see: 'Token clip: success rises', a: mean('grpo', 'success_rate', 16, 20), op: '>', b: mean('grpo', 'success_rate', 2, 5), by: 0.35 },
      { id: 'sapo-first', see: 'SAPO: ahead after the first updates', a: mean('sapo', 'success_rate', 2, 3), op: '>', b: mean('grpo', 'success_rate', 2, 3), by: 0.1 },
      { id: 'sapo-entropy', see: 'SAPO: entropy collapses in the first updates', a: mean('sapo', 'entropy', 1, 3), op: '<', b: mean('grpo', 'entropy', 1, 3), times: 3 },
      { id: 'sapo-kl', see: 'SAPO: the first updates move the policy far', a: mean('sapo', 'kl_ref', 1, 3), op: '>', b: mean('grpo', 'kl_ref', 1, 3), times: 3 },
      { id: 'sapo-late', see: 'SAPO: ends far below the token clip', a: mean('sapo', 'success_rate', 16, 20), op: '<', b: mean('grpo', 'success_rate', 16, 20), by: 0.4 },
      { id: 'cispo-first', see: 'CISPO: ahead after the first updates', a: mean('cispo', 'success_rate', 2, 3), op: '>', b: mean('grpo', 'success_rate', 2, 3), by: 0.04 },
      { id: 'cispo-diag', see: 'CISPO: more of the update from negative tokens outside [0.8, 1.2], before the fall', a: mean('cispo', 'neg_out_grad_share', 1, 2), op: '>', b: mean('grpo', 'neg_out_grad_share', 1, 2), by: 0.1 },
      { id: 'cispo-entropy', see: 'CISPO: entropy collapses in the first updates', a: mean('cispo', 'entropy', 1, 3), op: '<', b: mean('grpo', 'entropy', 1, 3), times: 3 },
      { id: 'cispo-crash', see: 'CISPO: falls far below its own early best', a: mean('cispo', 'success_rate', 16, 20), op: '<', b: { run: 'cispo', metric: 'success_rate', agg: 'max', from: 2, to: 7 }, by: 0.15 },
      { id: 'cispo-late', see: 'CISPO: ends far below the token clip', a: mean('cispo', 'success_rate', 16, 20), op: '<', b: mean('grpo', 'success_rate', 16, 20), by: 0.45 },
      { id: 'gspo-stable', see: 'GSPO: no fall from mid-run', a: mean('gspo', 'success_rate', 16, 20), op: '>', b: mean('gspo', 'success_rate', 6, 10), by: 0 },
      { id: 'gspo-vs-sapo', see: 'GSPO ends far above SAPO', a: mean('gspo', 'success_rate', 16, 20), op: '>', b: mean('sapo', 'success_rate', 16, 20), by: 0.35 },
    ],
    hide: ['task', 'methods', 'export', 'frameworks'],
    charts: ['reward', 'neg_out_grad_share', 'entropy', 'kl'],
    takeaway:
      'A clip is also a brake. Under heavy reuse of each batch the tolerant clips let the first updates run far: entropy collapses at once, success is briefly ahead, and the collapsed policy then falls (CISPO on most seeds) or stalls (SAPO). The token clip is slower at first and ends near 1; the sequence clip does not fall.',
  },
  {
    id: 'sampler',
    title: 'When the sampler is not the trainer',
    summary:
      'In a real run an inference engine draws the rollouts (in bf16, with top-p, often a few updates behind) and a training framework computes the update. How far apart are the two, which ratio sees the gap, and what do the rollout corrections do when it grows?',
    methods: ['grpo', 'veto', 'seqis', 'tis'],
    runs: [
      { id: 'trainer', label: 'GRPO, the sampler is the trainer', set: { ...SAMPLER_ON }, iters: 20 },
      { id: 'bf16', label: 'GRPO, bf16 sampler', set: { ...SAMPLER_ON, 'rollout.precision': 'bf16' }, iters: 20 },
      { id: 'topp', label: 'GRPO, bf16 sampler with top-p 0.8', set: { ...SAMPLER_ON, 'rollout.precision': 'bf16', 'rollout.topP': '0.8' }, iters: 20 },
      { id: 'fresh', label: 'GRPO, fresh bf16 sampler, lr 0.03', set: { ...ASYNC }, iters: 60 },
      { id: 'stale', label: 'GRPO, sampler 8 updates behind', set: { ...ASYNC, staleness: '8' }, iters: 60 },
      { id: 'veto', label: 'GRPO + veto, sampler 8 updates behind', set: { ...ASYNC, staleness: '8', methods: 'grpo,veto' }, iters: 60 },
    ],
    steps: [
      {
        run: 'trainer',
        text: 'Load GRPO on the search task from a pretrained start, one optimizer step per batch, the sampler exactly the trainer (f32, the whole distribution). Watch the sampler-mismatch chart and the importance-sampling (IS) ratio.',
        watch: ['mismatch', 'ratio'],
        see: 'Every mismatch line is exactly 0 and every PPO ratio exactly 1: the tokens were drawn from the distribution the trainer computes.',
        claims: ['trainer-zero', 'trainer-ratio'],
      },
      {
        run: 'bf16',
        text: 'Round the sampler\'s logits to bf16, as an inference engine stores them. The trainer keeps f32.',
        watch: ['mismatch', 'ratio'],
        see: 'The mismatch is no longer 0 but tiny (a k3 KL of about 4e-7, mean of seeds 1-4): this toy\'s logits are small, where bf16 rounds finely. PPO\'s ratios are still exactly 1: they compare the trainer with itself and never see the sampler.',
        claims: ['bf16-gap', 'bf16-small', 'bf16-ratio'],
      },
      {
        run: 'topp',
        text: 'Add top-p 0.8: the sampler draws only from the smallest set of tokens holding 80 % of the probability. Watch the mismatch and entropy (the sampler mismatch histogram is under More charts).',
        watch: ['mismatch', 'entropy'],
        see: 'The drawn tokens are more likely under the sampler than under the trainer (mean log-ratio about -0.07; the histogram sits left of 0), PPO\'s ratios are still 1, and entropy stays high (0.23 against 0.05 in iterations 11-20): the sampler never draws the tail, so the update never pushes it down.',
        claims: ['topp-gap', 'topp-ratio', 'topp-entropy'],
      },
      {
        run: 'stale',
        text: 'An asynchronous engine: the sampler runs 8 updates behind the trainer (2 minibatches per batch at lr 0.03, bf16). Watch the mismatch and success.',
        watch: ['mismatch', 'reward'],
        see: 'A mismatch a million times bf16\'s (a k3 KL of about 1.0 against 2e-7 with a fresh sampler), and success in iterations 21-60 of about 0.43 against 0.99 with a fresh sampler at the same lr; on most seeds the run crashes by the arena\'s rule.',
        claims: ['stale-gap', 'stale-fails'],
      },
      {
        run: 'veto',
        text: 'Switch on the veto: a trajectory with any token whose ratio to the sampler falls below 1e-4 is left out of the update.',
        watch: ['reward', 'mismatch'],
        see: 'Success stays up (0.86 against 0.43 in iterations 21-60): the trajectories with a token the trainer now finds near impossible are the ones whose gradients threw the stale run off.',
        claims: ['veto-cures'],
      },
    ],
    claims: [
      { id: 'trainer-zero', see: 'Sampler = trainer: no mismatch', a: { run: 'trainer', metric: 'mismatch_k3_kl', agg: 'max' }, op: '<', b: 1e-12, by: 0 },
      { id: 'trainer-ratio', see: 'Sampler = trainer: ratios exactly 1', a: { run: 'trainer', metric: 'ratio_max', agg: 'max' }, op: '<', b: 1.0001, by: 0 },
      { id: 'bf16-gap', see: 'bf16: a mismatch above 0', a: mean('bf16', 'mismatch_k3_kl'), op: '>', b: 1e-9, by: 0 },
      { id: 'bf16-small', see: 'bf16: the mismatch is tiny', a: mean('bf16', 'mismatch_k3_kl'), op: '<', b: 1e-5, by: 0 },
      { id: 'bf16-ratio', see: 'bf16: PPO\'s ratios still exactly 1', a: { run: 'bf16', metric: 'ratio_max', agg: 'max' }, op: '<', b: 1.0001, by: 0 },
      { id: 'topp-gap', see: 'Top-p: the trainer gives the drawn tokens less probability than the sampler', a: mean('topp', 'mismatch_logratio'), op: '<', b: -0.03, by: 0 },
      { id: 'topp-ratio', see: 'Top-p: PPO\'s ratios still exactly 1', a: { run: 'topp', metric: 'ratio_max', agg: 'max' }, op: '<', b: 1.0001, by: 0 },
      { id: 'topp-entropy', see: 'Top-p: entropy stays higher', a: mean('topp', 'entropy', 11, 20), op: '>', b: mean('bf16', 'entropy', 11, 20), times: 2 },
      { id: 'stale-gap', see: '8 updates behind: a large mismatch', a: mean('stale', 'mismatch_k3_kl'), op: '>', b: mean('fresh', 'mismatch_k3_kl'), by: 0.5 },
      { id: 'stale-fails', see: '8 updates behind: success falls', a: mean('stale', 'success_rate', 21, 60), op: '<', b: mean('fresh', 'success_rate', 21, 60), by: 0.3 },
      { id: 'veto-cures', see: 'Veto: success stays up', a: mean('veto', 'success_rate', 21, 60), op: '>', b: mean('stale', 'success_rate', 21, 60), by: 0.2 },
    ],
    hide: ['task', 'methods', 'export', 'frameworks'],
    charts: ['mismatch', 'mismatch-hist', 'ratio', 'reward', 'entropy'],
    takeaway:
      'PPO\'s ratio compares the trainer with itself, so the gap to the sampler is invisible to its clip: measure it separately (the mismatch charts). Precision and top-p gaps are small on this toy (top-p mainly keeps entropy up); a sampler several updates behind is a large gap, and dropping the trajectories with catastrophic tokens (the veto) kept training stable where weighting them (token or sequence IS) did not.',
  },
];

export const LESSON_IDS: readonly string[] = LESSONS.map((l) => l.id);

export function lessonById(id: string): Lesson | undefined {
  return LESSONS.find((l) => l.id === id);
}

export function lessonRun(lesson: Lesson, runId: string): LessonRun {
  const run = lesson.runs.find((r) => r.id === runId);
  if (!run) throw new Error(`lesson ${lesson.id}: no run "${runId}"`);
  return run;
}

/**
 * The RunConfig of a lesson run: the defaults with the run's keys applied through the config's
 * validators (task first, then methods, then the rest), and seed 1 unless the run sets one.
 */
export function lessonRunConfig(run: LessonRun, seed?: number): RunConfig {
  let cfg = defaultConfig();
  const set = run.set;
  if (set.task !== undefined) cfg = withFieldText(cfg, 'task', set.task);
  if (set.methods !== undefined) cfg = withFieldText(cfg, 'methods', set.methods);
  for (const [k, v] of Object.entries(set)) if (k !== 'task' && k !== 'methods') cfg = withFieldText(cfg, k, v);
  return seed === undefined ? cfg : withFieldText(cfg, 'seed', String(seed));
}

// ---------------------------------------------------------------------------------------------
// Statistics
// ---------------------------------------------------------------------------------------------

const avg = (xs: number[]): number => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN);
// Math.max/min by reduce, not by spreading: a batch dump can hold 65,536 trajectories, more
// arguments than a browser worker's stack takes.
const maxOf = (xs: readonly number[]): number => xs.reduce((a, b) => Math.max(a, b), -Infinity);
const minOf = (xs: readonly number[]): number => xs.reduce((a, b) => Math.min(a, b), Infinity);

type Traj = BatchDump['trajs'][number];

/** Per turn taken, the mean of a token field over that turn's policy tokens. */
function perTurn(t: Traj, field: 'adv' | 'ratio'): number[] {
  const by = new Map<number, number[]>();
  for (const k of t.tokens) {
    if (!k.mask) continue;
    const xs = by.get(k.turn) ?? [];
    xs.push(k[field]);
    by.set(k.turn, xs);
  }
  return [...by.keys()].sort((a, b) => a - b).map((turn) => avg(by.get(turn)!));
}

/** Fraction of the trained trajectories with two or more turns whose per-turn values differ; NaN if fewer than 4 such. */
function turnsDistinct(d: BatchDump, field: 'adv' | 'ratio'): number {
  const multi = d.trajs.filter((t) => t.kept && perTurn(t, field).length >= 2);
  if (multi.length < 4) return NaN;
  const distinct = multi.filter((t) => {
    const v = perTurn(t, field);
    return maxOf(v) - minOf(v) > 1e-5;
  });
  return distinct.length / multi.length;
}

function pearson(xs: number[], ys: number[]): number {
  const mx = avg(xs);
  const my = avg(ys);
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  xs.forEach((x, i) => {
    sxy += (x - mx) * (ys[i]! - my);
    sxx += (x - mx) ** 2;
    syy += (ys[i]! - my) ** 2;
  });
  return sxx > 0 && syy > 0 ? sxy / Math.sqrt(sxx * syy) : NaN;
}

/**
 * Statistics of one batch dump. Each documents what it measures; the panel shows the doc beside
 * the number.
 */
export const DUMP_STATS = {
  turn_adv_distinct: {
    label: 'trajectories whose turns get different advantages',
    doc: 'Among trained trajectories with 2+ turns: the fraction whose per-turn mean advantage is not the same on every turn.',
    compute: (d: BatchDump) => turnsDistinct(d, 'adv'),
  },
  turn_ratio_distinct: {
    label: 'trajectories whose turns have different ratios',
    doc: 'Among trained trajectories with 2+ turns: the fraction whose per-turn mean importance ratio differs between turns.',
    compute: (d: BatchDump) => turnsDistinct(d, 'ratio'),
  },
  clip_mixed: {
    label: 'clipped trajectories with unclipped tokens too',
    doc: 'Among trajectories with at least one clipped token: the fraction that also has unclipped tokens (token-level clipping splits a trajectory; sequence-level clipping does not).',
    compute: (d: BatchDump) => {
      const clipped = d.trajs.filter((t) => t.tokens.some((k) => k.mask && k.clip !== 0));
      if (clipped.length === 0) return NaN;
      return clipped.filter((t) => t.tokens.some((k) => k.mask && k.clip === 0)).length / clipped.length;
    },
  },
  rm_error_trained: {
    label: 'reward-model error of what is trained on',
    doc: 'Mean |training reward - true reward| over the trained rollouts, each counted as often as it is drawn (PF-PPO resamples).',
    compute: (d: BatchDump) => {
      let w = 0;
      let e = 0;
      for (const t of d.trajs) {
        const c = t.kept ? t.copies : 0;
        w += c;
        e += c * Math.abs(t.reward - t.reward_true);
      }
      return w > 0 ? e / w : NaN;
    },
  },
  rm_error_all: {
    label: 'reward-model error over all rollouts',
    doc: 'Mean |training reward - true reward| over every rollout of the batch.',
    compute: (d: BatchDump) => avg(d.trajs.map((t) => Math.abs(t.reward - t.reward_true))),
  },
  role_adv_corr_min: {
    label: 'worst role: advantage vs its own reward (correlation)',
    doc: 'For each role, the correlation over trajectories between the mean advantage of that role\'s turns and that role\'s own reward minus its group mean; the smaller of the roles.',
    compute: (d: BatchDump) => {
      const roles = [...new Set(d.trajs.flatMap((t) => t.turn_roles ?? []))];
      if (roles.length === 0) return NaN;
      const groups = new Map<number, Traj[]>();
      for (const t of d.trajs) groups.set(t.group, [...(groups.get(t.group) ?? []), t]);
      const corrs = roles.map((role) => {
        const xs: number[] = [];
        const ys: number[] = [];
        for (const g of groups.values()) {
          const gMean = avg(g.map((t) => t.role_rewards?.[role] ?? 0));
          for (const t of g) {
            const turns = (t.turn_roles ?? []).map((r, i) => (r === role ? i : -1)).filter((i) => i >= 0);
            const adv = t.tokens.filter((k) => k.mask && turns.includes(k.turn)).map((k) => k.adv);
            if (!t.kept || adv.length === 0) continue;
            xs.push(avg(adv));
            ys.push((t.role_rewards?.[role] ?? 0) - gMean);
          }
        }
        return pearson(xs, ys);
      });
      return minOf(corrs);
    },
  },
  weight_short_long: {
    label: 'per-token weight, shortest vs longest trajectories',
    doc: 'Mean per-token loss weight |loss / (advantage x ratio)| of the shortest trained trajectories divided by that of the longest (1: every token weighs the same).',
    compute: (d: BatchDump) => {
      const rows = d.trajs
        .filter((t) => t.kept)
        .map((t) => {
          const ks = t.tokens.filter((k) => k.mask && Math.abs(k.adv) > 1e-6 && k.clip === 0);
          return { len: t.tokens.filter((k) => k.mask).length, w: avg(ks.map((k) => Math.abs(k.loss / (k.adv * k.ratio)))) };
        })
        .filter((r) => Number.isFinite(r.w));
      if (rows.length < 2) return NaN;
      const lo = minOf(rows.map((r) => r.len));
      const hi = maxOf(rows.map((r) => r.len));
      if (lo === hi) return NaN;
      return avg(rows.filter((r) => r.len === lo).map((r) => r.w)) / avg(rows.filter((r) => r.len === hi).map((r) => r.w));
    },
  },
  wrong_tokens: {
    label: 'policy tokens per failed trajectory',
    doc: 'Mean number of policy tokens of the rollouts whose true reward is below the batch\'s best.',
    compute: (d: BatchDump) => {
      const best = maxOf(d.trajs.map((t) => t.reward_true));
      const wrong = d.trajs.filter((t) => t.reward_true < best);
      return avg(wrong.map((t) => t.tokens.filter((k) => k.mask).length));
    },
  },
} satisfies Record<string, { label: string; doc: string; compute: (d: BatchDump) => number }>;

/** What a run produced: its metric rows and its last iteration's batch dump. */
export interface RunResult {
  rows: readonly MetricRow[];
  dump: BatchDump | null;
}

/** Whether a claim reads the last batch of `runId`: only then does a run keep its batch dump. */
export function needsDump(lesson: Lesson, runId: string): boolean {
  return lesson.claims.some((c) => [c.a, c.b].some((x) => typeof x === 'object' && x.run === runId && 'dump' in x));
}

export function isDumpStat(s: Stat): s is DumpStat {
  return 'dump' in s;
}

/** The value of a statistic on a run's result; NaN when it cannot be computed (too few iterations, no dump). */
export function statValue(s: Stat, r: RunResult, iters: number): number {
  if (isDumpStat(s)) return r.dump ? DUMP_STATS[s.dump].compute(r.dump) : NaN;
  const from = s.from ?? 1;
  const to = s.to ?? iters;
  const xs = r.rows.filter((row) => row.iter >= from && row.iter <= to).map((row) => row[s.metric]);
  if (xs.length < to - from + 1) return NaN;
  switch (s.agg) {
    case 'mean':
      return avg(xs);
    case 'max':
      return maxOf(xs);
    case 'min':
      return minOf(xs);
    case 'last':
      return xs[xs.length - 1]!;
  }
}

export interface ClaimCheck {
  a: number;
  b: number;
  ok: boolean;
}

/** Checks a claim given each run's result (by run id); missing runs give NaN and a failed check. */
export function checkClaim(lesson: Lesson, c: Claim, results: Readonly<Record<string, RunResult | undefined>>): ClaimCheck {
  const value = (s: Stat | number): number => {
    if (typeof s === 'number') return s;
    const r = results[s.run];
    return r ? statValue(s, r, lessonRun(lesson, s.run).iters) : NaN;
  };
  return compare(c, value(c.a), value(c.b));
}

/** Each run's results on one seed, by run id. */
export type SeedResults = Readonly<Record<string, RunResult | undefined>>;

export interface SeedsClaimCheck extends ClaimCheck {
  /** The statistics on each seed, in the order given. */
  perSeed: Array<{ a: number; b: number }>;
}

/**
 * Checks a claim on the mean over seeds: a and b are each averaged over the seeds where both are
 * defined, then compared as checkClaim does. A statistic of the last batch can be undefined on a
 * seed (no clipped trajectory to split, say); the claim needs both sides on at least half the seeds,
 * and fails with NaN otherwise (a run that was never trained counts as undefined).
 */
export function checkClaimOnSeeds(lesson: Lesson, c: Claim, bySeed: readonly SeedResults[]): SeedsClaimCheck {
  const perSeed = bySeed.map((results) => {
    const k = checkClaim(lesson, c, results);
    return { a: k.a, b: k.b };
  });
  const both = perSeed.filter((p) => Number.isFinite(p.a) && Number.isFinite(p.b));
  const enough = both.length > 0 && 2 * both.length >= perSeed.length;
  const a = enough ? both.reduce((x, p) => x + p.a, 0) / both.length : NaN;
  const b = enough ? both.reduce((x, p) => x + p.b, 0) / both.length : NaN;
  return { ...compare(c, a, b), perSeed };
}

function compare(c: Claim, a: number, b: number): ClaimCheck {
  const by = c.by ?? 0;
  let ok: boolean;
  if (c.times !== undefined) ok = c.op === '>' ? a >= b * c.times : a * c.times <= b;
  else ok = c.op === '>' ? a >= b + by : a <= b - by;
  return { a, b, ok: ok && Number.isFinite(a) && Number.isFinite(b) };
}

const METRIC_WORDS: Partial<Record<ScalarMetric, string>> = {
  success_rate: 'success rate',
  reward_mean: 'reward',
  groups_all_equal_frac: 'all-equal groups',
  adv_zero_frac: 'zero-advantage tokens',
  ratio_max: 'largest ratio',
  clip_frac: 'clip fraction',
  clip_frac_high: 'high-side clip fraction',
  ess: 'ESS',
  ess_rollout: 'rollout ESS',
  kl_ref: 'KL to the reference',
  grad_norm: 'gradient norm',
  rollouts: 'rollouts per iteration',
  tokens: 'policy tokens',
  adv_std: 'advantage std',
  entropy: 'entropy',
  lr: 'learning rate',
  neg_out_grad_share: 'gradient share of negative tokens outside [0.8, 1.2]',
};

/** A statistic in words: "all-equal groups, mean of iterations 1-30 (GRPO, hard search)". */
export function describeStat(lesson: Lesson, s: Stat | number): string {
  if (typeof s === 'number') return String(s);
  const run = lessonRun(lesson, s.run);
  if (isDumpStat(s)) return `${DUMP_STATS[s.dump].label}, last batch (${run.label})`;
  const from = s.from ?? 1;
  const to = s.to ?? run.iters;
  const window = from === to ? `iteration ${from}` : `iterations ${from}-${to}`;
  const agg = s.agg === 'last' ? 'at' : `${s.agg} of`;
  return `${METRIC_WORDS[s.metric] ?? s.metric}, ${agg} ${window} (${run.label})`;
}

/** A claim's condition in words: "A >= B + 0.2". */
export function describeClaim(lesson: Lesson, c: Claim): string {
  const a = describeStat(lesson, c.a);
  const b = describeStat(lesson, c.b);
  if (c.times !== undefined) return c.op === '>' ? `${a} ≥ ${c.times} × ${b}` : `${a} ≤ ${b} / ${c.times}`;
  const by = c.by ?? 0;
  if (by === 0) return `${a} ${c.op === '>' ? '≥' : '≤'} ${b}`;
  const plus = (sign: 1 | -1) => (sign * by >= 0 ? `+ ${Math.abs(by)}` : `− ${Math.abs(by)}`);
  return c.op === '>' ? `${a} ≥ ${b} ${plus(1)}` : `${a} ≤ ${b} ${plus(-1)}`;
}
