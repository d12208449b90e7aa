/**
 * The "why each method exists" tables of docs/METHODS_RESULTS.md, from the JSON that
 * `npm run -s why -- --method ID --json` prints, one file per method and seed set:
 *
 *   npm run -s why -- --method cm2 --seeds 1-8 --json --cache DIR > RESULTS/main-cm2.json     (every method)
 *   npm run -s why -- --method cm2 --seeds <held-out> --json --cache DIR > RESULTS/held-cm2.json
 *   npx tsx --import ./cli/registerRaw.mjs cli/whyTable.ts --dir RESULTS [--main main] [--held held] [--out docs/METHODS_RESULTS.md | -]
 *
 * It rewrites the section between `<!-- why:begin` and `<!-- why:end -->` (or appends one); a
 * method missing from a seed set shows "not run".
 */
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { statText, WHY_ROUNDS, whyCorrectionIds, whyIds, whyOf } from '../workers/content/why';
import { methodDef } from '../workers/core/methods';
import { flagsOf, UsageError } from './args';
import { checkOutFile, readInputFile } from './paths';
import { printable } from './printable';
import type { WhyRowResult } from './whySummary';

/** What `npm run -s why -- --json` prints (the fields read here). */
export interface WhyJson {
  method: string;
  found: boolean;
  seeds: number[];
  iters: number;
  disease: WhyRowResult;
  cure: WhyRowResult;
  crashes: Record<'healthy' | 'sick' | 'cure', number>;
}

const fmt = (x: number | null) => (x === null || !Number.isFinite(x) ? '—' : Math.abs(x) >= 100 ? x.toFixed(0) : Math.abs(x) >= 1 ? x.toFixed(2) : x.toFixed(3));
const signed = (x: number | null) => (x === null || !Number.isFinite(x) ? '—' : (x >= 0 ? '+' : '−') + fmt(Math.abs(x)));

function rowCell(r: WhyRowResult | undefined): string {
  if (!r) return 'not run';
  const ci = r.diff.lo === null ? '' : ` [${signed(r.diff.lo)}, ${signed(r.diff.hi)}]`;
  return `${fmt(r.b.mean)} → ${fmt(r.a.mean)}, ${signed(r.diff.mean)}${ci} ${r.holds ? '✓' : '✗'}`;
}

const verdictOf = (r: WhyRowResult | undefined) => (r ? (r.holds ? '✓' : '✗') : '·');

/**
 * The tables of one group of regimes: the paper methods (the default) or the rollout corrections
 * (`whyCorrectionIds()`, noun 'rollout corrections'), each its own section of the document.
 */
