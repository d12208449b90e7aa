/**
 * Command-line parsing for `npm run -s train`. A bad flag, key or value throws UsageError with one
 * line naming it and saying what was expected; the CLI prints it and exits with status 2.
 */
import { allFields, ConfigError, defaultConfig, parseConfig, withFieldText, type RunConfig } from '../workers/core/config';
import { CPU_BACKEND_MAX_BYTES } from '../workers/core/cpuBackend';
import { methodDef, METHOD_IDS } from '../workers/core/methods';
import { describeSpec } from '../workers/core/methods/params';
import { parseNumberText } from '../workers/core/numberText';
import { decodeShareLink } from '../workers/content/shareLink';
import { describeProblem, MAX_LINK_STEP } from '../workers/formats/shareUrl';
import { checkOutFile, readInputFile } from './paths';
import { UsageError } from './usageError';

export { UsageError };

/** Largest --config file read: a config is a few kilobytes of JSON. */
export const MAX_CONFIG_BYTES = 1024 * 1024;

export interface CliOptions {
  config: RunConfig;
  iters: number;
  backend: 'cpu' | 'gpu';
  dumpBatch: { iter: number; file: string } | null;
  /** The CPU backend's memory budget in bytes (--cpu-memory); null: its default. */
  cpuMaxBytes: number | null;
  help: boolean;
}

export const DEFAULT_ITERS = 200;

/**
 * The command line as flags: `--flag value` or `--flag=value`. `value()` takes the flag's value (the
 * next argument, or what follows `=`) or throws a UsageError naming the flag.
 */
export function* flagsOf(argv: readonly string[]): Generator<{ arg: string; flag: string; value: () => string }> {
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const eq = arg.indexOf('=');
    const [flag, inline] = arg.startsWith('--') && eq > 0 ? [arg.slice(0, eq), arg.slice(eq + 1)] : [arg, undefined];
    yield {
      arg,
      flag,
      value: () => {
        const v = inline ?? argv[++i];
        if (v === undefined) throw new UsageError(`${flag}: expected a value after it`);
        return v;
      },
    };
  }
}

/** The flags as given: each checked on its own, nothing combined yet. */
interface Flags {
  file: string | null;
  url: string | null;
  itersGiven: boolean;
  sets: Array<[string, string]>;
  iters: number;
  backend: 'cpu' | 'gpu';
  dumpBatch: CliOptions['dumpBatch'];
  seed: string | null;
  cpuMaxBytes: number | null;
  help: boolean;
}

export function parseArgs(argv: string[]): CliOptions {
  const f = readFlags(argv);
  if (f.file !== null && f.url !== null) throw new UsageError('--url and --config: give one of them (a link holds a whole config)');
  let config = defaultConfig();
  let iters = f.iters;
  if (f.url !== null) {
    // A CLI must be exact: any problem in the link (even an unknown key the app would skip) refuses it.
    const link = decodeShareLink(f.url);
    const [first, ...rest] = link.errors;
    if (first) {
      const more = rest.length > 0 ? ` (and ${rest.length} more problem${rest.length > 1 ? 's' : ''})` : '';
      throw new UsageError(`--url: ${describeProblem(first)}${more}`);
    }
    config = link.config;
    if (link.step !== undefined && !f.itersGiven) iters = link.step;
  }
  try {
    if (f.file !== null) config = parseConfig(readConfigFile(f.file));
    // The task first, then methods (which methods are allowed depends on the task), then the rest.
    const rank = (k: string) => (k === 'task' ? 0 : k === 'methods' ? 1 : 2);
    for (const [k, v] of [...f.sets].sort((a, b) => rank(a[0]) - rank(b[0]))) config = withFieldText(config, k, v);
    if (f.seed !== null) config = withFieldText(config, 'seed', f.seed);
  } catch (e) {
    if (e instanceof ConfigError) throw new UsageError(`${e.key}: ${e.expected}`);
    throw e;
  }
  if (f.dumpBatch) checkDumpBatch(f.dumpBatch, iters);
  return { config, iters, backend: f.backend, dumpBatch: f.dumpBatch, cpuMaxBytes: f.cpuMaxBytes, help: f.help };
}

/** The JSON of a --config file; a file that cannot be read or parsed is refused by name. */
function readConfigFile(file: string): unknown {
  const text = readInputFile('--config', file, MAX_CONFIG_BYTES);
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new UsageError(`--config ${file}: not valid JSON (${(e as Error).message})`);
  }
}

