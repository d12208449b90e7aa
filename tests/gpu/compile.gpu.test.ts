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

/**
 * Every WGSL file under kernels/ is in some kernel that ALL_KERNELS compiles (above) and whose
 * parity tests run: the shared pieces (common.wgsl, the *Io.wgsl uniforms and bindings a kernel's
 * thread and subgroup versions share, rowSoftmax.wgsl, rowSubgroup.wgsl, subgroupLanes.wgsl,
 * firstLayerGradTerms.wgsl, criticUniform.wgsl, whitenMoments.wgsl, statsChunk.wgsl) are tested
 * through the kernels that join them, and no file is left that nothing compiles.
 */
describe('shared WGSL pieces', () => {
  const files = import.meta.glob('../../kernels/*.wgsl', { query: '?raw', import: 'default', eager: true }) as Record<string, string>;
  const pieces = ['sampleIo', 'tokenStatsIo', 'logitGradIo', 'firstLayerGradIo', 'firstLayerGradTerms', 'subgroupLanes', 'criticUniform', 'whitenMoments'];
  it('the glob sees the kernel folder, shared pieces included', () => {
    const names = Object.keys(files).map((p) => p.replace(/^.*\/(\w+)\.wgsl$/, '$1'));
    expect(names).toEqual(expect.arrayContaining([...pieces, 'common', 'rowSoftmax', 'rowSubgroup', 'statsChunk']));
  });
  for (const [path, text] of Object.entries(files)) {
    const name = path.replace(/^.*\//, '');
    it(`${name} is part of a compiled kernel`, () => {
      const users = ALL_KERNELS.filter((k) => k.source.includes(text.trim()));
      expect(users.map((k) => k.label), `${name} is joined into no kernel of ALL_KERNELS`).not.toEqual([]);
    });
  }
});
