/**
 * The page without the engine: app/ imports values from workers/ only through workers/meta.ts (types
 * from anywhere), and what meta.ts imports, followed to the end, is descriptions and pure helpers: no
 * task simulator, trainer, backend, recipe generator or kernel but two tables of constants. The
 * trainer runs in the worker, which app/trainerClient.ts starts from its URL, never by importing it;
 * so does the worker that reads an imported file (app/runFileClient.ts).
 * The ?selftest page (app/SelfTestPage.tsx, a chunk of its own) runs the kernels on the user's GPU in
 * the page on purpose, and is left out.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(__dirname, '../..');
const META = 'workers/meta.ts';
/** The ?selftest page: its own entry and chunk, which imports the kernels by design. */
const SELFTEST = 'app/SelfTestPage.tsx';

/**
 * What meta.ts may reach: the config and its field table, the method entries and the plan they
 * compose (to validate a method set, say why two conflict and which settings a method overrides),
 * the tasks' knobs, the metrics and the alarm rules over them, the lessons, presets, the methods'
 * disease regimes (content/why.ts) and arena as data (the arena's seed ranges with it), the formats the page reads and writes (the share link
 * with the content it names, run files and metric logs, the batch dump), the backend choices (a
 * list of names in the file of the backend interface, whose other imports are types), three kernel
 * tables of constants (the advantage defaults, the histogram ranges, the sampler's settings), and the explainer: it
 * rederives a batch's numbers from the dump in plain TypeScript, with no kernel or trainer behind
 * it, so the page runs it on the main thread (its worker half, labDump.ts, is not allowed).
 */
const ALLOWED = [
  /^workers\/meta\.ts$/,
  /^workers\/core\/config\.ts$/,
  /^workers\/core\/methods\/[a-z0-9]+\.ts$/i,
  /^workers\/core\/plan\.ts$/,
  /^workers\/core\/numberText\.ts$/,
  /^workers\/core\/origins\.ts$/,
  /^workers\/core\/metrics\.ts$/,
  /^workers\/core\/alarmRules\.ts$/,
  /^workers\/core\/seedRanges\.ts$/,
  /^workers\/core\/backend\.ts$/,
  /^workers\/core\/envs\/knobs\.ts$/,
  /^workers\/content\/(lessons|presets|shareLink|why|whyCorrections)\.ts$/,
  /^workers\/content\/arena\/(dimensions|crash)\.ts$/,
  /^workers\/formats\/(shareUrl|explainLinkNames|runFile|runLog|importRun|batchDump|frameworkNames)\.ts$/,
  /^workers\/formats\/recipe\/limits\.ts$/,
  /^workers\/explain\/(index|context|advantage|loss|other|stages|stageDump|types)\.ts$/,
  /^kernels\/advantage\/options\.ts$/,
  /^kernels\/stats\/histograms\.ts$/,
  /^kernels\/softmax\/samplerOptions\.ts$/,
];

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return /\.(ts|tsx)$/.test(name) ? [path] : [];
  });
}

/**
 * The module specifiers a file loads at run time: static imports and re-exports that bring a value
 * (not `import type`, `export type`, or braces of `type` names only), and dynamic imports.
 */
export function valueSpecifiers(text: string): string[] {
  const found: string[] = [];
  const statics = /(?:^|\n)\s*(import|export)\s+(type\s+)?([^'";]*?)\s*from\s*['"]([^'"]+)['"]/g;
  for (const m of text.matchAll(statics)) {
    if (m[2]) continue;
    const names = /\{([^}]*)\}/.exec(m[3]!)?.[1];
    const onlyTypes = names !== undefined && !/^[^{]*,|^\s*\w+\s*,/.test(m[3]!.replace(/\{[^}]*\}/, '{}')) && names.split(',').every((n) => n.trim() === '' || /^type\s/.test(n.trim()));
    if (onlyTypes) continue;
    found.push(m[4]!);
  }
  for (const m of text.matchAll(/(?:^|\n)\s*import\s*['"]([^'"]+)['"]/g)) found.push(m[1]!);
  for (const m of text.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g)) found.push(m[1]!);
  return found;
}

/** The repository file a relative specifier of `file` resolves to (`.ts`, `.tsx`, `/index.ts`), or null. */
function resolveFile(file: string, spec: string): string | null {
  if (!spec.startsWith('.')) return null;
  const base = resolve(dirname(file), spec.replace(/\?.*$/, ''));
  for (const p of [base, `${base}.ts`, `${base}.tsx`, join(base, 'index.ts')]) if (existsSync(p) && statSync(p).isFile()) return p;
  return null;
}

const rel = (p: string) => relative(ROOT, p).split(/[\\/]/).join('/');

/** Every repository file `entry` loads at run time, itself included; the self-test page is not followed. */
function closure(entry: string): Set<string> {
  const seen = new Set<string>();
  const todo = [resolve(ROOT, entry)];
  while (todo.length > 0) {
    const f = todo.pop()!;
    if (seen.has(rel(f)) || rel(f) === SELFTEST) continue;
    seen.add(rel(f));
    if (!/\.(ts|tsx)$/.test(f)) continue;
    for (const s of valueSpecifiers(readFileSync(f, 'utf8'))) {
      const to = resolveFile(f, s);
      if (to) todo.push(to);
    }
  }
  return seen;
}

describe('the page imports engine values only through workers/meta.ts', () => {
  const files = sources(join(ROOT, 'app')).filter((f) => rel(f) !== SELFTEST);

  it('finds the page’s sources', () => {
    expect(files.length).toBeGreaterThan(60);
  });

  it('no file under app/ imports a value from workers/ but meta.ts', () => {
    const wrong = files.flatMap((f) =>
      valueSpecifiers(readFileSync(f, 'utf8'))
        .map((s) => resolveFile(f, s))
        .filter((to): to is string => to !== null && rel(to).startsWith('workers/') && rel(to) !== META)
        .map((to) => `${rel(f)} imports ${rel(to)}`),
    );
    expect(wrong).toEqual([]);
  });

  it('nothing under app/ but the self-test page reaches a kernel, a task simulator or the trainer', () => {
    const reached = new Set(files.flatMap((f) => [...closure(rel(f))]));
    const engine = [...reached].filter((p) => p.startsWith('workers/') || p.startsWith('kernels/'));
    expect(engine.filter((p) => !ALLOWED.some((a) => a.test(p)))).toEqual([]);
  });

  it('meta.ts reaches only descriptions and pure helpers', () => {
    const reached = [...closure(META)].filter((p) => p.startsWith('workers/') || p.startsWith('kernels/'));
    expect(reached.length).toBeGreaterThan(10);
    expect(reached.filter((p) => !ALLOWED.some((a) => a.test(p)))).toEqual([]);
  });

  it('the check sees a value import in each form, and lets types through', () => {
    const text = [
      "import { withField, type RunConfig } from '../workers/core/config';",
      "import type { MetricRow } from '../workers/core/metrics';",
      "import { type Plan } from '../workers/core/plan';",
      "export { createEnv } from '../workers/core/envs';",
      "export type { TaskEnv } from '../workers/core/envs/types';",
      "const t = import('../workers/core/trainer');",
      "import '../workers/core/rng';",
    ].join('\n');
    expect(valueSpecifiers(text)).toEqual(['../workers/core/config', '../workers/core/envs', '../workers/core/rng', '../workers/core/trainer']);
    // And a module that is not allowed is named.
    expect(ALLOWED.some((a) => a.test('workers/core/envs/search.ts'))).toBe(false);
    expect(ALLOWED.some((a) => a.test('workers/core/trainer.ts'))).toBe(false);
  });
});
