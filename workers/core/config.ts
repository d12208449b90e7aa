/**
 * The run config: the one source of truth for a run (docs/ARCHITECTURE.md). Every field is described once in
 * CONFIG_FIELDS (a flat table keyed by dotted path); the zod schema, the CLI's `--set key=value`
 * and --help, and the share URL are derived from it. Method parameters join the same flat key space
 * as `<methodId>.<param>`.
 */
import { SAMPLER_PRECISIONS } from '../../kernels/softmax/samplerOptions';
import { conflictsOf, ESTIMATOR_IDS, isMethodId, methodDef, METHOD_IDS } from './methods';
import { paramSchema, parseParamText, type ParamSpec, type ParamValue, type ParamValues, type ValueOf } from './methods/params';
import type { ParamSpecs } from './methods/registry';
import { NOISE_SCHEDULES, RM_UNSURE_ON, SEQ_REWARDS, TOOL_REWARDS } from './envs/knobs';
import { PLAN_PART_NAMES, planPartsOf } from './plan';

/** The toy tasks (workers/core/envs/, docs/TASKS.md). */
export const TASK_IDS = ['search', 'tools', 'roles', 'sequence'] as const;
export type TaskId = (typeof TASK_IDS)[number];
export const LOSS_AGG_MODES = ['token-mean', 'seq-mean-token-mean', 'seq-mean-token-sum', 'seq-mean-token-sum-norm'] as const;
export type LossAgg = (typeof LOSS_AGG_MODES)[number];
export const KL_TYPES = ['k3', 'k1', 'k2'] as const;
export type KlType = (typeof KL_TYPES)[number];
/** Where a run's weights start (workers/core/pretrain.ts). */
export const INIT_MODES = ['scratch', 'pretrained'] as const;
export type InitMode = (typeof INIT_MODES)[number];
/** What the pretrained start's demonstrations are drawn from. */
export const DEMO_SOURCES = ['easy', 'task'] as const;
export type DemoSource = (typeof DEMO_SOURCES)[number];

