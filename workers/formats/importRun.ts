/**
 * "Import run…": a file's text as what the page shows. A playground run file (its format tag) is read
 * by parseRunFile, with its own named errors; anything else is tried as a real run's metric log
 * (runLog.ts: TRL, verl, a W&B CSV), whose rows become a run file holding the page's current config,
 * said as such in its notes. Pure: the page's store calls it, the tests too. Never throws.
 */
import type { RunConfig } from '../core/config';
import { LOG_FORMAT_NAMES, parseRunLog, type LogFramework, type RunLog } from './runLog';
import { createRunFile, parseRunFile, RUN_FILE_FORMAT, type RunFile, type RunFileProblem } from './runFile';

/** What the page says about an imported log (a run file has none of this). */
export interface ImportedLog {
  framework: LogFramework;
  /** The run and its format in words (`verl run, read from verl's console log (...)`). */
  what: string;
  /** The format alone (`verl's console log (step:N - key:value lines)`). */
  format: string;
  /** The playground metrics drawn, each with the log's key. */
  mapped: RunLog['mapped'];
  /** Values logged as NaN or infinite. */
  nonFinite: number;
  notes: string[];
}

export type ImportRead = { ok: true; run: RunFile; log: ImportedLog | null } | { ok: false; errors: RunFileProblem[] };

const FRAMEWORK_NAMES: Record<LogFramework, string> = { verl: 'verl', trl: 'TRL' };

/** The text names the playground's run format (JSON, key order aside): it is a run file, good or bad. */
function claimsRunFile(text: string): boolean {
  return new RegExp(`"format"\\s*:\\s*"${RUN_FILE_FORMAT.replace('/', '\\/')}"`).test(text.slice(0, 4096));
}

export function readImport(text: string, config: RunConfig, fileName: string, now: Date = new Date()): ImportRead {
  const asRun = parseRunFile(text);
  if (asRun.ok) return { ok: true, run: asRun.run, log: null };
  if (claimsRunFile(text)) return { ok: false, errors: asRun.errors };
  const asLog = parseRunLog(text);
  if (!asLog.ok) {
    // JSON-looking text may have been meant as a run file: say both what a run file and a log lack.
    const looksJson = /^\s*[[{]/.test(text);
    return { ok: false, errors: [...(looksJson ? asRun.errors.slice(0, 1) : []), { path: looksJson ? '(as a run log)' : '(file)', message: asLog.error }] };
  }
  const log = asLog.log;
  const what = `${FRAMEWORK_NAMES[log.framework]} run, read from ${LOG_FORMAT_NAMES[log.format]}`;
  const run = createRunFile({
    config,
    metrics: log.rows,
    notes: `Imported from "${fileName}", a ${what}. The metrics are the run's, mapped to the playground's names (${log.mapped.map((m) => `${m.metric} <- ${m.key}`).join(', ')}); the config is this page's, not the run's.`,
    backend: null,
    batch: null,
    createdAt: now,
  });
  return { ok: true, run, log: { framework: log.framework, what, format: LOG_FORMAT_NAMES[log.format], mapped: log.mapped, nonFinite: log.nonFinite.length, notes: log.notes } };
}
