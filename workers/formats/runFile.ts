/**
 * A whole run as one JSON file: its config (with the seed), share link, backend, metrics, notes and
 * optionally the last batch dump. Exported from the app; imported back to view the run without
 * re-running it. DOM-free, so the CLI and tests can read and write the same files.
 *
 * An imported file is untrusted: `parseRunFile` never throws, caps the size before parsing,
 * validates everything with zod (the config through parseConfig, which names a bad key) and
 * returns either the validated run or errors that name the path of each problem. The result is
 * zod's output, never the parsed object itself, so stray keys (`__proto__`, ...) are dropped.
 */
import { z } from 'zod';
import { ORIGINS } from '../core/origins';
import { ConfigError, KL_TYPES, LOSS_AGG_MODES, parseConfig, type RunConfig } from '../core/config';
import { ADV_ESTIMATORS } from '../../kernels/advantage/options';
import type { RatioMode } from '../core/plan';
import { SCALAR_METRICS, type MetricRow } from '../core/metrics';
import { encodeConfigLink } from './shareUrl';
import type { BatchDump } from './batchDump';

export const RUN_FILE_FORMAT = 'agentic-rl-playground/run';
export const RUN_FILE_VERSION = 1;
/** Largest file accepted (characters of JSON). A default run's file is well under 1 MB. */
export const MAX_RUN_FILE_CHARS = 64 * 1024 * 1024;
export const MAX_RUN_ROWS = 100_000;
export const MAX_NOTES_CHARS = 20_000;
const MAX_TRAJS = 1024 * 64;
const MAX_TOKENS = 4096;
const MAX_HIST = 1024;
/** Highest iteration number a row or batch may carry (a year of runs at 30 iterations a second is 1e9). */
export const MAX_ITER = 1_000_000_000;

export interface RunFile {
  format: typeof RUN_FILE_FORMAT;
  version: typeof RUN_FILE_VERSION;
  /** ISO time of the export. */
  createdAt: string;
  /** The share link of the config (`#v=1&...`), to reopen the run live. */
  link: string;
  config: RunConfig;
  /** The backend the metrics came from (same config, seed and backend: same numbers). */
  backend: { kind: 'gpu' | 'cpu'; label: string } | null;
  notes: string;
  metrics: MetricRow[];
  batch: BatchDump | null;
}

export interface RunFileProblem {
  /** Where in the file: `metrics[3].reward_mean`, `config`, `(file)`. */
  path: string;
  message: string;
}

export type ParsedRunFile = { ok: true; run: RunFile } | { ok: false; errors: RunFileProblem[] };

export function createRunFile(parts: {
  config: RunConfig;
  metrics: MetricRow[];
  notes?: string;
  backend?: RunFile['backend'];
  batch?: BatchDump | null;
  createdAt?: Date;
}): RunFile {
  return {
    format: RUN_FILE_FORMAT,
    version: RUN_FILE_VERSION,
    createdAt: (parts.createdAt ?? new Date()).toISOString(),
    link: encodeConfigLink(parts.config),
    config: parts.config,
    backend: parts.backend ?? null,
    notes: parts.notes ?? '',
    metrics: parts.metrics,
    batch: parts.batch ?? null,
  };
}

/** The file's text. Non-finite numbers become null in JSON; the parser reads them back as NaN. */
export function serializeRunFile(run: RunFile): string {
  return JSON.stringify(run, null, 1);
}

// PLUMBING: schemas. JSON has no NaN, so a metric may be null (read back as NaN).
const num = z.number().nullable().transform((v) => v ?? NaN);
const finite = z.number().refine(Number.isFinite, { message: 'expected a finite number' });
const configSchema = z.unknown().transform((v, ctx) => {
  try {
    return parseConfig(v);
  } catch (e) {
    ctx.addIssue({ code: 'custom', message: e instanceof ConfigError ? e.message : (e as Error).message });
    return z.NEVER;
  }
});

const rowShape = Object.fromEntries(SCALAR_METRICS.map((m) => [m, num.optional().transform((v) => v ?? NaN)])) as unknown as Record<
  (typeof SCALAR_METRICS)[number],
  z.ZodType<number>
>;
const hist = z.array(finite).max(MAX_HIST).optional().transform((v) => v ?? []);
const rowSchema = z.object({
  ...rowShape,
  iter: z.number().int().min(0).max(MAX_ITER),
  adv_hist: hist,
  adv_hist_edges: hist,
  ratio_hist: hist,
  ratio_hist_edges: hist,
});

