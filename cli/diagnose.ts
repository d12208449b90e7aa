/**
 * `npm run -s diagnose -- FILE [--json]`: a real run's metric log (TRL's trainer_state.json, verl's
 * console or file logger, a W&B CSV export; workers/formats/runLog.ts), or a playground run file, read
 * into the playground's metrics and checked with the playground's own alarm rules
 * (workers/core/alarmRules.ts, the ones the page's charts run). Prints what was read and each alarm
 * with its step; with --json, one JSON object per alarm and line: {"alarm", "title", "step", "value",
 * "metric"}. A bad flag, or a file that is missing, unreadable or not a log this reads, exits with
 * status 2 and one line naming what is wrong.
 */
import { readFileSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ALARM_DOCS, detectAlarms, initialAlarmState, type Alarm, type AlarmKind } from '../workers/core/alarmRules';
import type { MetricRow, ScalarMetric } from '../workers/core/metrics';
import { LOG_FORMAT_NAMES, LOG_METRICS, MAX_RUN_LOG_CHARS, parseRunLog, type RunLog } from '../workers/formats/runLog';
import { parseRunFile, RUN_FILE_FORMAT } from '../workers/formats/runFile';
import { flagsOf, UsageError } from './args';
import { printable } from './printable';

/** The metric each alarm reads (workers/core/alarmRules.ts detectAlarms). */
export const ALARM_METRIC: Record<AlarmKind, ScalarMetric> = { collapse: 'groups_all_equal_frac', ess: 'ess', grad: 'grad_norm', entropy: 'entropy' };

export interface DiagnoseOptions {
  file: string | null;
  json: boolean;
  help: boolean;
}

export function parseDiagnoseArgs(argv: string[]): DiagnoseOptions {
  const o: DiagnoseOptions = { file: null, json: false, help: false };
  for (const { arg, flag } of flagsOf(argv)) {
    if (flag === '--json') o.json = true;
    else if (flag === '--help' || flag === '-h') o.help = true;
    else if (arg.startsWith('-') && arg !== '-') throw new UsageError(`${printable(arg)}: unknown flag; expected FILE, --json or --help`);
    else if (o.file !== null) throw new UsageError(`${printable(arg)}: one log at a time (already given: ${printable(o.file)})`);
    else o.file = arg;
  }
  if (!o.help && o.file === null) throw new UsageError('FILE: missing; give the log to read (npm run -s diagnose -- FILE [--json])');
  return o;
}

export function diagnoseHelp(): string {
  return [
    'Usage: npm run -s diagnose -- FILE [--json]',
    '',
    "Reads a real run's metric log and runs the playground's alarms on it (entropy collapse, gradient-norm",
    'spikes, all-equal groups, ESS drop), printing each with its step. FILE is one of:',
    "  TRL's trainer_state.json (log_history), verl's console output (step:N - key:value lines) or file",
    '  logger JSON lines ({"step": N, "data": {...}}), a W&B CSV export of either, or a playground run file.',
    '  --json   one JSON object per alarm and line: {"alarm", "title", "step", "value", "metric"}',
    'docs/IMPORT.md maps each framework\'s metric names to the playground\'s.',
  ].join('\n');
}

/** What a file holds, read: its rows, and how the log was read (null for a playground run file). */
export type Readout = { ok: true; rows: MetricRow[]; what: string; log: RunLog | null } | { ok: false; error: string };

/** A playground run file starts with its format tag (serializeRunFile writes it first). */
function isRunFile(text: string): boolean {
  return text.slice(0, 200).includes(`"format": "${RUN_FILE_FORMAT}"`) || text.slice(0, 200).includes(`"format":"${RUN_FILE_FORMAT}"`);
}

export function readLog(text: string): Readout {
  if (isRunFile(text)) {
    const parsed = parseRunFile(text);
    if (!parsed.ok) {
      const e = parsed.errors[0]!;
      return { ok: false, error: `a playground run file with ${parsed.errors.length} problem${parsed.errors.length === 1 ? '' : 's'}, the first: ${e.path}: ${e.message}` };
    }
    return { ok: true, rows: parsed.run.metrics, what: 'a playground run file', log: null };
  }
  const parsed = parseRunLog(text);
  if (!parsed.ok) return parsed;
  return { ok: true, rows: parsed.log.rows, what: `${LOG_FORMAT_NAMES[parsed.log.format]}, ${parsed.log.framework === 'trl' ? 'TRL' : 'verl'}`, log: parsed.log };
}

