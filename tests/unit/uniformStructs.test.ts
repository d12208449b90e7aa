/**
 * Each kernel's uniform struct is written once, as a TypeScript field table (kernels/pipeline.ts
 * uniformLayout): the WGSL declaration is generated from it and joined in front of the kernel's
 * file, and no WGSL file declares a uniform struct of its own. The byte layout (4-byte scalars in
 * order, the size a multiple of 16) is the table's.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ALL_KERNELS } from '../../kernels/all';
import { uniformLayout } from '../../kernels/pipeline';

const ROOT = resolve(__dirname, '../..');

function wgslFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return wgslFiles(path);
    return name.endsWith('.wgsl') ? [path] : [];
  });
}

const count = (text: string, needle: string) => text.split(needle).length - 1;

describe('uniform structs come from their layouts', () => {
  it('a layout writes its WGSL struct field by field', () => {
    const u = uniformLayout('Example', [['n', 'u32'], ['scale', 'f32'], ['offset', 'i32']] as const);
    expect(u.wgsl).toBe('struct Example {\n  n: u32,\n  scale: f32,\n  offset: i32,\n}\n');
    expect([u.size, u.offsets.offset]).toEqual([16, 8]);
  });

  for (const k of ALL_KERNELS) {
    it(`${k.label}: its source declares its uniform struct ${k.uniform.struct} once, as the layout writes it`, () => {
      expect(count(k.source, `struct ${k.uniform.struct} {`)).toBe(1);
      expect(k.source).toContain(k.uniform.wgsl);
      expect(k.source).toMatch(new RegExp(`var<uniform>\\s+\\w+\\s*:\\s*${k.uniform.struct}\\s*;`));
      expect(k.uniform.size % 16).toBe(0);
      k.uniform.fields.forEach(([n], i) => expect(k.uniform.offsets[n]).toBe(4 * i));
    });
  }

  it('no WGSL file under kernels/ declares a kernel uniform struct', () => {
    const structs = new Set(ALL_KERNELS.map((k) => k.uniform.struct));
    const declared = wgslFiles(join(ROOT, 'kernels')).flatMap((f) =>
      [...readFileSync(f, 'utf8').matchAll(/^\s*struct\s+(\w+)/gm)].filter((m) => structs.has(m[1]!)).map((m) => `${relative(ROOT, f)}: ${m[1]}`),
    );
    expect(structs.size).toBeGreaterThan(20);
    expect(declared).toEqual([]);
  });
});
