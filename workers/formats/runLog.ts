/**
 * A real run's metric log read into the playground's metric rows, so its charts draw it and its
 * alarms (workers/core/alarmRules.ts) run on it with the toy's rules. Four formats, as the
 * frameworks write them (docs/IMPORT.md has the table of names and the lines that write each):
 *
 *   trl-trainer-state  TRL's trainer_state.json: transformers' TrainerState.save_to_json
 *                      (json.dumps(asdict(state), indent=2, sort_keys=True), NaN written as NaN),
 *                      log_history holding one entry per logging step, {...logs, "step": global_step}
 *   verl-console       verl's console logger: `step:N - key:value - ...` per step
 *                      (verl/utils/logger/aggregate_logger.py:26-32, 49-51), values as pprint.pformat
 *                      writes them (`0.5`, `nan`, `np.float64(0.5)` under numpy 2), lines usually
 *                      prefixed by Ray (`(TaskRunner pid=..)`)
 *   verl-file          verl's file logger: one JSON object per line, {"step": N, "data": {...}}
 *                      (verl/utils/tracking.py:250-252; orjson writes NaN as null)
 *   wandb-csv          a W&B CSV of either: a run's history (`_step` and the logged keys; TRL's keys
 *                      under `train/`, transformers' rewrite_logs) or a panel's export (`Step`,
 *                      `<run> - <key>`, `<run> - <key>__MIN`, `__MAX`)
 *
 * Pure and DOM-free (the page and `npm run -s diagnose` share it). Untrusted input: the size is
 * capped before parsing, nothing is evaluated, and every refusal is one line naming what is wrong.
 */
import { SCALAR_METRICS, type MetricRow, type ScalarMetric } from '../core/metrics';
import { MAX_RUN_ROWS } from './runFile';

/** Largest log accepted (characters): a long run's console output with every other line kept. */
export const MAX_RUN_LOG_CHARS = 64 * 1024 * 1024;

export type LogFramework = 'verl' | 'trl';
export type LogFormat = 'trl-trainer-state' | 'verl-console' | 'verl-file' | 'wandb-csv';

export const LOG_FORMAT_NAMES: Record<LogFormat, string> = {
  'trl-trainer-state': "TRL's trainer_state.json (log_history)",
  'verl-console': "verl's console log (step:N - key:value lines)",
  'verl-file': "verl's file logger (JSON lines)",
  'wandb-csv': 'a W&B CSV export',
};

export interface MetricSource {
  metric: ScalarMetric;
  /** The framework's keys for it, in order of preference: a row takes the first one it has. */
  keys: string[];
  /** Where the framework writes the first key (file:line at the commit the recipe pins). */
  source: string;
  /** Where the framework's quantity is not exactly the playground's. */
  note?: string;
}

/**
 * The framework's metric names for the playground's metrics, read from their sources: verl at
 * volcengine/verl@b178a3cd5, TRL at huggingface/trl@f2cd577 (transformers' Trainer logs loss,
 * grad_norm and learning_rate in _maybe_log_save_evaluate). docs/IMPORT.md shows this table.
 */
