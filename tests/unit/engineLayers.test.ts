/**
 * The engine's folders stack without cycles: workers/core (config, plan, trainer, backends), then
 * workers/formats (share link, run file, batch dump, recipe), workers/content (lessons, presets,
 * arena) and workers/entry (the worker) above it, in some order with no folder importing back
 * into one that imports it, not even for a type. Inside workers/ no file reaches itself through
 * value imports (a module evaluated before the one it needs sees `undefined`). kernels/ imports
 * nothing outside kernels/.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(__dirname, '../..');
const FOLDERS = ['core', 'formats', 'content', 'entry'] as const;

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return /\.(ts|tsx)$/.test(name) ? [path] : [];
  });
}

interface ImportOf {
  spec: string;
  /** Only types cross it (`import type`, `export type`, or every name marked `type`). */
  typeOnly: boolean;
}

/** The module specifiers of a source: static imports and re-exports, side-effect and dynamic imports. */
function importsOf(text: string): ImportOf[] {
  const out: ImportOf[] = [];
  for (const m of text.matchAll(/^\s*(?:import|export)\s+(type\s+)?([^;'"]*?)\s*from\s*['"]([^'"]+)['"]/gm)) {
    const names = /^\{([\s\S]*)\}$/.exec(m[2]!.trim())?.[1]?.split(',').map((s) => s.trim()).filter((s) => s.length > 0);
    const typeOnly = m[1] !== undefined || (names !== undefined && names.length > 0 && names.every((n) => n.startsWith('type ')));
    out.push({ spec: m[3]!, typeOnly });
  }
  for (const m of text.matchAll(/^\s*import\s*['"]([^'"]+)['"]/gm)) out.push({ spec: m[1]!, typeOnly: false });
  for (const m of text.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g)) out.push({ spec: m[1]!, typeOnly: false });
  return out;
}

/** The repository file a relative specifier of `file` names, or null (a package, a missing file). */
function target(file: string, spec: string): string | null {
  if (!spec.startsWith('.')) return null;
  const base = resolve(dirname(file), spec.replace(/\?raw$/, ''));
  for (const candidate of [base, `${base}.ts`, `${base}.tsx`, join(base, 'index.ts')]) {
    if (existsSync(candidate) && statSync(candidate).isFile()) return candidate;
  }
  return null;
}

interface Edge {
  from: string;
  to: string;
  typeOnly: boolean;
}

function edgesOf(files: string[]): Edge[] {
  return files.flatMap((f) =>
    importsOf(readFileSync(f, 'utf8')).flatMap(({ spec, typeOnly }) => {
      const to = target(f, spec);
      return to ? [{ from: relative(ROOT, f), to: relative(ROOT, to), typeOnly }] : [];
    }),
  );
}

/** The strongly connected components with more than one node (Tarjan), each a cycle's members. */
function cycles(nodes: readonly string[], next: (n: string) => readonly string[]): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string) => {
    index.set(v, counter);
    low.set(v, counter++);
    stack.push(v);
    onStack.add(v);
    for (const w of next(v)) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const part: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        part.push(w);
      } while (w !== v);
      if (part.length > 1) out.push(part.sort());
    }
  };
  for (const n of nodes) if (!index.has(n)) visit(n);
  return out;
}

const adjacency = (edges: Edge[]) => {
  const map = new Map<string, string[]>();
  for (const e of edges) map.set(e.from, [...(map.get(e.from) ?? []), e.to]);
  return (n: string) => map.get(n) ?? [];
};

const folderOf = (path: string) => path.split('/')[1]!;

describe('workers/ folders and files import without cycles', () => {
  const files = sources(join(ROOT, 'workers'));
  const edges = edgesOf(files);

  it('finds the engine sources in each of its folders', () => {
    for (const folder of FOLDERS) expect(files.some((f) => relative(ROOT, f).startsWith(`workers/${folder}/`))).toBe(true);
    expect(edges.length).toBeGreaterThan(100);
  });

  it('no cycle between the folders, type imports included', () => {
    const across = edges.filter((e) => folderOf(e.from) !== folderOf(e.to));
    const folderEdges = across.map((e) => ({ ...e, from: folderOf(e.from), to: folderOf(e.to) }));
    const found = cycles(FOLDERS, adjacency(folderEdges));
    // Each folder pair inside a cycle, with one import that makes it.
    const pairs = new Map<string, string>();
    for (const c of found) {
      for (const e of across) if (c.includes(folderOf(e.from)) && c.includes(folderOf(e.to))) pairs.set(`${folderOf(e.from)} -> ${folderOf(e.to)}`, `${e.from} -> ${e.to}`);
    }
    expect([...pairs].map(([pair, first]) => `${pair} (e.g. ${first})`)).toEqual([]);
  });

  it('no value import cycle between files', () => {
    const values = edges.filter((e) => !e.typeOnly);
    expect(cycles(files.map((f) => relative(ROOT, f)), adjacency(values))).toEqual([]);
  });

  it('the checks see a type-only import, a mixed one and a cycle', () => {
    const text = "import type { A } from './a';\nimport { type B, c } from './b';\nexport { type D, type E } from './d';\nimport {\n  type F,\n} from './f';";
    expect(importsOf(text)).toEqual([
      { spec: './a', typeOnly: true },
      { spec: './b', typeOnly: false },
      { spec: './d', typeOnly: true },
      { spec: './f', typeOnly: true },
    ]);
    const graph: Record<string, string[]> = { a: ['b'], b: ['c'], c: ['a'], d: ['a'] };
    expect(cycles(['a', 'b', 'c', 'd'], (n) => graph[n] ?? [])).toEqual([['a', 'b', 'c']]);
  });
});

describe('kernels/ imports nothing outside kernels/', () => {
  it('every relative import of every kernel source stays in kernels/', () => {
    const kernels = join(ROOT, 'kernels');
    const files = sources(kernels);
    expect(files.length).toBeGreaterThan(20);
    const leaving = files.flatMap((f) =>
      importsOf(readFileSync(f, 'utf8'))
        .filter(({ spec }) => spec.startsWith('.') && relative(kernels, resolve(dirname(f), spec)).startsWith('..'))
        .map(({ spec }) => `${relative(ROOT, f)} imports ${spec}`),
    );
    expect(leaving).toEqual([]);
  });
});