/** Every config field but `methods` and method parameters. Keys are paths into RunConfig. */
export const CONFIG_FIELDS = {
  task: { kind: 'choice', default: 'search', options: TASK_IDS, label: 'task', doc: 'The toy task: search (multi-hop lookups, simulated engine), tools (tool calls with CM2 checklists), roles (planner and executor, Dr. MAS), sequence (hidden-sequence matching, the collapse dial).' },
  seed: { kind: 'int', default: 1, min: 0, max: 2 ** 31 - 1, label: 'seed', doc: 'Seeds tasks, initial weights and token sampling.' },
  'env.entities': { kind: 'int', default: 3, min: 2, max: 32, label: 'entities', doc: 'Entities in each episode\'s knowledge base.' },
  'env.attributes': { kind: 'int', default: 2, min: 1, max: 16, label: 'attributes', doc: 'Attributes per entity.' },
  'env.values': { kind: 'int', default: 8, min: 2, max: 64, label: 'values', doc: 'Distinct attribute values (chance of a blind answer is 1/values).' },
  'env.maxTurns': { kind: 'int', default: 3, min: 1, max: 8, label: 'turn limit', doc: 'Turns before the episode ends without an answer.' },
  // Task knobs. The doc says which tasks read each one (search and roles share entities, attributes, values).
  'env.hops': { kind: 'int', default: 1, min: 1, max: 3, label: 'hops', doc: 'search: lookups a question needs ("the attribute of the entity that is the relation of E" is 2); needs a turn limit above it.' },
  'env.noise': { kind: 'number', default: 0, min: 0, max: 1, label: 'search noise', doc: 'search: probability that a search returns a plausible wrong document (ZeroSearch); with the exp schedule, the value it ends at.' },
  'env.noiseSchedule': { kind: 'choice', default: 'fixed', options: NOISE_SCHEDULES, label: 'noise schedule', doc: 'search: fixed noise, or ZeroSearch\'s exponential curriculum from noise start to search noise.' },
  'env.noiseStart': { kind: 'number', default: 0, min: 0, max: 1, label: 'noise start', doc: 'search: noise at the first iteration of the exp curriculum (p_s).' },
  'env.noiseBase': { kind: 'number', default: 4, min: 1, max: 100, label: 'curriculum base', doc: 'search: base b of the exp curriculum (ZeroSearch uses 4; 1 is linear).' },
  'env.noiseIters': { kind: 'int', default: 200, min: 1, max: 1_000_000, label: 'curriculum iterations', doc: 'search: iterations until the exp curriculum reaches search noise (m).' },
  'env.formatPenalty': { kind: 'number', default: 0, min: 0, max: 2, label: 'format penalty', doc: 'search: an episode that ends without an answer gets reward -penalty.' },
  'env.toolSteps': { kind: 'int', default: 3, min: 1, max: 4, label: 'tool steps', doc: 'tools: calls the request needs, in order: RATE, CONV, BOOK, CONFIRM.' },
  'env.toolValues': { kind: 'int', default: 3, min: 2, max: 16, label: 'argument values', doc: 'tools: tokens of each argument kind (currencies, amounts, rates, money, codes).' },
  'env.distractors': { kind: 'int', default: 0, min: 0, max: 8, label: 'distractor tools', doc: 'tools: extra tools that are never the right call.' },
  'env.judgeNoise': { kind: 'number', default: 0, min: 0, max: 0.5, label: 'judge noise', doc: 'tools: probability that the simulated judge flips a checklist label.' },
  'env.strictArgs': { kind: 'bool', default: false, label: 'strict arguments', doc: 'tools: a wrong argument ends the episode too (the tool item is always strict).' },
  'env.toolReward': { kind: 'choice', default: 'outcome', options: TOOL_REWARDS, label: 'tool reward', doc: 'tools: train on the outcome (success) alone, or on the judged checklist reward (partial credit; the CM2 method switches it on).' },
  'env.roleScale': { kind: 'number', default: 1, min: 0, max: 20, label: 'executor reward scale', doc: 'roles: multiplies the executor\'s reward (the planner\'s stays in [0, 1]).' },
  'env.roleOffset': { kind: 'number', default: 0, min: -5, max: 5, label: 'executor reward offset', doc: 'roles: added to the executor\'s reward.' },
  'env.symbols': { kind: 'int', default: 4, min: 2, max: 16, label: 'symbols', doc: 'sequence: symbols per position.' },
  'env.seqLen': { kind: 'int', default: 3, min: 1, max: 8, label: 'sequence length', doc: 'sequence: positions; chance of a match is symbols^-length.' },
  'env.targets': { kind: 'int', default: 4, min: 1, max: 64, label: 'targets', doc: 'sequence: task ids, each with its hidden target sequence (fixed by the seed); more targets, more of them never found.' },
  'env.seqReward': { kind: 'choice', default: 'exact', options: SEQ_REWARDS, label: 'sequence reward', doc: 'sequence: 1 for an exact match, or the fraction of matching positions.' },
  'env.think': { kind: 'int', default: 0, min: 0, max: 8, label: 'filler tokens', doc: 'sequence: up to this many filler tokens the policy may write before the sequence, which change nothing about the reward, so it controls its own length (Dr. GRPO\'s length bias); 0: none.' },
  'env.rmNoise': { kind: 'number', default: 0, min: 0, max: 2, label: 'reward-model noise', doc: 'every task: train on true reward + noise whose std is this at mid-range rewards (PF-PPO); 0: off.' },
  'env.rmNoiseFloor': { kind: 'number', default: 0.1, min: 0, max: 1, label: 'RM noise at the extremes', doc: 'every task: the reward-model noise std at the lowest and highest rewards, as a fraction of its mid-range std.' },
  'env.rmUnsure': { kind: 'number', default: 0, min: 0, max: 1, label: 'RM unsure rate', doc: 'every task: probability that the reward model is unsure of a rollout and gives it a random mid-range score (the middle half of the reward range) instead of its reward; its extreme scores are then reliable (PF-PPO\'s premise); 0: off.' },
  'env.rmUnsureOn': { kind: 'choice', default: 'any', options: RM_UNSURE_ON, label: 'RM unsure of', doc: 'search: which rollouts the unsure reward model may be unsure of: any, or unread (answers that no search result of the episode showed, which it cannot check against the evidence).' },
  init: { kind: 'choice', default: 'scratch', options: INIT_MODES, label: 'start from', doc: 'scratch: random weights; pretrained: random weights trained by token cross-entropy on a scripted demonstrator\'s transcripts before RL (the reference policy starts there too).' },
  'init.steps': { kind: 'int', default: 40, min: 1, max: 5000, label: 'pretraining steps', doc: 'pretrained: cross-entropy optimizer steps on the demonstrations.' },
  'init.demoNoise': { kind: 'number', default: 0.2, min: 0, max: 1, label: 'demonstrator error rate', doc: 'pretrained: probability that a demonstrated turn is a random grammatical action instead of the scripted one.' },
  'init.demos': { kind: 'choice', default: 'easy', options: DEMO_SOURCES, label: 'demonstrations from', doc: 'pretrained: easy (the task with one hop, at most 8 values, no distractors, no noise, half the sequence targets) or task (the task as configured, noise off).' },
  batch: { kind: 'int', default: 16, min: 1, max: 1024, label: 'prompts per batch', doc: 'Task instances per iteration (B).' },
  group: { kind: 'int', default: 8, min: 1, max: 64, label: 'group size', doc: 'Rollouts per task instance (G).' },
  'model.context': { kind: 'int', default: 8, min: 1, max: 32, label: 'context tokens', doc: 'The MLP sees the embeddings of the last K tokens.' },
  'model.embed': { kind: 'int', default: 16, min: 2, max: 128, label: 'embedding size', doc: 'Embedding width per token.' },
  'model.hidden': { kind: 'int', default: 64, min: 4, max: 1024, label: 'hidden units', doc: 'Width of the tanh hidden layer.' },
  temperature: { kind: 'number', default: 1, min: 0.05, max: 5, label: 'temperature', doc: 'Sampling temperature; training uses the same one, or every ratio is biased.' },
  lr: { kind: 'number', default: 0.005, min: 1e-6, max: 1, scale: 'log', label: 'learning rate', doc: 'Adam step size.' },
  epochs: { kind: 'int', default: 1, min: 1, max: 16, label: 'epochs', doc: 'Passes over each batch (more than 1 makes ratios move away from 1).' },
  minibatches: { kind: 'int', default: 1, min: 1, max: 64, label: 'minibatches', doc: 'Optimizer steps per epoch; the batch is split by trajectory.' },
  maxGradNorm: { kind: 'number', default: 1, min: 0, max: 100, label: 'max grad norm', doc: 'Global gradient-norm clip (0: off).' },
  beta1: { kind: 'number', default: 0.9, min: 0, max: 0.9999, label: 'Adam beta1', doc: 'First-moment decay.' },
  beta2: { kind: 'number', default: 0.999, min: 0, max: 0.99999, label: 'Adam beta2', doc: 'Second-moment decay.' },
  clipLow: { kind: 'number', default: 0.2, min: 0, max: 1, label: 'clip low', doc: 'PPO clip: ratio floor is 1 - clipLow.' },
  clipHigh: { kind: 'number', default: 0.2, min: 0, max: 10, label: 'clip high', doc: 'PPO clip: ratio ceiling is 1 + clipHigh (DAPO raises it).' },
  dualClip: { kind: 'number', default: 3, min: 1, max: 100, label: 'dual clip c', doc: 'For negative advantages the loss is capped at -A*c.' },
  klCoef: { kind: 'number', default: 0, min: 0, max: 1, label: 'KL coef', doc: 'Weight of the KL to the reference policy in the loss.' },
  klType: { kind: 'choice', default: 'k3', options: KL_TYPES, label: 'KL estimator', doc: 'k3 (low_var_kl, GRPO), k1 (log-ratio) or k2 (half squared log-ratio), docs/METHODS.md 1.4.' },
  staleness: { kind: 'int', default: 0, min: 0, max: 16, label: 'rollout staleness', doc: 'Roll out with the policy of this many updates ago (simulated asynchronous RL; VCPO).' },
  'rollout.precision': { kind: 'choice', default: 'fp32', options: SAMPLER_PRECISIONS, label: 'sampler precision', doc: 'The rollout\'s logits rounded to bf16 or fp16 before its softmax, as an inference engine stores them; the trainer keeps f32, so its log-probs differ from the sampler\'s even on-policy (docs/METHODS.md 5.19).' },
  'rollout.topP': { kind: 'number', default: 1, min: 0.01, max: 1, label: 'sampler top-p', doc: 'The rollout samples from the smallest set of top tokens holding this much probability (1: off); the trainer keeps the whole distribution (docs/METHODS.md 5.19).' },
  'rollout.topK': { kind: 'int', default: 0, min: 0, max: 1024, label: 'sampler top-k', doc: 'The rollout samples from its k most likely tokens, ties kept (0: off); the trainer keeps the whole distribution (docs/METHODS.md 5.19).' },
  lossAgg: { kind: 'choice', default: 'token-mean', options: LOSS_AGG_MODES, label: 'loss aggregation', doc: 'How token losses are averaged (docs/METHODS.md 1.3).' },
} as const satisfies Record<string, ParamSpec>;