export const LOG_METRICS: Record<LogFramework, MetricSource[]> = {
  verl: [
    { metric: 'reward_mean', keys: ['critic/score/mean', 'critic/rewards/mean'], source: 'verl/trainer/ppo/metric_utils.py:162 (critic/rewards/mean :166)', note: "the reward function's score; critic/rewards/mean adds the KL penalty when use_kl_in_reward" },
    { metric: 'adv_mean', keys: ['critic/advantages/mean'], source: 'verl/trainer/ppo/metric_utils.py:170' },
    { metric: 'entropy', keys: ['actor/entropy'], source: 'verl/workers/actor/dp_actor.py:636' },
    { metric: 'kl_ref', keys: ['actor/kl_loss', 'actor/reward_kl_penalty'], source: 'verl/workers/actor/dp_actor.py:649 (actor/reward_kl_penalty: verl/trainer/ppo/ray_trainer.py:107)', note: 'logged only with use_kl_loss (or use_kl_in_reward)' },
    { metric: 'clip_frac', keys: ['actor/pg_clipfrac'], source: 'verl/trainer/ppo/core_algos.py:1246', note: 'both sides of the clip; verl has no per-side split (actor/pg_clipfrac_lower is the dual clip)' },
    { metric: 'grad_norm', keys: ['actor/grad_norm'], source: 'verl/workers/actor/dp_actor.py:666' },
    { metric: 'tokens', keys: ['response_length/mean'], source: 'verl/trainer/ppo/metric_utils.py:190', note: "mean response length per rollout (the playground's own is the batch's policy tokens)" },
    { metric: 'lr', keys: ['actor/lr'], source: 'verl/workers/fsdp_workers.py:920' },
    { metric: 'loss', keys: ['actor/pg_loss'], source: 'verl/workers/actor/dp_actor.py:662' },
  ],
  trl: [
    { metric: 'reward_mean', keys: ['reward'], source: 'trl/trainer/grpo_trainer.py:2748' },
    { metric: 'success_rate', keys: ['toy/success'], source: "the recipe's trl_run/train_grpo.py (log_metric), not TRL's own" },
    { metric: 'groups_all_equal_frac', keys: ['frac_reward_zero_std'], source: 'trl/trainer/grpo_trainer.py:2750', note: "share of completions whose group's rewards have std 0: the share of all-equal groups under scale_rewards='group' (the default)" },
    { metric: 'entropy', keys: ['entropy'], source: 'trl/trainer/grpo_trainer.py:3240' },
    { metric: 'kl_ref', keys: ['kl'], source: 'trl/trainer/grpo_trainer.py:3238', note: 'logged only with beta > 0' },
    { metric: 'clip_frac', keys: ['clip_ratio/region_mean', 'clip_ratio'], source: 'trl/trainer/grpo_trainer.py:3249 (clip_ratio with the Liger loss, :2905)' },
    { metric: 'clip_frac_low', keys: ['clip_ratio/low_mean'], source: 'trl/trainer/grpo_trainer.py:3247' },
    { metric: 'clip_frac_high', keys: ['clip_ratio/high_mean'], source: 'trl/trainer/grpo_trainer.py:3248' },
    { metric: 'grad_norm', keys: ['grad_norm'], source: "transformers' Trainer._maybe_log_save_evaluate" },
    { metric: 'tokens', keys: ['completions/mean_length'], source: 'trl/trainer/grpo_trainer.py:2232', note: "mean completion length (tool results excluded; the playground's own is the batch's policy tokens)" },
    { metric: 'lr', keys: ['learning_rate'], source: "transformers' Trainer._maybe_log_save_evaluate" },
    { metric: 'loss', keys: ['loss'], source: "transformers' Trainer._maybe_log_save_evaluate" },
  ],
};

export interface RunLog {
  format: LogFormat;
  framework: LogFramework;
  /** One row per logged step that has a charted metric, steps ascending; metrics it lacks are NaN. */
  rows: MetricRow[];
  /** The playground metrics found, each with the key it was read from. */
  mapped: Array<{ metric: ScalarMetric; key: string }>;
  /** Values the log holds as NaN or infinite (a run that blew up), by step. */
  nonFinite: Array<{ step: number; metric: ScalarMetric; value: number }>;
  /** What was left out, in words (a cut-off last line, rows without a step). */
  notes: string[];
}

export type ParsedRunLog = { ok: true; log: RunLog } | { ok: false; error: string };

/** One logging call: the step and its numeric values by key. */
interface Record_ {
  step: number;
  values: Map<string, number>;
}

class LogError extends Error {}

const fail = (message: string): never => {
  throw new LogError(message);
};

