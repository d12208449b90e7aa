/**
 * Layers point down: nothing under kernels/ imports from workers/ or app/ (the engine and the UI
 * build on the kernels, never the other way), so the kernels and their CPU references can be read,
 * tested and bundled on their own.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(__dirname, '../..');
const KERNELS = join(ROOT, 'kernels');

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return /\.(ts|tsx|mts|js|mjs)$/.test(name) ? [path] : [];
  });
}

/** Every module specifier of a file: static imports and re-exports, dynamic imports, import.meta.glob. */
function specifiers(text: string): string[] {
  const found: string[] = [];
  for (const m of text.matchAll(/(?:\bfrom\s*|\bimport\s*\(?\s*|import\.meta\.glob\(\s*)['"]([^'"]+)['"]/g)) found.push(m[1]!);
  return found;
}

/** The repository folder a relative specifier of `file` lands in (its first path segment). */
function landsIn(file: string, spec: string): string | null {
  if (!spec.startsWith('.')) return null;
  return relative(ROOT, resolve(dirname(file), spec)).split(/[\\/]/)[0] ?? null;
}

describe('kernels/ imports nothing from workers/ or app/', () => {
  const files = sources(KERNELS);
  it('finds the kernel sources, in their family folders too', () => {
    expect(files.length).toBeGreaterThan(20);
    expect(files.some((f) => f.includes(join('kernels', 'model')))).toBe(true);
  });
  it('every relative import of every file stays out of workers/ and app/', () => {
    const upward = files.flatMap((f) =>
      specifiers(readFileSync(f, 'utf8'))
        .filter((s) => ['workers', 'app'].includes(landsIn(f, s) ?? ''))
        .map((s) => `${relative(ROOT, f)} imports ${s}`),
    );
    expect(upward).toEqual([]);
  });
  it('the check sees an import that climbs out, in each form', () => {
    const file = join(KERNELS, 'stats', 'stats.ts');
    const text = "import { x } from '../../workers/core/metrics';\nexport { y } from \"../../app/store\";\nconst z = import('../../workers/core/rng');";
    expect(specifiers(text).map((s) => landsIn(file, s))).toEqual(['workers', 'app', 'workers']);
    expect(landsIn(file, '../histograms')).toBe('kernels');
  });
});