/** The alarms of a run, by the page's rules, in step order. */
export function diagnose(rows: readonly MetricRow[]): Alarm[] {
  return detectAlarms(rows, initialAlarmState());
}

const num = (v: number) => (Number.isFinite(v) ? String(Number(v.toPrecision(6))) : String(v));

/** The report for a terminal: what was read, what was charted, what is non-finite, the alarms. */
export function report(name: string, r: Extract<Readout, { ok: true }>, alarms: Alarm[]): string {
  const rows = r.rows;
  const lines = [`${printable(name)}: ${r.what}, ${rows.length} step${rows.length === 1 ? '' : 's'}${rows.length ? ` (${rows[0]!.iter} to ${rows[rows.length - 1]!.iter})` : ''}`];
  if (r.log) {
    lines.push(`charted: ${r.log.mapped.map((m) => `${m.metric} <- ${printable(m.key)}`).join(', ')}`);
    const known = new Set(r.log.mapped.map((m) => m.metric));
    const blind = (Object.keys(ALARM_METRIC) as AlarmKind[]).filter((k) => !known.has(ALARM_METRIC[k]));
    if (blind.length > 0) {
      const logs = (k: AlarmKind) => LOG_METRICS[r.log!.framework].some((m) => m.metric === ALARM_METRIC[k]);
      lines.push(`not checked: ${blind.map((k) => `${ALARM_DOCS[k].title} (${ALARM_METRIC[k]} ${logs(k) ? 'is not in this log' : `is not logged by ${r.log!.framework === 'trl' ? 'TRL' : 'verl'}`})`).join('; ')}`);
    }
    for (const n of r.log.notes) lines.push(`note: ${printable(n)}`);
    if (r.log.nonFinite.length > 0) {
      const shown = r.log.nonFinite.slice(0, 10).map((x) => `${x.metric} ${x.value} at step ${x.step}`);
      lines.push(`non-finite: ${shown.join(', ')}${r.log.nonFinite.length > 10 ? `, and ${r.log.nonFinite.length - 10} more` : ''}`);
    }
  }
  lines.push(alarms.length === 0 ? 'alarms: none' : `alarms (${alarms.length}):`);
  for (const a of alarms) lines.push(`  step ${a.iter}  ${ALARM_DOCS[a.kind].title}  ${ALARM_METRIC[a.kind]} ${num(a.value)}`);
  return lines.join('\n');
}

export function alarmJson(a: Alarm): string {
  return JSON.stringify({ alarm: a.kind, title: ALARM_DOCS[a.kind].title, step: a.iter, value: Number.isFinite(a.value) ? a.value : null, metric: ALARM_METRIC[a.kind] });
}

function readFile(path: string): string {
  let st;
  try {
    st = statSync(path);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new UsageError(`${printable(path)}: ${code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'not readable (permission denied)' : `cannot be read (${code ?? 'error'})`}`);
  }
  if (st.isDirectory()) throw new UsageError(`${printable(path)}: a folder, not a log file`);
  if (!st.isFile()) throw new UsageError(`${printable(path)}: not a regular file`);
  // UTF-8 is at least one byte a character: a file over the cap in bytes may still fit, so read it
  // only if it is under four times the cap, then check the characters.
  if (st.size > 4 * MAX_RUN_LOG_CHARS) throw new UsageError(`${printable(path)}: too large (${st.size} bytes; at most ${MAX_RUN_LOG_CHARS} characters)`);
  try {
    return readFileSync(path, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new UsageError(`${printable(path)}: cannot be read (${code === 'EACCES' ? 'permission denied' : (code ?? 'error')})`);
  }
}

function main(): void {
  try {
    const opts = parseDiagnoseArgs(process.argv.slice(2));
    if (opts.help) {
      process.stdout.write(diagnoseHelp() + '\n');
      return;
    }
    const file = opts.file!;
    const r = readLog(readFile(file));
    if (!r.ok) throw new UsageError(`${printable(file)}: ${printable(r.error)}`);
    const alarms = diagnose(r.rows);
    if (opts.json) for (const a of alarms) process.stdout.write(alarmJson(a) + '\n');
    else process.stdout.write(report(file, r, alarms) + '\n');
  } catch (e) {
    if (e instanceof UsageError) {
      process.stderr.write(`error: ${e.message}\n`);
      process.exit(2);
    }
    throw e;
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) main();