export type ConfigKey = keyof typeof CONFIG_FIELDS;

/**
 * Where a flat key lives in RunConfig when that is not the key itself: `init` is both a setting and
 * the prefix of its knobs, so its value sits at `init.mode`.
 */
const KEY_PATHS = { init: 'init.mode' } as const;

/** A field's path in RunConfig: its key, or where KEY_PATHS puts it. */
type PathOfKey<K extends string> = K extends keyof typeof KEY_PATHS ? (typeof KEY_PATHS)[K] : K;
/** `a.b.c` with value V as the nested object { a: { b: { c: V } } }. */
type Nested<P extends string, V> = P extends `${infer Head}.${infer Rest}` ? { [H in Head]: Nested<Rest, V> } : { [H in P]: V };
type Intersect<U> = (U extends unknown ? (u: U) => void : never) extends (i: infer I) => void ? I : never;
/** Intersections of nested objects written out as one object, level by level. */
type Merged<T> = T extends object ? { [K in keyof T]: Merged<T[K]> } : T;
type Fields = typeof CONFIG_FIELDS;
/** The config fields as one nested object type: each path of CONFIG_FIELDS with its spec's value type. */
type FieldTree = Merged<Intersect<{ [K in keyof Fields & string]: Nested<PathOfKey<K>, ValueOf<Fields[K]>> }[keyof Fields & string]>>;