function readFlags(argv: string[]): Flags {
  const f: Flags = { file: null, url: null, itersGiven: false, sets: [], iters: DEFAULT_ITERS, backend: 'cpu', dumpBatch: null, seed: null, cpuMaxBytes: null, help: false };
  for (const { arg, flag, value } of flagsOf(argv)) {
    switch (flag) {
      case '--help':
      case '-h':
        f.help = true;
        break;
      case '--config':
        f.file = value();
        break;
      case '--url':
        f.url = value();
        break;
      case '--set': {
        const kv = value();
        const k = kv.indexOf('=');
        if (k <= 0) throw new UsageError(`--set ${kv}: expected key=value`);
        f.sets.push([kv.slice(0, k), kv.slice(k + 1)]);
        break;
      }
      case '--iters': {
        const v = value();
        // Parsed and capped as a link's step=N is: one number syntax, one longest run.
        f.iters = parseNumberText(v);
        if (!Number.isInteger(f.iters) || f.iters < 0 || f.iters > MAX_LINK_STEP) throw new UsageError(`--iters ${v}: expected a non-negative integer, at most ${MAX_LINK_STEP}`);
        f.itersGiven = true;
        break;
      }
      case '--backend': {
        const v = value();
        if (v !== 'cpu' && v !== 'gpu') throw new UsageError(`--backend ${v}: expected gpu or cpu`);
        f.backend = v;
        break;
      }
      case '--seed':
        f.seed = value();
        break;
      case '--dump-batch': {
        const v = value();
        const m = /^(\d{1,7}):(.+)$/.exec(v);
        if (!m) throw new UsageError(`--dump-batch ${v}: expected ITER:FILE.json`);
        f.dumpBatch = { iter: Number(m[1]), file: m[2]! };
        break;
      }
      case '--cpu-memory': {
        const v = value();
        const gib = parseNumberText(v);
        if (!(gib > 0) || !Number.isFinite(gib)) throw new UsageError(`--cpu-memory ${v}: expected a positive number of GiB`);
        f.cpuMaxBytes = gib * 2 ** 30;
        break;
      }
      default:
        throw new UsageError(`${arg}: unknown flag; expected --config, --url, --set, --iters, --backend, --seed, --dump-batch, --cpu-memory or --help`);
    }
  }
  return f;
}

/** A batch dump that could not be written is refused before training, not after it. */
function checkDumpBatch(d: { iter: number; file: string }, iters: number): void {
  const flag = `--dump-batch ${d.iter}:${d.file}`;
  if (d.iter < 1 || d.iter > iters) throw new UsageError(`${flag}: the iteration must be in [1, ${iters}] (the run's --iters), or no batch would be written`);
  checkOutFile('--dump-batch', d.file, flag);
}

export function helpText(): string {
  const lines = [
    'Usage: npm run -s train -- [--config FILE.json | --url LINK] [--set key=value ...] [--iters N] [--backend gpu|cpu] [--seed S] [--dump-batch ITER:FILE.json] [--cpu-memory GIB]',
    '',
    'Prints one JSON object of metrics per iteration on stdout.',
    "  --url LINK       the playground's share link (or just its #hash) as the config; every key must be",
    '                   valid. step=N sets --iters N unless --iters is given; focus, hide and backend',
    '                   (the view) are ignored. --set and --seed apply on top.',
    `  --iters N        iterations to run (default ${DEFAULT_ITERS})`,
    '  --backend cpu    TypeScript reference kernels (default in Node)',
    '  --backend gpu    WebGPU through the optional `webgpu` package (Dawn), for machines with a real GPU',
    '  --dump-batch I:F write iteration I\'s full batch as JSON to F',
    `  --cpu-memory G   the CPU backend's memory budget in GiB (default ${CPU_BACKEND_MAX_BYTES / 2 ** 30}); a run that needs more is refused`,
    '',
    'Keys for --set (and for a --config JSON file, nested by the dots):',
    '  methods          comma-separated active methods (default grpo); exactly one advantage estimator (*)',
    '',
    'Method ids for `methods` (the names on the playground\'s cards):',
  ];
  for (const id of METHOD_IDS) {
    const def = methodDef(id);
    lines.push(`  ${id.padEnd(16)} ${def.name}${def.estimator ? ' (*)' : ''}: ${def.idea}`);
  }
  lines.push('', 'Other keys:');
  for (const [key, spec] of allFields()) lines.push(`  ${key.padEnd(16)} ${describeSpec(spec)}. ${spec.doc}`);
  return lines.join('\n');
}
