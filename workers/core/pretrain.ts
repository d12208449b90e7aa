/**
 * The pretrained start (`init=pretrained`): before RL, the policy is trained by token cross-entropy
 * on transcripts of a scripted demonstrator, as an LLM is supervised-fine-tuned before agentic RL.
 * The demonstrator is the task's oracle (the reference solution's next action), acting on an easier
 * version of the task (`init.demos=easy`: one hop, at most 8 values, no distractors, no noise, half
 * of the sequence targets) and replacing each turn by a random grammatical action with probability
 * `init.demoNoise`. So on the hard settings the starting policy has learned to read, search and
 * copy, but has never seen the hard cases and often fails: the regime where the papers' failure
 * modes (collapse on hard prompts, noisy rewards, stale rollouts) appear.
 *
 * The policy only ever sees its last K tokens (kernels/mlp.ts), so transcripts of the easier task
 * train it wherever their tokens exist in the task's vocabulary: tokens are mapped by their text.
 * Everything is seeded by the run's seed and runs on the CPU references of the MLP's forward and
 * backward passes, so both backends start from the same bits. Results are cached per (task, model,
 * init, seed): Reset, Compare and lessons ask for the same start again.
 */
import { adamCpu, gradNormCpu } from '../../kernels/optimizer/adam';
import { forwardCpu, MASKED_LOGIT, projTable, type MlpDims } from '../../kernels/model/mlp';
import { mlpBackward } from '../../kernels/model/wasm/backward';
import { logitGradCpu, rowLse } from '../../kernels/softmax/logitGrad';
import type { RunConfig } from './config';
import { actionPos, createEnv, PAD, seqLen, type EpisodeBatch, type TaskEnv } from './envs';
import { createRng, type Rng } from './rng';

/** Demonstration episodes per cross-entropy step. */
export const DEMO_EPISODES = 64;
/** Adam step size of the cross-entropy stage (the RL learning rate is for a different loss scale). */
export const PRETRAIN_LR = 0.02;
/** Prompts the starting success is measured on (one rollout each). */
export const START_EVAL_PROMPTS = 128;
/** The largest value count the easy demonstrations use. */
export const EASY_VALUES = 8;

const DEMO_STREAM = 0xde30;
const EVAL_STREAM = 0xe7a1;

export interface PretrainResult {
  params: Float32Array;
  /** Mean token cross-entropy (nats) over the last tenth of the steps. */
  demoLoss: number;
  /** Success of the demonstrations themselves (the demonstrator's own rate on its task). */
  demoSuccess: number;
  /** Success of the pretrained policy on the run's task (START_EVAL_PROMPTS rollouts, seeded). */
  startSuccess: number;
  /** Success of the random initial weights on the same prompts. */
  scratchSuccess: number;
  /** Wall time of the cross-entropy stage (when it ran; a cached start reports the first run's). */
  ms: number;
  /** The weights came with the page (workers/formats/shippedStarts.ts), not from pretraining here: `ms` is 0. */
  shipped: boolean;
}

export type PretrainProgress = (stepsDone: number, steps: number) => void;

/** The config of the task the demonstrations are drawn from. */
export function demoConfig(cfg: RunConfig): RunConfig {
  const env = {
    ...cfg.env,
    noise: 0,
    noiseSchedule: 'fixed' as const,
    judgeNoise: 0,
    rmNoise: 0,
  };
  if (cfg.init.demos === 'easy') {
    env.hops = 1;
    env.maxTurns = Math.max(2, Math.min(cfg.env.maxTurns, 3));
    env.values = Math.min(cfg.env.values, EASY_VALUES);
    env.toolValues = Math.min(cfg.env.toolValues, 3);
    env.distractors = 0;
    env.targets = Math.max(1, Math.ceil(cfg.env.targets / 2));
  }
  return { ...cfg, env };
}

/**
 * The key of the cache: everything the pretrained weights depend on. The demonstrations see the
 * demo task only, so runs that differ in noise, reward model or method share their start.
 */