const tokenSchema = z.object({
  tok: z.number().int().min(-(2 ** 31)).max(2 ** 31 - 1),
  text: z.string().max(64),
  turn: z.number().int().min(0).max(MAX_TOKENS),
  mask: num,
  logp_old: num,
  logp: num,
  logp_ref: num,
  entropy: num,
  sum_p2: num,
  adv: num,
  ratio: num,
  clip: num,
  loss: num,
  // Fields added to the dump later: a dump from before them still imports.
  logp_rollout: num.optional(),
  entropy_old: num.optional(),
  sum_p2_old: num.optional(),
  kl: num.optional(),
  value: num.optional(),
  ret: num.optional(),
});
// The dump's plan and layout (batchDump.ts DumpPlan), kept so an imported batch can be explained.
const RATIO_MODES = ['token', 'sequence', 'geometric', 'turn', 'step', 'cispo', 'sapo'] as const satisfies readonly RatioMode[];
const bool = z.boolean();
const count = z.number().int().min(0).max(1_000_000);
const planSchema = z.object({
  advantage: z.object({
    estimator: z.enum(ADV_ESTIMATORS),
    scaleStd: bool,
    unbiasedStd: bool,
    eps: finite,
    byRole: bool,
    entropyScale: bool,
    entropyClamp: bool,
    stdMin: finite,
    gamma: finite,
    separate: bool,
    stepWeight: finite,
    baseline: bool,
    klInReward: finite,
    isCap: finite,
    otb: bool,
    zeroTail: bool,
    trueGradNorm: bool,
  }),
  whiten: bool,
  critic: z.object({ gamma: finite, lambda: finite }).nullable(),
  ratio: z.object({ mode: z.enum(RATIO_MODES), clipLow: finite, clipHigh: finite, dualClip: finite }),
  kl: z.object({ coef: finite, type: z.enum(KL_TYPES) }),
  lossAgg: z.enum(LOSS_AGG_MODES),
  stepRows: bool,
  infoGain: z.object({ igType: z.enum(['prob_diff', 'log_prob_diff']) }).nullable(),
  essLr: z.object({ rule: z.enum(['sqrt', 'linear']), baseEss: finite }).nullable(),
  resample: z.object({ weighting: z.enum(['pow', 'max_min', 'max_random']), pow: finite, scope: z.enum(['group', 'batch']) }).nullable(),
  extraRollouts: z.object({ schedule: z.enum(['ET', 'HW']), nMax: count, useStd: bool, upper: finite }).nullable(),
  errorCorrection: z.object({ inject: finite, replace: finite }).nullable(),
  dynamicSampling: z.object({ maxGenBatches: count, from: count }).nullable(),
  hintedSft: z.object({ iters: count, hintTurns: count, hardRate: finite }).nullable(),
  staleness: count,
  groupCap: count,
});
const layoutSchema = z.object({ tp: z.number().int().min(1).max(MAX_TOKENS), action_len: z.number().int().min(1).max(MAX_TOKENS), max_turns: z.number().int().min(1).max(MAX_TOKENS) });

/** Role names: plain identifiers (never `__proto__`), as record keys. */
const roleName = z.string().regex(/^[A-Za-z][A-Za-z0-9_-]{0,31}$/, { error: 'expected a role name' });
const trajSchema = z.object({
  // Indices into the batch: bounded here, and below by the batch's own size (the views allocate by them).
  id: z.number().int().min(0).max(MAX_TRAJS - 1),
  group: z.number().int().min(0).max(MAX_TRAJS - 1),
  role: roleName.nullable(),
  reward: num,
  reward_true: num,
  kept: z.boolean().optional(),
  copies: z.number().int().min(0).max(1_000_000).optional(),
  // Fields some tasks and methods add (docs/ARCHITECTURE.md "The batch dump"); others are dropped.
  turn_rewards: z.array(num).max(64).optional(),
  checklist: z
    .array(
      z
        .array(
          z.object({
            item: z.string().max(64),
            weight: num,
            sat: z.boolean(),
            sat_true: z.boolean(),
            strict: z.boolean(),
            deps: z.array(z.string().max(64)).max(64).optional(),
            step: z.number().int().min(0).max(64).optional(),
          }),
        )
        .max(64),
    )
    .max(64)
    .optional(),
  turn_roles: z.array(roleName).max(64).optional(),
  role_rewards: z.record(roleName, num).optional(),
  origin: z.enum(ORIGINS).optional(),
  minibatch: z.number().int().min(0).max(MAX_TRAJS).optional(),
  p_answer: z.array(num).max(64).optional(),
  grad_norm: num.optional(),
  draw_weight: num.optional(),
  anchor_keys: z.array(z.number().int().min(0).max(2 ** 32 - 1)).max(64).optional(),
  text: z.string().max(10_000),
  tokens: z.array(tokenSchema).max(MAX_TOKENS),
});
const batchSchema = z.object({
  version: z.literal(1, { error: 'expected batch dump version 1' }),
  iter: z.number().int().min(0).max(MAX_ITER),
  config: configSchema,
  lr: num,
  loss: num,
  noise_p: num.optional(),
  // One per optimizer step: at most 16 epochs x 64 minibatches x 8 SeeUPO turn stages.
  ess_minibatch: z.array(num).max(8192).optional(),
  lr_minibatch: z.array(num).max(8192).optional(),
  plan: planSchema.optional(),
  layout: layoutSchema.optional(),
  trajs: z
    .array(trajSchema)
    .max(MAX_TRAJS)
    .superRefine((trajs, ctx) => {
      trajs.forEach((t, i) => {
        for (const key of ['id', 'group'] as const) {
          if (t[key] >= trajs.length) {
            ctx.addIssue({ code: 'custom', path: [i, key], message: `expected an index below the batch's ${trajs.length} trajectories` });
          }
        }
      });
    }),
});

