/**
 * Text for a terminal from untrusted parts (a decoded --url, a file name, a flag as typed): control
 * characters are escaped, so a value cannot forge a second `error:` line, move the cursor or clear
 * the screen. Every CLI echoes what it was given through `printable`, and ends on an error through
 * `exitWithError`: one escaped line, exit 2 for a bad input, 1 for a run that failed.
 */
import { UsageError } from './usageError';

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g;

export function printable(text: string): string {
  return text.replace(CONTROL, (c) => {
    const code = c.charCodeAt(0);
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}

/** The one line a CLI prints for an error. */
export function errorLine(message: string): string {
  return `error: ${printable(message)}\n`;
}

/**
 * The end of a CLI on an error: one line on stderr (the stack only with DEBUG set, for a bug
 * report), then exit 2 for a UsageError (a bad flag, value, path or file) and 1 otherwise.
 */
export function exitWithError(e: unknown): never {
  if (process.env.DEBUG) process.stderr.write(`${String((e as Error)?.stack ?? e).split('\n').map(printable).join('\n')}\n`);
  process.stderr.write(errorLine(e instanceof Error ? e.message : String(e)));
  process.exit(e instanceof UsageError ? 2 : 1);
}