export function pretrainKey(cfg: RunConfig): string {
  return JSON.stringify([cfg.task, demoConfig(cfg).env, cfg.model, cfg.temperature, cfg.init, cfg.seed]);
}

export interface Trained {
  params: Float32Array;
  demoLoss: number;
  demoSuccess: number;
  ms: number;
  shipped: boolean;
}

const CACHE_SIZE = 16;
const cache = new Map<string, Trained>();

/** Whether this config's start is pretrained already (no work left but the evaluation). */
export function isPretrainCached(cfg: RunConfig): boolean {
  return cache.has(pretrainKey(cfg));
}

/**
 * The pretrained weights of a run whose random initial weights are `scratch` and whose task is
 * `env` (the env the trainer built from cfg), with the starting success on that task. The weights
 * are cached; a hit costs only the evaluation (a few milliseconds).
 */
export function pretrainedStart(cfg: RunConfig, env: TaskEnv, scratch: Float32Array, progress?: PretrainProgress): PretrainResult {
  const key = pretrainKey(cfg);
  let trained = cache.get(key);
  if (trained) progress?.(cfg.init.steps, cfg.init.steps);
  else {
    trained = pretrain(cfg, env, scratch, progress);
    cachePretrained(key, trained);
  }
  const dims: MlpDims = { V: env.vocab.length, K: cfg.model.context, D: cfg.model.embed, H: cfg.model.hidden };
  const evalRng = () => createRng(cfg.seed).fork(EVAL_STREAM);
  return {
    ...trained,
    params: Float32Array.from(trained.params),
    startSuccess: policySuccess(trained.params, dims, env, cfg.temperature, START_EVAL_PROMPTS, evalRng()),
    scratchSuccess: policySuccess(scratch, dims, env, cfg.temperature, START_EVAL_PROMPTS, evalRng()),
  };
}

const now = (): number => (typeof performance !== 'undefined' ? performance.now() : Date.now());

function pretrain(cfg: RunConfig, env: TaskEnv, scratch: Float32Array, progress?: PretrainProgress): Trained {
  const t0 = now();
  const demoEnv = createEnv(demoConfig(cfg));
  const toTask = tokenMap(demoEnv, env);
  const dims: MlpDims = { V: env.vocab.length, K: cfg.model.context, D: cfg.model.embed, H: cfg.model.hidden };
  const params = Float32Array.from(scratch);
  const m = new Float32Array(params.length);
  const v = new Float32Array(params.length);
  const rng = createRng(cfg.seed).fork(DEMO_STREAM);
  const steps = cfg.init.steps;
  const tailFrom = steps - Math.max(1, Math.floor(steps / 10));
  let tailLoss = 0;
  let demoSolved = 0;
  let demoEpisodes = 0;
  for (let s = 0; s < steps; s++) {
    const demo = demonstrate(demoEnv, toTask, env.grammar, dims.V, DEMO_EPISODES, cfg.init.demoNoise, rng);
    demoSolved += demo.solved;
    demoEpisodes += DEMO_EPISODES;
    const tail = s >= tailFrom;
    const { loss, grads } = crossEntropy(params, dims, demo.seq, demo.L, demo.rows, env.grammar, cfg.temperature, tail);
    if (tail) tailLoss += loss / (steps - tailFrom);
    adamCpu(params, grads, m, v, gradNormCpu(grads), { lr: PRETRAIN_LR, beta1: 0.9, beta2: 0.999, eps: 1e-8, maxGradNorm: 1, step: s + 1 });
    progress?.(s + 1, steps);
  }
  return { params, demoLoss: tailLoss, demoSuccess: demoEpisodes ? demoSolved / demoEpisodes : 0, ms: now() - t0, shipped: false };
}

/** demo token id -> task token id, by text. */
function tokenMap(demo: TaskEnv, task: TaskEnv): Int32Array {
  const ids = new Map(task.vocab.map((t, i) => [t, i]));
  return Int32Array.from(demo.vocab, (t) => {
    const id = ids.get(t);
    if (id === undefined) throw new Error(`pretraining: the demonstration token "${t}" is not in the ${task.id} task's vocabulary`);
    return id;
  });
}