/** A short, printable rendering of an untrusted value for an error message. */
function shown(v: unknown): string {
  const s = typeof v === 'string' ? JSON.stringify(v) : JSON.stringify(v) ?? String(v);
  return s.length > 40 ? `${s.slice(0, 37)}...` : s;
}

/** A logged value as a number: numbers, NaN written as null (orjson) or as "NaN"/"Infinity" text; anything else is not a metric. */
function numeric(v: unknown): number | undefined {
  if (typeof v === 'number') return v;
  if (v === null) return NaN;
  if (typeof v === 'string') {
    const t = v.trim().toLowerCase();
    if (t === 'nan') return NaN;
    if (t === 'inf' || t === 'infinity' || t === '+inf') return Infinity;
    if (t === '-inf' || t === '-infinity') return -Infinity;
  }
  return undefined;
}

function wholeStep(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= 1e12 ? v : undefined;
}

/**
 * JSON as Python's json module writes it: bare NaN, Infinity and -Infinity (not JSON) become
 * strings that `numeric` reads back. Only outside strings; the common case parses untouched.
 */
function parsePythonJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (first) {
    if (!/NaN|Infinity/.test(text)) throw first;
  }
  const out: string[] = [];
  let from = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92) i++; // backslash: skip the escaped character
      else if (c === 34) inString = false;
      continue;
    }
    if (c === 34) {
      inString = true;
      continue;
    }
    for (const token of ['-Infinity', 'Infinity', 'NaN']) {
      if (text.startsWith(token, i)) {
        out.push(text.slice(from, i), `"${token}"`);
        i += token.length - 1;
        from = i + 1;
        break;
      }
    }
  }
  out.push(text.slice(from));
  return JSON.parse(out.join(''));
}

function jsonError(e: unknown): string {
  return e instanceof Error ? e.message.split('\n')[0]! : String(e);
}

function readTrainerState(state: Record<string, unknown>): Record_[] {
  const history = state.log_history;
  if (!Array.isArray(history)) fail(`trainer_state.json: log_history is ${shown(history)}, not a list of log entries`);
  const records: Record_[] = [];
  (history as unknown[]).forEach((entry, i) => {
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) fail(`log_history[${i}] is ${shown(entry)}, not an object`);
    const e = entry as Record<string, unknown>;
    const step = wholeStep(e.step);
    if (step === undefined) fail(`log_history[${i}].step is ${shown(e.step)}, not a whole number of steps`);
    const values = new Map<string, number>();
    for (const [k, v] of Object.entries(e)) {
      const x = numeric(v);
      if (x !== undefined && k !== 'step') values.set(k, x);
    }
    records.push({ step: step!, values });
  });
  return records;
}

function readVerlFile(lines: string[], notes: string[]): Record_[] {
  const records: Record_[] = [];
  const last = lines.length - 1;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (!line) continue;
    let obj: unknown;
    try {
      obj = parsePythonJson(line);
    } catch (e) {
      // A run stopped mid-write leaves its last line cut off: the steps before it stand.
      if (i === last) {
        notes.push(`line ${i + 1} is cut off (the run stopped while writing it): left out`);
        continue;
      }
      return fail(`line ${i + 1}: not JSON (${jsonError(e)})`);
    }
    if (typeof obj !== 'object' || obj === null || Array.isArray(obj)) fail(`line ${i + 1}: ${shown(obj)} is not a {"step": N, "data": {...}} object`);
    const o = obj as Record<string, unknown>;
    const step = wholeStep(o.step);
    if (step === undefined) fail(`line ${i + 1}: step is ${shown(o.step)}, not a whole number of steps`);
    if (typeof o.data !== 'object' || o.data === null || Array.isArray(o.data)) fail(`line ${i + 1}: data is ${shown(o.data)}, not an object of metrics`);
    const values = new Map<string, number>();
    for (const [k, v] of Object.entries(o.data as Record<string, unknown>)) {
      const x = numeric(v);
      if (x !== undefined) values.set(k, x);
    }
    records.push({ step: step!, values });
  }
  return records;
}

