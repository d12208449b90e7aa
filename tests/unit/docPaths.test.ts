/**
 * The repository paths docs/METHODS.md and docs/ARCHITECTURE.md name exist: a file or folder moved
 * or renamed fails here until the docs follow. A path is one that starts with a top-level folder of
 * this repository (not preceded by another path segment: `verl/docs/...` is verl's); a `*` in it
 * must match something.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(__dirname, '../..');
const DOCS = ['docs/METHODS.md', 'docs/ARCHITECTURE.md'];
const TOP = ['kernels', 'workers', 'app', 'cli', 'bench', 'tests', 'docs', 'public'];

/** Every repository path a text names. */
function pathsIn(text: string): string[] {
  const re = new RegExp(`(?<![\\w/.-])(?:${TOP.join('|')})/[\\w./*-]*[\\w*]`, 'g');
  return [...new Set(text.match(re) ?? [])];
}

/** Whether `path` exists; a `*` segment matches any name in its folder. */
function exists(path: string): boolean {
  if (!path.includes('*')) return existsSync(join(ROOT, path));
  const walk = (dir: string, parts: string[]): boolean => {
    if (parts.length === 0) return true;
    const [head, ...rest] = parts;
    const re = new RegExp(`^${head!.replace(/[.]/g, '\\.').replace(/\*/g, '.*')}$`);
    const names = existsSync(dir) && statSync(dir).isDirectory() ? readdirSync(dir) : [];
    return names.some((n) => re.test(n) && walk(join(dir, n), rest));
  };
  return walk(ROOT, path.split('/'));
}

describe('paths the docs name exist', () => {
  it('finds paths, and leaves out another repository\'s', () => {
    expect(pathsIn('see `workers/core/plan.ts`, kernels/*.wgsl and verl `verl/docs/algo/dapo.md`.')).toEqual(['workers/core/plan.ts', 'kernels/*.wgsl']);
    expect(exists('kernels/*/ppoLoss.wgsl')).toBe(true);
    expect(exists('kernels/nothing/here.ts')).toBe(false);
  });
  for (const doc of DOCS) {
    it(doc, () => {
      const paths = pathsIn(readFileSync(join(ROOT, doc), 'utf8'));
      expect(paths.length).toBeGreaterThan(10);
      expect(paths.filter((p) => !exists(p))).toEqual([]);
    });
  }
});