interface Demo {
  /** [episodes * L] transcripts in the task's token ids. */
  seq: Int32Array;
  L: number;
  /** Flat positions of the demonstrated action tokens (the cross-entropy targets). */
  rows: Uint32Array;
  solved: number;
}

/**
 * Rolls the demonstrator out on `episodes` fresh instances of the demo task: each turn is the
 * oracle's action, or with probability `noise` a random grammatical one. Targets the task's grammar
 * forbids after their previous token (none in the shipped tasks) are left out of the loss.
 */
function demonstrate(env: TaskEnv, toTask: Int32Array, taskGrammar: Uint8Array, taskV: number, episodes: number, noise: number, rng: Rng): Demo {
  const lay = env.layout;
  const L = seqLen(lay);
  const V = env.vocab.length;
  const batch = env.sample(episodes, 1, rng.fork(rng.int(2 ** 30)), 0);
  const seq = new Int32Array(episodes * L);
  for (let n = 0; n < episodes; n++) seq.set(batch.prompt.subarray(n * lay.promptLen, (n + 1) * lay.promptLen), n * L);
  const rows: number[] = [];
  for (let turn = 0; turn < lay.maxTurns; turn++) {
    const actions = new Int32Array(episodes * lay.actionLen);
    for (let n = 0; n < episodes; n++) {
      if (batch.done[n]) continue;
      if (rng.next() < noise) {
        let prev = seq[n * L + actionPos(lay, turn, 0) - 1]!;
        for (let a = 0; a < lay.actionLen; a++) {
          prev = randomAllowed(env.grammar, V, prev, rng);
          actions[n * lay.actionLen + a] = prev;
        }
      } else {
        actions.set(batch.oracle!(n, turn), n * lay.actionLen);
      }
    }
    const res = batch.step(turn, actions);
    for (let n = 0; n < episodes; n++) {
      for (let a = 0; a < lay.actionLen; a++) {
        const pos = n * L + actionPos(lay, turn, a);
        seq[pos] = res.actionMask[n * lay.actionLen + a] ? actions[n * lay.actionLen + a]! : PAD;
      }
      seq.set(res.obs.subarray(n * lay.obsLen, (n + 1) * lay.obsLen), n * L + actionPos(lay, turn, lay.actionLen));
    }
  }
  for (let i = 0; i < seq.length; i++) seq[i] = toTask[seq[i]!]!;
  for (let n = 0; n < episodes; n++) {
    for (let turn = 0; turn < lay.maxTurns; turn++) {
      for (let a = 0; a < lay.actionLen; a++) {
        const pos = n * L + actionPos(lay, turn, a);
        const tok = seq[pos]!;
        if (tok !== PAD && taskGrammar[seq[pos - 1]! * taskV + tok]) rows.push(pos);
      }
    }
  }
  let solved = 0;
  for (let n = 0; n < episodes; n++) solved += batch.success[n]!;
  return { seq, L, rows: Uint32Array.from(rows), solved };
}

function randomAllowed(grammar: Uint8Array, V: number, prev: number, rng: Rng): number {
  let count = 0;
  for (let t = 1; t < V; t++) count += grammar[prev * V + t]!;
  if (count === 0) return PAD;
  let k = rng.int(count);
  for (let t = 1; t < V; t++) if (grammar[prev * V + t] && k-- === 0) return t;
  return PAD;
}

/** Mean token cross-entropy of the rows' targets and its gradient (the MLP's CPU backward pass). */
function crossEntropy(params: Float32Array, dims: MlpDims, seq: Int32Array, L: number, rows: Uint32Array, grammar: Uint8Array, temperature: number, withLoss: boolean): { loss: number; grads: Float32Array } {
  const R = rows.length;
  const fwd = forwardCpu(params, dims, seq, L, rows, grammar, temperature);
  // The loss is reported over the last tenth of the steps only; elsewhere its log-sum-exp per row
  // (about a ninth of a step's time) would be thrown away. The gradient does not read it.
  let loss = withLoss ? 0 : NaN;
  if (withLoss) for (let r = 0; r < R; r++) loss -= fwd.z[r * dims.V + seq[rows[r]!]!]! - rowLse(fwd.z, r * dims.V, dims.V);
  // d(-mean logp)/dlogp_r = -1/R for every row.
  const dz = logitGradCpu(fwd.z, dims.V, seq, rows, new Float32Array(R).fill(-1 / R), temperature);
  return { loss: loss / R, grads: mlpBackward(params, dims, seq, L, rows, fwd.h, dz) };
}