// eslint-disable-next-line no-control-regex
const ANSI = /\u001b\[[0-9;]*[A-Za-z]/g;
/** `step:N - ` at the start of a line or after a Ray prefix such as `(TaskRunner pid=12) `. */
const CONSOLE_STEP = /(?:^|[\s)\]])step:(\d+) - (.*)$/;

/** A value as pprint.pformat writes a number: `0.5`, `nan`, `-inf`, `np.float64(0.5)` (numpy 2), `tensor(0.5)`. */
function consoleValue(text: string): number | undefined {
  const m = /^(?:[A-Za-z_][\w.]*\()?\s*([-+]?(?:\d[\d_]*\.?\d*(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?|nan|inf|infinity))\s*(?:,[^)]*)?\)?$/i.exec(text.trim());
  if (!m) return undefined;
  const v = m[1]!.replace(/_/g, '');
  return numeric(v) ?? Number(v);
}

function readVerlConsole(lines: string[]): Record_[] {
  const records: Record_[] = [];
  for (const raw of lines) {
    const m = CONSOLE_STEP.exec(raw.replace(ANSI, ''));
    if (!m) continue;
    const values = new Map<string, number>();
    for (const part of m[2]!.split(' - ')) {
      const colon = part.indexOf(':');
      if (colon <= 0) continue;
      const x = consoleValue(part.slice(colon + 1));
      if (x !== undefined) values.set(part.slice(0, colon).trim(), x);
    }
    records.push({ step: Number(m[1]), values });
  }
  return records;
}

/** RFC 4180 records: quoted fields with doubled quotes, CRLF or LF. */
function csvRecords(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"') {
        if (text[i + 1] === '"') {
          field += '"';
          i++;
        } else quoted = false;
      } else field += c;
    } else if (c === '"' && field === '') quoted = true;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
    } else field += c;
  }
  if (quoted) fail('the CSV ends inside a quoted field');
  if (field !== '' || row.length > 0) {
    row.push(field);
    rows.push(row);
  }
  return rows.filter((r) => !(r.length === 1 && r[0] === ''));
}

/** Step columns a W&B export may carry, preferred first (TRL's own step, then W&B's). */
const STEP_COLUMNS = ['train/global_step', 'trainer/global_step', '_step', 'Step', 'step', 'global_step'];

/** A W&B column's metric key: a panel export names it `<run> - <key>`. */
function csvKey(header: string): string {
  const at = header.lastIndexOf(' - ');
  return at >= 0 ? header.slice(at + 3) : header;
}

function readCsv(text: string, notes: string[]): Record_[] {
  const rows = csvRecords(text);
  const header = rows[0]!;
  const keys = header.map((h) => csvKey(h.trim()));
  const stepCol = STEP_COLUMNS.map((s) => keys.indexOf(s)).find((i) => i >= 0);
  if (stepCol === undefined) fail(`the CSV has no step column (${STEP_COLUMNS.join(', ')}); its columns: ${keys.slice(0, 8).join(', ')}${keys.length > 8 ? ', ...' : ''}`);
  const runs = new Set(header.filter((h) => h.includes(' - ')).map((h) => h.slice(0, h.lastIndexOf(' - ')).trim()));
  if (runs.size > 1) fail(`the CSV holds ${runs.size} runs (${[...runs].slice(0, 3).join(', ')}${runs.size > 3 ? ', ...' : ''}): export one run at a time`);
  const columns = keys.map((k, i) => ({ k, i })).filter(({ k, i }) => i !== stepCol && k !== '' && !k.endsWith('__MIN') && !k.endsWith('__MAX'));
  const records: Record_[] = [];
  let noStep = 0;
  for (let r = 1; r < rows.length; r++) {
    const row = rows[r]!;
    if (row.length !== header.length) fail(`CSV row ${r + 1} has ${row.length} field${row.length === 1 ? '' : 's'} where the header has ${header.length}`);
    const cell = row[stepCol!]!.trim();
    if (cell === '' || /^nan$/i.test(cell)) {
      noStep++;
      continue;
    }
    const step = wholeStep(Number(cell));
    if (step === undefined) fail(`CSV row ${r + 1}: ${keys[stepCol!]} is ${shown(cell)}, not a whole number of steps`);
    const values = new Map<string, number>();
    for (const { k, i } of columns) {
      const t = row[i]!.trim();
      if (t === '') continue;
      const x = numeric(t) ?? (/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(t) ? Number(t) : undefined);
      if (x !== undefined) values.set(k, x);
    }
    records.push({ step: step!, values });
  }
  if (noStep > 0) notes.push(`${noStep} CSV row${noStep === 1 ? '' : 's'} without a step value (other logging calls) left out`);
  return records;
}

