/**
 * The GPU tests' device. A missing adapter FAILS the suite, never skips it: a
 * skipped kernel suite would let broken WGSL land. One device per test file. Each file compiles only
 * the kernels it runs: compiling all of them up front (what requestGpu did until 2026-12-01) took
 * ~8 s per file on SwiftShader, about half of the GPU suite. tests/gpu/compile.gpu.test.ts checks
 * every kernel's compilation; elsewhere a broken kernel fails its parity test, and its WebGPU error
 * is printed by the listener below.
 */
import { requestGpu, type GpuHandle } from '../../workers/core/gpuDevice';

let handle: Promise<GpuHandle> | null = null;

const HOW =
  'The GPU tests need a WebGPU adapter: they run in headless Chromium started with ' +
  '--enable-unsafe-webgpu (SwiftShader gives a CPU adapter where no GPU exists). Install Debian\'s ' +
  '`chromium` package or set CHROMIUM_PATH to a Chromium build with SwiftShader.';

export async function requireGpuHandle(): Promise<GpuHandle> {
  handle ??= requestGpu(globalThis.navigator?.gpu, {
    onLost: (info) => console.error(`GPU device lost: ${info.reason} ${info.message}`),
  })
    .then((h) => {
      h.device.addEventListener('uncapturederror', (e) => console.error(`WebGPU error outside an error scope: ${(e as GPUUncapturedErrorEvent).error.message}`));
      return h;
    })
    .catch((e: unknown) => {
    handle = null;
    const msg = (e as Error).message;
    throw new Error(/navigator\.gpu|adapter was found|adapter request/.test(msg) ? `${msg}\n${HOW}` : msg);
  });
  return handle;
}

export async function requireGpu(): Promise<GPUDevice> {
  return (await requireGpuHandle()).device;
}

/**
 * Fails (never skips) when the test device lacks `feature`: CI's Chromium gives SwiftShader, which
 * has subgroups, so the subgroup kernels are always tested there.
 */
export function requireFeature(device: GPUDevice, feature: GPUFeatureName): void {
  if (!device.features.has(feature)) {
    throw new Error(`this test needs a WebGPU device with the "${feature}" feature; the adapter here does not offer it (${HOW})`);
  }
}