/** Success rate of sampling from `params` on fresh instances of `env` (one rollout per prompt). */
export function policySuccess(params: Float32Array, dims: MlpDims, env: TaskEnv, temperature: number, prompts: number, rng: Rng): number {
  const batch: EpisodeBatch = env.sample(prompts, 1, rng.fork(1), 0);
  const lay = env.layout;
  const L = seqLen(lay);
  const N = prompts;
  const seq = new Int32Array(N * L);
  for (let n = 0; n < N; n++) seq.set(batch.prompt.subarray(n * lay.promptLen, (n + 1) * lay.promptLen), n * L);
  const proj = projTable(params, dims);
  const draw = rng.fork(2);
  for (let turn = 0; turn < lay.maxTurns; turn++) {
    if (batch.done.every((d) => d === 1)) break;
    const actions = new Int32Array(N * lay.actionLen);
    for (let a = 0; a < lay.actionLen; a++) {
      const rowPos = Uint32Array.from({ length: N }, (_, n) => n * L + actionPos(lay, turn, a));
      const { z } = forwardCpu(params, dims, seq, L, rowPos, env.grammar, temperature, proj);
      for (let n = 0; n < N; n++) {
        const tok = sampleRow(z, n * dims.V, dims.V, draw.next());
        actions[n * lay.actionLen + a] = tok;
        seq[rowPos[n]!] = tok;
      }
    }
    const res = batch.step(turn, actions);
    for (let n = 0; n < N; n++) {
      for (let a = 0; a < lay.actionLen; a++) if (!res.actionMask[n * lay.actionLen + a]) seq[n * L + actionPos(lay, turn, a)] = PAD;
      seq.set(res.obs.subarray(n * lay.obsLen, (n + 1) * lay.obsLen), n * L + actionPos(lay, turn, lay.actionLen));
    }
  }
  let solved = 0;
  for (let n = 0; n < N; n++) solved += batch.success[n]!;
  return solved / N;
}

function sampleRow(z: Float32Array, off: number, V: number, u: number): number {
  const lse = rowLse(z, off, V);
  let acc = 0;
  let last = 0;
  for (let v = 0; v < V; v++) {
    if (z[off + v] === MASKED_LOGIT) continue;
    acc += Math.exp(z[off + v]! - lse);
    last = v;
    if (u < acc) return v;
  }
  return last;
}

/**
 * Puts weights pretrained elsewhere for this key in the cache: the starts that ship with the page
 * (workers/entry/loadStarts.ts), whose bits tests/unit/shippedStarts.test.ts checks against
 * pretraining them here.
 */
export function cachePretrained(key: string, trained: Trained): void {
  cache.set(key, trained);
  if (cache.size > CACHE_SIZE) cache.delete(cache.keys().next().value!);
}

/** Puts a config's start in the cache from elsewhere, if it can (the page's worker: workers/entry/loadStarts.ts). */
export type StartSource = (cfg: RunConfig) => Promise<unknown>;
let startSource: StartSource | null = null;

/** The source createTrainer asks before a pretrained run is built; none (pretrain here) unless a host sets one. */
export function setStartSource(source: StartSource | null): void {
  startSource = source;
}

/** Lets the start source, if any, cache `cfg`'s start before pretrainedStart looks for it. */
export async function prepareStart(cfg: RunConfig): Promise<void> {
  if (startSource && cfg.init.mode === 'pretrained' && !isPretrainCached(cfg)) await startSource(cfg);
}

/** Forgets every cached start (tests that time or compare fresh pretraining runs). */
export function clearPretrainCache(): void {
  cache.clear();
}
