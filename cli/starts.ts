/**
 * `npm run -s starts`: pretrains every start the page ships (workers/formats/shippedStarts.ts) and
 * writes workers/content/starts/starts.bin and its index, workers/content/starts/index.ts. The
 * starts are those of every lesson run with `init=pretrained`, on the lesson's seeds: what opening a
 * lesson trains first. `--check` writes nothing and exits 1 if the files are not what it would write
 * (run it after changing pretraining, a lesson's pretrained runs or the config's fields).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { RunConfig } from '../workers/core/config';
import { createEnv } from '../workers/core/envs';
import { resolvePlan } from '../workers/core/plan';
import { clearPretrainCache, pretrainKey } from '../workers/core/pretrain';
import { startParams } from '../workers/core/trainer';
import { LESSONS, lessonRunConfig, lessonSeeds } from '../workers/content/lessons';
import { writeShippedStarts, type ShippedStart } from '../workers/formats/shippedStarts';
import { flagsOf, UsageError } from './args';
import { exitWithError } from './printable';

export const STARTS_BIN = fileURLToPath(new URL('../workers/content/starts/starts.bin', import.meta.url));
export const STARTS_INDEX = fileURLToPath(new URL('../workers/content/starts/index.ts', import.meta.url));

/** Every lesson run's pretrained start on the lesson's seeds, one config per distinct key, in lesson order. */
export function lessonStartConfigs(): RunConfig[] {
  const byKey = new Map<string, RunConfig>();
  for (const lesson of LESSONS) {
    for (const run of lesson.runs) {
      for (const seed of lessonSeeds(lesson)) {
        const cfg = lessonRunConfig(run, seed);
        if (cfg.init.mode !== 'pretrained') continue;
        const key = pretrainKey(cfg);
        if (!byKey.has(key)) byKey.set(key, cfg);
      }
    }
  }
  return [...byKey.values()];
}

/** Pretrains `cfg`'s start here, from nothing cached, as a run of it would. */
export function pretrainHere(cfg: RunConfig) {
  clearPretrainCache();
  const env = createEnv(resolvePlan(cfg).envConfig);
  const { pretrain } = startParams(cfg, env);
  if (!pretrain) throw new Error(`the config of seed ${cfg.seed} has no pretrained start`);
  return pretrain;
}

/** The index module's text. */
export function indexText(index: readonly ShippedStart[]): string {
  return [
    '// Written by `npm run -s starts` (cli/starts.ts); do not edit. The starts in starts.bin: see',
    '// workers/formats/shippedStarts.ts.',
    "import type { ShippedStart } from '../../formats/shippedStarts';",
    '',
    `export const SHIPPED_STARTS: readonly ShippedStart[] = ${JSON.stringify(index, null, 2)};`,
    '',
  ].join('\n');
}

/** Both files' contents, pretrained now. */
export function buildStarts(): { bin: Uint8Array; index: string; count: number } {
  const starts = lessonStartConfigs().map((cfg) => {
    const p = pretrainHere(cfg);
    return { key: pretrainKey(cfg), params: p.params, demoLoss: p.demoLoss, demoSuccess: p.demoSuccess };
  });
  const { file, index } = writeShippedStarts(starts);
  return { bin: file, index: indexText(index), count: index.length };
}

function main(argv: readonly string[]): void {
  let check = false;
  for (const { flag, arg } of flagsOf(argv)) {
    if (flag === '--check') check = true;
    else if (flag === '--help' || flag === '-h') {
      process.stdout.write('Usage: npm run -s starts [-- --check]\n');
      return;
    } else throw new UsageError(`${arg}: unknown flag; expected --check or --help`);
  }
  const t0 = Date.now();
  const built = buildStarts();
  const seconds = ((Date.now() - t0) / 1000).toFixed(1);
  if (check) {
    const same = (path: string, want: Uint8Array | string) => {
      try {
        const have = readFileSync(path);
        return Buffer.compare(have, Buffer.from(want)) === 0;
      } catch {
        return false;
      }
    };
    if (!same(STARTS_BIN, built.bin) || !same(STARTS_INDEX, built.index)) {
      process.stderr.write(`error: the shipped starts are stale; run npm run -s starts\n`);
      process.exit(1);
    }
    process.stdout.write(`${built.count} shipped starts match pretraining here (${seconds} s)\n`);
    return;
  }
  writeFileSync(STARTS_BIN, built.bin);
  writeFileSync(STARTS_INDEX, built.index);
  process.stdout.write(`wrote ${built.count} starts (${built.bin.length} bytes) in ${seconds} s\n`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  try {
    main(process.argv.slice(2));
  } catch (e) {
    exitWithError(e);
  }
}