/**
 * The run config: every field of CONFIG_FIELDS at its path (its type from its spec), the active
 * methods and every method's parameters. Method ids are strings checked through the registry
 * (withMethods refuses one that is not registered).
 */
export type RunConfig = FieldTree & {
  /** Active methods, in the order they were switched on. */
  methods: string[];
  /** Parameters of every method (active or not), defaults filled in. */
  methodParams: Record<string, ParamValues<ParamSpecs>>;
};

const pathOf = (key: string): string => (Object.hasOwn(KEY_PATHS, key) ? KEY_PATHS[key as keyof typeof KEY_PATHS] : key);
const keyOfPath = (path: string): string => Object.entries(KEY_PATHS).find(([, p]) => p === path)?.[0] ?? path;

function getPath(obj: unknown, path: string): unknown {
  return path.split('.').reduce<unknown>((o, k) => (o as Record<string, unknown>)?.[k], obj);
}

function setPath(obj: Record<string, unknown>, path: string, value: unknown): void {
  const keys = path.split('.');
  let o = obj;
  for (const k of keys.slice(0, -1)) {
    if (typeof o[k] !== 'object' || o[k] === null) o[k] = {};
    o = o[k] as Record<string, unknown>;
  }
  o[keys[keys.length - 1]!] = value;
}

/** Every settable flat key with its spec: config fields, then `<method>.<param>`. */
export function allFields(): Array<[string, ParamSpec]> {
  const out: Array<[string, ParamSpec]> = Object.entries(CONFIG_FIELDS);
  for (const id of METHOD_IDS) {
    for (const [p, spec] of Object.entries(methodDef(id).params)) out.push([`${id}.${p}`, spec]);
  }
  return out;
}

