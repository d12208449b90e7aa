import { describe, expect, it } from 'vitest';
import { ALL_KERNELS } from '../../kernels/all';
import { getPipeline, kernelSource, compileKernels } from '../../kernels/pipeline';
import { requestGpu } from '../../workers/core/gpuDevice';
import { requireGpu, requireGpuHandle } from '../helpers/requireGpu';

describe('every kernel compiles on the adapter', () => {
  it('has an adapter and compiles all kernels without errors', async () => {
    const h = await requireGpuHandle();
    console.info(`[adapter] ${h.label} fallback=${h.isFallbackAdapter}`);
    await compileKernels(await requireGpu(), ALL_KERNELS);
    expect(ALL_KERNELS.map((k) => k.label)).toEqual(expect.arrayContaining(['embedProject', 'forwardHidden', 'forwardLogits', 'hiddenGrad', 'slotGrad', 'firstLayerGrad', 'chunkSum', 'gradNormSum', 'statsCombine']));
  });
});

/** A kernel joined as defineKernel joins one, so that error lines map back to its own source. */
function joined(label: string, wgsl: string) {
  return { label, source: kernelSource(label, wgsl), workgroupSize: 64 };
}

const GOOD = `@group(0) @binding(0) var<storage, read_write> out: array<f32>;
@compute @workgroup_size(workgroupSize) fn main(@builtin(global_invocation_id) id: vec3u) {
  out[id.x] = 1.0;
}
override workgroupSize: u32 = 64;`;

describe('compileKernels: every failing kernel named at once, the others compiled and cached', () => {
  it('names a WGSL error by file and line, a type error, and a pipeline error; good kernels are cached for getPipeline', async () => {
    // A device of its own: the kernels compiled here must not be in another test's cache.
    const { device } = await requestGpu(globalThis.navigator?.gpu);
    const uncaptured: string[] = [];
    device.addEventListener('uncapturederror', (e) => uncaptured.push((e as GPUUncapturedErrorEvent).error.message));
    const good = joined('goodKernel', GOOD);
    const syntax = joined('syntaxKernel', GOOD.replace('out[id.x] = 1.0;', 'out[id.x] = 1.0'));
    const typed = joined('typeKernel', `${GOOD}\nfn broken() -> u32 { return 1.5; }`);
    const noMain = joined('noMainKernel', GOOD.replace('fn main(', 'fn notMain('));
    const err = await compileKernels(device, [good, syntax, typed, noMain]).then(
      () => null,
      (e: Error) => e,
    );
    expect(err?.message).toMatch(/^WebGPU kernels failed to compile:\n/);
    const lines = err!.message.split('\n').slice(1);
    // The missing ';' is found at the next token, on line 4.
    expect(lines).toContainEqual(expect.stringMatching(/^syntaxKernel\.wgsl:4:\d+: expected ';'/));
    expect(lines).toContainEqual(expect.stringMatching(/^typeKernel\.wgsl:6:29: cannot convert/));
    // One error a module: its pipeline, invalid because the module is, is not reported again.
    expect(lines.filter((l) => /^(syntax|type)Kernel: pipeline validation error/.test(l))).toHaveLength(2);
    expect(lines).toContainEqual(expect.stringMatching(/^noMainKernel: pipeline validation error: /));
    expect(lines.filter((l) => l.includes('goodKernel'))).toEqual([]);
    // The kernels come in the order given, whatever order their compilations finish in.
    const firstOf = (label: string) => lines.findIndex((l) => l.startsWith(label));
    expect(firstOf('syntaxKernel')).toBeLessThan(firstOf('typeKernel'));
    expect(firstOf('typeKernel')).toBeLessThan(firstOf('noMainKernel'));
    // The good kernel's pipeline is the one getPipeline hands out, and a second check compiles nothing.
    const cached = getPipeline(device, good);
    await compileKernels(device, [good]);
    expect(getPipeline(device, good)).toBe(cached);
    await device.queue.onSubmittedWorkDone();
    expect(uncaptured).toEqual([]);
    device.destroy();
  });
});

/**
 * Every WGSL file under kernels/ is in some kernel that ALL_KERNELS compiles (above) and whose
 * parity tests run: the shared pieces (common.wgsl, rowSoftmax.wgsl, rowSubgroup.wgsl,
 * rowUnrolled.wgsl, subgroupLanes.wgsl, and the thread versions of the row kernels, whose uniform
 * and bindings their other versions share) are tested through the kernels that join them, the files of several entry points through each of
 * their passes, and no file is left that nothing compiles.
 */
describe('shared WGSL pieces', () => {
  const files = import.meta.glob('../../kernels/**/*.wgsl', { query: '?raw', import: 'default', eager: true }) as Record<string, string>;
  const pieces = ['subgroupLanes', 'rowUnrolled'];
  it('the glob sees the kernel folder, shared pieces included', () => {
    const names = Object.keys(files).map((p) => p.replace(/^.*\/(\w+)\.wgsl$/, '$1'));
    expect(names).toEqual(expect.arrayContaining([...pieces, 'common', 'rowSoftmax', 'rowSubgroup']));
  });
  for (const [path, text] of Object.entries(files)) {
    const name = path.replace(/^.*\//, '');
    it(`${name} is part of a compiled kernel`, () => {
      const users = ALL_KERNELS.filter((k) => k.source.includes(text.trim()));
      expect(users.map((k) => k.label), `${name} is joined into no kernel of ALL_KERNELS`).not.toEqual([]);
    });
  }
});