export function whyTables(main: Record<string, WhyJson>, held: Record<string, WhyJson>, ids: readonly string[] = whyIds(), noun = 'paper methods'): string {
  const lines: string[] = [];
  const anyMain = Object.values(main)[0];
  // Each method's held-out seeds are its round's, read from its results where it has them.
  type Round = keyof typeof WHY_ROUNDS;
  const heldOf = (round: Round) => {
    const j = ids.filter((id) => (whyOf(id)!.round ?? 1) === round).map((id) => held[id]).find((x) => x);
    return j ? j.seeds : [...WHY_ROUNDS[round].heldOut];
  };
  const seedsText = (xs: readonly number[]) => (xs.length ? xs.join(', ') : '(not run)');
  // Every round WHY_ROUNDS has, so a new round needs no edit here.
  const rounds = (Object.keys(WHY_ROUNDS).map(Number) as Round[]).filter((k) => ids.some((id) => (whyOf(id)!.round ?? 1) === k));
  const roundName: Record<number, string> = { 1: 'one', 2: 'two', 3: 'three', 4: 'four', 5: 'five', 6: 'six' };
  lines.push(
    `Seeds 1-8 (${anyMain ? `${anyMain.seeds.length} seeds` : 'not run'}) and the held-out seeds of each method's round: ${rounds.map((k) => `round ${roundName[k] ?? k} ${seedsText(heldOf(k))}`).join('; ')}. ` +
      'Each cell: the mean over seeds of the first run → the second, the mean paired difference (second − first, seed by seed) with its 95 % interval (Student\'s t), and the verdict: ✓ when the difference is past the committed margin on the predicted side and the interval excludes 0 there, ✗ otherwise.',
    '',
    '**Summary.** "Shown" when all four rows hold: the disease and the cure, on seeds 1-8 and on the held-out seeds.',
    '',
    '| method | baseline | round | disease and cure found on the dev seeds | disease, seeds 1-8 | disease, held-out | cure, seeds 1-8 | cure, held-out | shown |',
    '|---|---|---|---|---|---|---|---|---|',
  );
  let shown = 0;
  for (const id of ids) {
    const r = whyOf(id)!;
    const m = main[id];
    const h = held[id];
    const all = !!m && !!h && m.disease.holds && m.cure.holds && h.disease.holds && h.cure.holds;
    if (all) shown++;
    lines.push(`| ${methodDef(id).name} (${id}) | ${r.baseline === 'ppo' ? 'PPO' : 'GRPO'} | ${r.round ?? 1} | ${r.found ? 'yes' : 'no'} | ${verdictOf(m?.disease)} | ${verdictOf(h?.disease)} | ${verdictOf(m?.cure)} | ${verdictOf(h?.cure)} | ${all ? '**yes**' : 'no'} |`);
  }
  lines.push('', `Shown on both seed sets: **${shown} of ${ids.length}** ${noun}.`, '');
  lines.push(
    '**The regimes** (workers/content/why.ts; every run is the baseline\'s or the method\'s config on the CPU backend, the budget in iterations).',
    '',
    '| method | regime | budget | pathology (diseased vs healthy) | cure (method vs diseased) |',
    '|---|---|---|---|---|',
  );
  for (const id of ids) {
    const r = whyOf(id)!;
    const row = (x: typeof r.disease) => `${statText(x.label, x.stat)}, ${x.dir > 0 ? '≥ +' : '≤ −'}${x.margin}`;
    const knobs = (set: Readonly<Record<string, string>>) => Object.entries(set).map(([k, v]) => `${k}=${v}`).join(' ') || '(shared knobs only)';
    lines.push(`| ${id} | ${r.regime} (healthy: \`${knobs(r.healthy)}\`; diseased: \`${knobs(r.sick)}\`; method: \`${knobs(r.cure)}\`) | ${r.iters} | ${row(r.disease)} | ${row(r.cureRow)} |`);
  }
  lines.push('');
  for (const [title, which] of [
    ['Disease rows: the paper\'s baseline, healthy → diseased, on the pathology metric', 'disease'],
    ['Cure rows: the diseased baseline → the method in the same regime, on the outcome its paper claims', 'cure'],
  ] as const) {
    lines.push(`**${title}.**`, '', '| method | metric | committed | seeds 1-8 | held-out |', '|---|---|---|---|---|');
    for (const id of ids) {
      const r = whyOf(id)!;
      const spec = which === 'disease' ? r.disease : r.cureRow;
      const row = main[id]?.[which] ?? held[id]?.[which];
      const metric = row ? row.label : spec.label;
      const margin = `${spec.dir > 0 ? '≥ +' : '≤ −'}${spec.margin}`;
      lines.push(`| ${id} | ${metric} | ${margin} | ${rowCell(main[id]?.[which])} | ${rowCell(held[id]?.[which])} |`);
    }
    lines.push('');
  }
  lines.push('**Crashes** (the arena\'s rule, docs/ARENA.md), runs crashed of those run: healthy baseline / diseased baseline / method.', '', '| method | seeds 1-8 | held-out |', '|---|---|---|');
  const crashText = (j: WhyJson | undefined) => (j ? `${j.crashes.healthy} / ${j.crashes.sick} / ${j.crashes.cure} of ${j.seeds.length}` : 'not run');
  for (const id of ids) lines.push(`| ${id} | ${crashText(main[id])} | ${crashText(held[id])} |`);
  lines.push('', ...notShown(main, held, ids));
  return lines.join('\n');
}

/**
 * The methods not shown: which of the four rows did not hold, and what the regime's entry says: for a
 * method with no disease found on the development seeds, what was tried and what the toy lacks; for
 * the others, its caveat where it has one.
 */