/** The framework whose names the records use (TRL's under W&B carry transformers' `train/` prefix). */
function frameworkOf(records: Record_[]): LogFramework | null {
  const seen = new Set<string>();
  for (const r of records) for (const k of r.values.keys()) seen.add(k.startsWith('train/') ? k.slice('train/'.length) : k);
  const hits = (fw: LogFramework) => LOG_METRICS[fw].reduce((n, m) => n + m.keys.filter((k) => seen.has(k)).length, 0);
  const verl = hits('verl');
  const trl = hits('trl');
  if (verl === 0 && trl === 0) return null;
  return verl >= trl ? 'verl' : 'trl';
}

function allKeys(records: Record_[]): string[] {
  const seen = new Set<string>();
  for (const r of records) for (const k of r.values.keys()) if (seen.size < 1000) seen.add(k);
  return [...seen];
}

function blankRow(step: number): MetricRow {
  const row = Object.fromEntries(SCALAR_METRICS.map((m) => [m, NaN])) as Record<ScalarMetric, number>;
  row.iter = step;
  return { ...row, adv_hist: [], adv_hist_edges: [], ratio_hist: [], ratio_hist_edges: [] };
}

function toRunLog(format: LogFormat, framework: LogFramework, records: Record_[], notes: string[]): RunLog {
  // Steps logged more than once (validation beside training, a resumed run) merge; the later value wins.
  const byStep = new Map<number, Map<string, number>>();
  for (const r of records) {
    const into = byStep.get(r.step) ?? new Map<string, number>();
    for (const [k, v] of r.values) into.set(k, v);
    byStep.set(r.step, into);
  }
  const prefixed = format === 'wandb-csv' && framework === 'trl';
  const get = (values: Map<string, number>, key: string) => values.get(key) ?? (prefixed ? values.get(`train/${key}`) : undefined);
  const rows: MetricRow[] = [];
  const used = new Map<ScalarMetric, string>();
  const nonFinite: RunLog['nonFinite'] = [];
  for (const step of [...byStep.keys()].sort((a, b) => a - b)) {
    const values = byStep.get(step)!;
    const row = blankRow(step);
    let any = false;
    for (const src of LOG_METRICS[framework]) {
      const key = src.keys.find((k) => get(values, k) !== undefined);
      if (key === undefined) continue;
      const v = get(values, key)!;
      row[src.metric] = v;
      any = true;
      if (!used.has(src.metric)) used.set(src.metric, prefixed && !values.has(key) ? `train/${key}` : key);
      if (!Number.isFinite(v)) nonFinite.push({ step, metric: src.metric, value: v });
    }
    if (any) rows.push(row);
  }
  if (rows.length === 0) {
    const keys = allKeys(records);
    fail(`no step logs a metric the playground charts (for ${framework}: ${LOG_METRICS[framework].flatMap((m) => m.keys.slice(0, 1)).join(', ')}); keys seen: ${keys.slice(0, 8).join(', ') || 'none'}${keys.length > 8 ? ', ...' : ''}`);
  }
  if (rows.length > MAX_RUN_ROWS) fail(`${rows.length} steps: at most ${MAX_RUN_ROWS} are read`);
  const mapped = LOG_METRICS[framework].filter((m) => used.has(m.metric)).map((m) => ({ metric: m.metric, key: used.get(m.metric)! }));
  return { format, framework, rows, mapped, nonFinite, notes };
}

