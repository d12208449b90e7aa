import { describe, expect, it } from 'vitest';
import { ALL_KERNELS } from '../../kernels/all';
import { validateKernels } from '../../kernels/pipeline';
import { requireGpu, requireGpuHandle } from '../helpers/requireGpu';

describe('every kernel compiles on the adapter', () => {
  it('has an adapter and compiles all kernels without errors', async () => {
    const h = await requireGpuHandle();
    console.info(`[adapter] ${h.label} fallback=${h.isFallbackAdapter}`);
    await validateKernels(await requireGpu(), ALL_KERNELS);
    expect(ALL_KERNELS.map((k) => k.label)).toEqual(expect.arrayContaining(['embedProject', 'forwardHidden', 'forwardLogits', 'hiddenGrad', 'slotGrad', 'firstLayerGrad', 'chunkSum', 'gradNormSum', 'statsCombine']));
  });
});

/** Fields of the struct that binding 0 (`var<uniform> u: Name`) uses, parsed from the WGSL source. */
function uniformStructFields(source: string): Array<[string, string]> {
  const code = source.replace(/\/\/.*$/gm, '');
  const name = /var<uniform>\s+\w+\s*:\s*(\w+)\s*;/.exec(code)?.[1];
  if (!name) throw new Error('no var<uniform> binding');
  const body = new RegExp(`struct\\s+${name}\\s*\\{([^}]*)\\}`).exec(code)?.[1];
  if (body === undefined) throw new Error(`struct ${name} not found`);
  return body
    .split(',')
    .map((f) => f.trim())
    .filter((f) => f.length > 0)
    .map((f) => f.split(':').map((x) => x.trim()) as [string, string]);
}

describe('uniform mirrors', () => {
  for (const k of ALL_KERNELS) {
    it(`${k.label}: the TS uniform layout lists the WGSL struct's fields in order, 4 bytes each`, () => {
      const wgsl = uniformStructFields(k.source);
      expect(k.uniform.fields.map(([n, t]) => [n, t])).toEqual(wgsl);
      expect(k.uniform.size % 16).toBe(0);
      expect(k.uniform.size).toBeGreaterThanOrEqual(4 * wgsl.length);
      k.uniform.fields.forEach(([n], i) => expect(k.uniform.offsets[n]).toBe(4 * i));
    });
  }
});