export function notShown(main: Record<string, WhyJson>, held: Record<string, WhyJson>, ids: readonly string[] = whyIds()): string[] {
  const lines = ['**The methods not shown**, each with the rows that did not hold and what its entry in workers/content/why.ts (or whyCorrections.ts) says.', ''];
  const caveats: string[] = [];
  for (const id of ids) {
    const r = whyOf(id)!;
    const rows = [
      ['disease, seeds 1-8', main[id]?.disease],
      ['disease, held-out', held[id]?.disease],
      ['cure, seeds 1-8', main[id]?.cure],
      ['cure, held-out', held[id]?.cure],
    ] as const;
    const failed = rows.filter(([, x]) => !x || !x.holds);
    if (failed.length === 0) {
      if (r.note) caveats.push(`- **${methodDef(id).name}** (${id}): ${r.note}`);
      continue;
    }
    const spec = (name: string) => (name.startsWith('disease') ? r.disease : r.cureRow);
    const why = failed
      .map(([name, x]) => {
        const s = spec(name);
        return x ? `${name} ${signed(x.diff.mean)}${x.diff.lo === null ? '' : ` [${signed(x.diff.lo)}, ${signed(x.diff.hi)}]`} against ${s.dir > 0 ? '≥ +' : '≤ −'}${s.margin}` : `${name} not run`;
      })
      .join('; ');
    const said = r.found
      ? `The development seeds showed the disease and the cure; ${failed.length === 1 ? 'this row' : 'these rows'} did not hold on the seeds that test them.${r.note ? ` ${r.note}` : ''}`
      : `No disease and cure were found on the development seeds; this is the closest attempt. ${r.tried ?? ''}`;
    lines.push(`- **${methodDef(id).name}** (${id}): ${why}. ${said}`);
  }
  if (caveats.length) lines.push('', '**Caveats of the methods shown**, from their entries.', '', ...caveats);
  return lines;
}

/** Rewrites the section between `<!-- NAME:begin ...` and `<!-- NAME:end -->` (NAME why or whycorr), or appends one. */
export function writeWhySection(file: string, body: string, name = 'why'): void {
  let text = existsSync(file) ? readFileSync(file, 'utf8') : '';
  const BEGIN = `<!-- ${name}:begin (generated by cli/whyTable.ts; edits inside are overwritten) -->`;
  const END = `<!-- ${name}:end -->`;
  const block = `${BEGIN}\n${body}\n${END}`;
  const a = text.indexOf(`<!-- ${name}:begin`);
  const b = text.indexOf(END);
  text = a >= 0 && b > a ? text.slice(0, a) + block + text.slice(b + END.length) : `${text.trimEnd()}\n\n${block}\n`;
  writeFileSync(file, text);
}

function load(dir: string, tag: string): Record<string, WhyJson> {
  const out: Record<string, WhyJson> = {};
  for (const id of [...whyIds(), ...whyCorrectionIds()]) {
    const f = join(dir, `${tag}-${id}.json`);
    if (!existsSync(f)) continue;
    // A result is a few KiB; the cap stops a device or a stray huge file.
    const text = readInputFile('--dir', f, 1024 * 1024);
    if (!text.trim()) continue;
    try {
      out[id] = JSON.parse(text) as WhyJson;
    } catch (e) {
      throw new UsageError(`--dir ${f}: not the JSON of npm run -s why -- --json (${(e as Error).message})`);
    }
  }
  return out;
}

function main(): void {
  const a = { dir: '', main: 'main', held: 'held', out: 'docs/METHODS_RESULTS.md' };
  for (const { arg, flag, value } of flagsOf(process.argv.slice(2))) {
    if (flag === '--dir') a.dir = value();
    else if (flag === '--main') a.main = value();
    else if (flag === '--held') a.held = value();
    else if (flag === '--out') a.out = value();
    else throw new UsageError(`${arg}: unknown flag (flags: --dir RESULTS --main TAG --held TAG --out FILE|-)`);
  }
  if (!a.dir) throw new UsageError('--dir: expected the folder of `npm run -s why -- --json` results');
  if (!existsSync(a.dir) || !statSync(a.dir).isDirectory()) throw new UsageError(`--dir ${a.dir}: not a folder`);
  if (a.out !== '-') checkOutFile('--out', a.out);
  const main = load(a.dir, a.main);
  const held = load(a.dir, a.held);
  const body = whyTables(main, held);
  const corrections = whyTables(main, held, whyCorrectionIds(), 'rollout corrections');
  if (a.out === '-') process.stdout.write(body + '\n\n' + corrections + '\n');
  else {
    writeWhySection(a.out, body);
    writeWhySection(a.out, corrections, 'whycorr');
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  try {
    main();
  } catch (e) {
    process.stderr.write(`error: ${printable((e as Error).message)}\n`);
    process.exit(e instanceof UsageError ? 2 : 1);
  }
}