/** Reads a run's metric log; never throws. `error` is one line naming what is wrong. */
export function parseRunLog(input: string): ParsedRunLog {
  try {
    if (input.length > MAX_RUN_LOG_CHARS) fail(`too large (${input.length} characters; at most ${MAX_RUN_LOG_CHARS})`);
    const text = input.charCodeAt(0) === 0xfeff ? input.slice(1) : input;
    if (text.trim() === '') fail('the file is empty');
    if (text.includes('\u0000')) fail('not a text file (it holds NUL bytes)');
    const notes: string[] = [];
    const head = text.trimStart();
    if (head.startsWith('{') || head.startsWith('[')) {
      let whole: unknown;
      let wholeError: unknown = null;
      try {
        whole = parsePythonJson(text);
      } catch (e) {
        wholeError = e;
      }
      if (wholeError === null) {
        if (typeof whole !== 'object' || whole === null || Array.isArray(whole)) fail('a JSON array: expected TRL\'s trainer_state.json (an object with log_history)');
        const obj = whole as Record<string, unknown>;
        if ('log_history' in obj) return { ok: true, log: toRunLog('trl-trainer-state', 'trl', readTrainerState(obj), notes) };
        if (!('step' in obj && 'data' in obj)) {
          fail(`a JSON object without log_history (keys: ${Object.keys(obj).slice(0, 6).join(', ') || 'none'}): not TRL's trainer_state.json`);
        }
      }
      const lines = text.split(/\r?\n/);
      const firstLine = lines.find((l) => l.trim() !== '')!.trim();
      let first: unknown;
      try {
        first = parsePythonJson(firstLine);
      } catch (e) {
        return fail(`not JSON (${jsonError(wholeError ?? e)})`);
      }
      if (typeof first === 'object' && first !== null && 'step' in first && 'data' in first) {
        return { ok: true, log: toRunLog('verl-file', 'verl', readVerlFile(lines, notes), notes) };
      }
      fail(`not JSON as a whole, and its first line is not verl's {"step": N, "data": {...}} (${jsonError(wholeError)})`);
    }
    const firstLine = head.slice(0, head.search(/\r?\n|$/));
    const headerKeys = firstLine.split(',').map((h) => csvKey(h.trim().replace(/^"|"$/g, '')));
    if (firstLine.includes(',') && STEP_COLUMNS.some((s) => headerKeys.includes(s))) {
      const records = readCsv(text, notes);
      const fw = frameworkOf(records);
      if (!fw) {
        const keys = allKeys(records);
        fail(`a CSV whose columns are neither verl's nor TRL's metric names (seen: ${keys.slice(0, 8).join(', ') || 'none'}${keys.length > 8 ? ', ...' : ''})`);
      }
      return { ok: true, log: toRunLog('wandb-csv', fw!, records, notes) };
    }
    const lines = text.split(/\r?\n/);
    const console_ = readVerlConsole(lines);
    if (console_.length > 0) return { ok: true, log: toRunLog('verl-console', 'verl', console_, notes) };
    return fail(
      "not a run log this reads: expected TRL's trainer_state.json, verl's console lines (step:N - key:value) or file logger lines ({\"step\": N, \"data\": {...}}), or a W&B CSV export",
    );
  } catch (e) {
    if (e instanceof LogError) return { ok: false, error: e.message };
    if (e instanceof RangeError) return { ok: false, error: `too large to read (${e.message})` };
    throw e;
  }
}