let fieldMapCache: { methods: number; map: Map<string, ParamSpec> } | null = null;

/** The flat keys and their specs, rebuilt when a method was registered since. */
function fieldMap(): Map<string, ParamSpec> {
  if (fieldMapCache?.methods !== METHOD_IDS.length) fieldMapCache = { methods: METHOD_IDS.length, map: new Map(allFields()) };
  return fieldMapCache.map;
}

export function fieldSpec(key: string): ParamSpec | undefined {
  return fieldMap().get(key);
}

export function defaultConfig(): RunConfig {
  const cfg: Record<string, unknown> = { methods: ['grpo'] };
  for (const [key, spec] of Object.entries(CONFIG_FIELDS)) setPath(cfg, pathOf(key), spec.default);
  const methodParams: Record<string, Record<string, ParamValue>> = {};
  for (const id of METHOD_IDS) {
    methodParams[id] = Object.fromEntries(
      Object.entries(methodDef(id).params).map(([p, s]) => [p, s.default]),
    );
  }
  cfg.methodParams = methodParams;
  return cfg as unknown as RunConfig;
}

/** Reads a flat key (`model.hidden`, `grpo.eps`) from a config. */
export function getField(cfg: RunConfig, key: string): ParamValue | undefined {
  if (Object.hasOwn(CONFIG_FIELDS, key)) return getPath(cfg, pathOf(key)) as ParamValue;
  const dot = key.indexOf('.');
  return getPath(cfg.methodParams, key.slice(0, dot) + '.' + key.slice(dot + 1)) as ParamValue | undefined;
}

/** Returns a copy of `cfg` with one flat key set; throws `ConfigError` naming the key. */
export function withField(cfg: RunConfig, key: string, value: ParamValue): RunConfig {
  const spec = fieldMap().get(key);
  if (!spec) throw new ConfigError(key, 'unknown key (see --help for the list)');
  const parsed = paramSchema(spec).safeParse(value);
  if (!parsed.success) throw new ConfigError(key, parsed.error.issues[0]?.message ?? 'invalid value');
  if (key === 'task') checkTasks(cfg.methods, parsed.data as TaskId, 'task');
  const next = structuredClone(cfg);
  if (Object.hasOwn(CONFIG_FIELDS, key)) setPath(next, pathOf(key), parsed.data);
  else setPath(next.methodParams, key, parsed.data);
  return next;
}

/** `key=value` text form (CLI --set, URL). */
export function withFieldText(cfg: RunConfig, key: string, text: string): RunConfig {
  if (key === 'methods') return withMethods(cfg, text.split(',').filter((s) => s.length > 0));
  const spec = fieldMap().get(key);
  if (!spec) throw new ConfigError(key, 'unknown key (see --help for the list)');
  try {
    return withField(cfg, key, parseParamText(spec, text));
  } catch (e) {
    if (e instanceof ConfigError) throw e;
    throw new ConfigError(key, (e as Error).message);
  }
}

export function withMethods(cfg: RunConfig, ids: string[]): RunConfig {
  for (const id of ids) {
    if (!isMethodId(id)) throw new ConfigError('methods', `unknown method "${id}"; expected some of ${METHOD_IDS.join(', ')}`);
  }
  const unique = [...new Set(ids)];
  checkMethods(cfg, unique, cfg.task);
  return { ...structuredClone(cfg), methods: unique };
}

/** A method as its card names it: `GMPO`. */
function cardName(id: string): string {
  return methodDef(id).name;
}

function listed(parts: readonly string[]): string {
  const u = [...new Set(parts)];
  return u.length <= 1 ? (u[0] ?? '') : `${u.slice(0, -1).join(', ')} and ${u[u.length - 1]}`;
}