const runSchema = z.strictObject({
  format: z.literal(RUN_FILE_FORMAT, { error: `expected "${RUN_FILE_FORMAT}" (is this a run file exported by the playground?)` }),
  version: z.literal(RUN_FILE_VERSION),
  createdAt: z.string().max(64),
  link: z.string().max(8192),
  config: configSchema,
  backend: z.object({ kind: z.enum(['gpu', 'cpu']), label: z.string().max(500) }).nullable(),
  notes: z.string().max(MAX_NOTES_CHARS, { error: `expected at most ${MAX_NOTES_CHARS} characters` }),
  metrics: z.array(rowSchema).max(MAX_RUN_ROWS, { error: `expected at most ${MAX_RUN_ROWS} rows` }),
  batch: batchSchema.nullable().optional().transform((v) => v ?? null),
});

function pathText(path: ReadonlyArray<PropertyKey>): string {
  let out = '';
  for (const p of path) out += typeof p === 'number' ? `[${p}]` : `${out ? '.' : ''}${String(p)}`;
  return out || '(file)';
}

/**
 * Reads a run file (its text, or already-parsed JSON). Never throws.
 *
 * @example parseRunFile('{}') -> { ok: false, errors: [{ path: 'format', message: 'expected "agentic-rl-playground/run" …' }, …] }
 */
export function parseRunFile(input: unknown): ParsedRunFile {
  try {
    let json: unknown = input;
    if (typeof input === 'string') {
      if (input.length > MAX_RUN_FILE_CHARS) {
        return { ok: false, errors: [{ path: '(file)', message: `too large (${input.length} characters; at most ${MAX_RUN_FILE_CHARS})` }] };
      }
      try {
        json = JSON.parse(input);
      } catch (e) {
        return { ok: false, errors: [{ path: '(file)', message: `not valid JSON (${(e as Error).message})` }] };
      }
    }
    if (typeof json !== 'object' || json === null || Array.isArray(json)) {
      return { ok: false, errors: [{ path: '(file)', message: 'expected a JSON object (a run file exported by the playground)' }] };
    }
    if ((json as { format?: unknown }).format !== RUN_FILE_FORMAT) {
      return { ok: false, errors: [{ path: 'format', message: `expected "${RUN_FILE_FORMAT}": this is not a run file exported by the playground` }] };
    }
    const v = (json as { version?: unknown }).version;
    if (typeof v === 'number' && v > RUN_FILE_VERSION) {
      return { ok: false, errors: [{ path: 'version', message: `run file version ${v} is newer than this playground (it reads version ${RUN_FILE_VERSION})` }] };
    }
    const r = runSchema.safeParse(json);
    if (!r.success) {
      return { ok: false, errors: r.error.issues.slice(0, 20).map((i) => ({ path: pathText(i.path), message: i.message })) };
    }
    return { ok: true, run: r.data as RunFile };
  } catch (e) {
    return { ok: false, errors: [{ path: '(file)', message: `could not be read (${e instanceof Error ? e.message : String(e)})` }] };
  }
}

/** Metrics as CSV: one row per iteration, the scalar metrics as columns (histograms left out). */
export function metricsToCsv(rows: MetricRow[]): string {
  const head = SCALAR_METRICS.join(',');
  const body = rows.map((r) => SCALAR_METRICS.map((m) => (Number.isFinite(r[m]) ? String(r[m]) : '')).join(','));
  return [head, ...body].join('\n') + '\n';
}
