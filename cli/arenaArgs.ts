/** The flags of `npm run -s arena` (cli/arena.ts): a spec from a preset or text, then edits to it. */
import { ARENA_DIM_IDS, ARENA_PRESETS, arenaDimension, checkArenaSpec, parseArenaSpec, parseSeedsText, type ArenaDimId, type ArenaSpec } from '../workers/content/arena/dimensions';
import { flagsOf, UsageError } from './args';

export interface ArenaArgs {
  spec: ArenaSpec;
  jobs: number;
  json: boolean;
  /** Internal: one (cell, seed) run in a child process. */
  job: string | null;
  help: boolean;
}

export const ARENA_HELP =
  'npm run -s arena -- [--preset P | --spec TEXT] [--task T] [--levels dim=a,b ...] [--set key=value ...] [--seeds 1-8] [--iters N] [--jobs 2] [--json]\n' +
  `  --preset: one of ${ARENA_PRESETS.map((p) => p.id).join(', ')} (default clipping).\n` +
  '  --spec: the share link\'s arena= text (docs/ARENA.md), e.g. task=search;clip=token,cispo;set.epochs=4.\n' +
  `  --levels dim=a,b: the levels of one dimension (${ARENA_DIM_IDS.join(', ')}); repeat for others.\n` +
  `    correction (not one of ARLArena's four: the sampler/trainer mismatch): ${arenaDimension('correction').levels.map((l) => l.id).join(', ')}; default none.\n` +
  '  --set key=value: a config setting every cell gets (repeatable). --seeds: seeds and ranges. --iters: iterations per run.\n' +
  '  --jobs: runs in parallel, each a child process at nice 10. --json: JSON lines instead of a markdown table.\n';

export function parseArenaArgs(argv: readonly string[]): ArenaArgs {
  let spec: ArenaSpec = structuredClone(ARENA_PRESETS.find((p) => p.id === 'clipping')!.spec);
  let base: 'preset' | 'spec' | null = null;
  const edits: Array<(s: ArenaSpec) => void> = [];
  const out: Omit<ArenaArgs, 'spec'> = { jobs: 2, json: false, job: null, help: false };
  for (const { arg, flag, value } of flagsOf(argv)) {
    switch (flag) {
      case '--preset': {
        const id = value();
        const p = ARENA_PRESETS.find((x) => x.id === id);
        if (!p) throw new UsageError(`--preset ${id}: expected one of ${ARENA_PRESETS.map((x) => x.id).join(', ')}`);
        if (base) throw new UsageError('--preset: give one --preset or one --spec');
        base = 'preset';
        spec = structuredClone(p.spec);
        break;
      }
      case '--spec': {
        const text = value();
        if (base) throw new UsageError('--spec: give one --preset or one --spec');
        base = 'spec';
        try {
          spec = parseArenaSpec(text);
        } catch (e) {
          throw new UsageError(`--spec: ${(e as Error).message}`);
        }
        break;
      }
      case '--task': {
        const t = value();
        edits.push((s) => void (s.task = t));
        break;
      }
      case '--levels': {
        const kv = value();
        const eq = kv.indexOf('=');
        if (eq <= 0) throw new UsageError(`--levels ${kv}: expected dimension=level,level`);
        const dim = kv.slice(0, eq);
        try {
          arenaDimension(dim);
        } catch (e) {
          throw new UsageError(`--levels ${kv}: ${(e as Error).message}`);
        }
        const levels = kv.slice(eq + 1).split(',').filter((x) => x);
        edits.push((s) => void (s.levels[dim as ArenaDimId] = levels));
        break;
      }
      case '--set': {
        const kv = value();
        const eq = kv.indexOf('=');
        if (eq <= 0) throw new UsageError(`--set ${kv}: expected key=value`);
        edits.push((s) => void (s.set = { ...s.set, [kv.slice(0, eq)]: kv.slice(eq + 1) }));
        break;
      }
      case '--seeds': {
        const v = value();
        let seeds: number[];
        try {
          // The link's reader: counted against the arena's budget before a seed is expanded.
          seeds = parseSeedsText(v);
        } catch (e) {
          throw new UsageError(`--seeds: ${(e as Error).message.replace(/^arena: seeds: /, '')}`);
        }
        edits.push((s) => void (s.seeds = seeds));
        break;
      }
      case '--iters': {
        const v = value();
        if (!/^\d+$/.test(v)) throw new UsageError(`--iters ${v}: expected a whole number`);
        edits.push((s) => void (s.iters = Number(v)));
        break;
      }
      case '--jobs': {
        const v = value();
        if (!/^\d+$/.test(v) || Number(v) < 1 || Number(v) > 64) throw new UsageError(`--jobs ${v}: expected a whole number in 1..64`);
        out.jobs = Number(v);
        break;
      }
      case '--json':
        out.json = true;
        break;
      case '--job':
        out.job = value();
        break;
      case '--help':
      case '-h':
        out.help = true;
        break;
      default:
        throw new UsageError(`${arg}: unknown flag; expected --preset, --spec, --task, --levels, --set, --seeds, --iters, --jobs, --json or --help`);
    }
  }
  for (const e of edits) e(spec);
  if (!out.job && !out.help) {
    try {
      checkArenaSpec(spec);
    } catch (e) {
      throw new UsageError((e as Error).message);
    }
  }
  return { spec, ...out };
}