/** Why `a` and `b` cannot run together: both estimators, or the part of the iteration both set. */
export function conflictWhy(cfg: RunConfig, a: string, b: string): string {
  if (ESTIMATOR_IDS.includes(a) && ESTIMATOR_IDS.includes(b)) return 'both are advantage estimators, and a run has exactly one';
  const said = methodDef(a).conflictReasons?.[b] ?? methodDef(b).conflictReasons?.[a];
  if (said) return said;
  const pa = planPartsOf(cfg, a).map((k) => PLAN_PART_NAMES[k]);
  const pb = planPartsOf(cfg, b).map((k) => PLAN_PART_NAMES[k]);
  const both = pa.filter((p) => pb.includes(p));
  if (both.length > 0) return `both set ${listed(both)}, each its own way`;
  const what = (id: string, parts: string[]) => (parts.length > 0 ? `${cardName(id)} sets ${listed(parts)}` : `${cardName(id)} acts on the ${methodDef(id).stage} stage`);
  return `${what(a, pa)}; ${what(b, pb)}; their papers do not define the two together`;
}

/** The rules of a method set: no conflicting pair, exactly one advantage estimator, the right task. */
function checkMethods(cfg: RunConfig, ids: readonly string[], task: TaskId): void {
  for (const a of ids) {
    for (const b of conflictsOf(a)) {
      if (ids.includes(b)) throw new ConfigError('methods', `${cardName(a)} conflicts with ${cardName(b)}: ${conflictWhy(cfg, a, b)}. Switch one of them off.`);
    }
  }
  if (!ids.some((id) => ESTIMATOR_IDS.includes(id))) {
    throw new ConfigError('methods', `the run needs one advantage estimator (${ESTIMATOR_IDS.join(', ')}); none is active`);
  }
  checkTasks(ids, task, 'methods');
}

function checkTasks(ids: readonly string[], task: TaskId, key: string): void {
  for (const id of ids) {
    const tasks = methodDef(id).tasks;
    if (tasks && !tasks.includes(task)) throw new ConfigError(key, `${cardName(id)} needs the ${tasks.join(' or ')} task (the task is ${task})`);
  }
}

export class ConfigError extends Error {
  constructor(
    readonly key: string,
    readonly expected: string,
  ) {
    super(`${key}: ${expected}`);
    this.name = 'ConfigError';
  }
}

/**
 * Validates a whole config object (a JSON file, an imported run). Missing fields take their
 * defaults; an unknown or bad field throws a ConfigError naming it.
 */
export function parseConfig(input: unknown): RunConfig {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw new ConfigError('config', 'expected a JSON object');
  }
  let cfg = defaultConfig();
  const flat = flatten(input as Record<string, unknown>);
  let methods: string[] | null = null;
  // Methods last: whether a method set is valid depends on the task, wherever the file puts it.
  cfg = { ...cfg, methods: [] };
  for (const [key, value] of flat) {
    if (key === 'methods') {
      if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) {
        throw new ConfigError('methods', 'expected an array of method ids');
      }
      methods = value as string[];
    } else {
      const k = key.startsWith('methodParams.') ? key.slice('methodParams.'.length) : keyOfPath(key);
      cfg = withField(cfg, k, value as ParamValue);
    }
  }
  return withMethods(cfg, methods ?? defaultConfig().methods);
}

/** Deepest nesting a config object may have (`methodParams.grpo.eps` is 3): deeper is refused, not walked. */
const MAX_CONFIG_DEPTH = 8;

function flatten(obj: Record<string, unknown>, prefix = '', depth = 1): Array<[string, unknown]> {
  const out: Array<[string, unknown]> = [];
  for (const [k, v] of Object.entries(obj)) {
    const key = prefix ? `${prefix}.${k}` : k;
    if (typeof v === 'object' && v !== null && !Array.isArray(v) && (!fieldMap().has(key) || Object.hasOwn(KEY_PATHS, key))) {
      if (depth >= MAX_CONFIG_DEPTH) throw new ConfigError(key.length > 60 ? `${key.slice(0, 60)}…` : key, `nested deeper than ${MAX_CONFIG_DEPTH} levels; no config key is`);
      out.push(...flatten(v as Record<string, unknown>, key, depth + 1));
    } else out.push([key, v]);
  }
  return out;
}
