/**
 * Getting a WebGPU device the engine can use, in a page, a worker or Node (Dawn's `webgpu` package
 * passes its own GPU object). Every failure is an Error that names what is missing, so the UI can
 * tell the user why it falls back to the CPU. No kernel is compiled here: a backend compiles the
 * pipelines it binds, all at once and with their compilation messages checked, when it is made
 * (workers/core/gpuBackend.ts openGpuBackend), so a broken shader fails there and not later as silent
 * zeros.
 */
import { subgroupFeatures } from '../../kernels/selectors';

export interface GpuHandle {
  device: GPUDevice;
  adapter: GPUAdapter;
  /** "vendor architecture description" of the adapter, e.g. "google swiftshader". */
  label: string;
  /** A software adapter (SwiftShader): the GPU path works but is slower than the CPU one. */
  isFallbackAdapter: boolean;
}

export interface RequestGpuOptions {
  powerPreference?: GPUPowerPreference;
  /** Called once if the device is lost (not for an intentional destroy()). */
  onLost?: (info: GPUDeviceLostInfo) => void;
}

function defaultGpu(): GPU | undefined {
  return (globalThis.navigator as Navigator | undefined)?.gpu;
}

export function adapterLabel(adapter: GPUAdapter): string {
  const info = adapter.info;
  const parts = [info?.vendor, info?.architecture, info?.description, info?.device].filter((s): s is string => !!s);
  return [...new Set(parts)].join(' ') || 'WebGPU adapter';
}

export async function requestGpu(gpu: GPU | undefined = defaultGpu(), opts: RequestGpuOptions = {}): Promise<GpuHandle> {
  if (!gpu) throw new Error('WebGPU is not available here: navigator.gpu is missing');
  let adapter: GPUAdapter | null;
  try {
    adapter = await gpu.requestAdapter(opts.powerPreference ? { powerPreference: opts.powerPreference } : undefined);
  } catch (e) {
    throw new Error(`WebGPU adapter request failed: ${(e as Error).message}`);
  }
  if (!adapter) throw new Error('WebGPU is present but no adapter was found (requestAdapter returned null)');
  const label = adapterLabel(adapter);
  // `isFallbackAdapter` moved from GPUAdapter to GPUAdapterInfo; read whichever this browser has.
  const isFallbackAdapter = Boolean(
    (adapter.info as GPUAdapterInfo & { isFallbackAdapter?: boolean })?.isFallbackAdapter ??
      (adapter as GPUAdapter & { isFallbackAdapter?: boolean }).isFallbackAdapter,
  );
  let device: GPUDevice;
  try {
    // Large batches need large per-row buffers: ask for what the adapter allows, not the defaults.
    // Subgroups where the adapter has them: the per-row softmax kernels use them (kernels/softmax/rowSubgroup.ts).
    device = await adapter.requestDevice({
      label: `playground on ${label}`,
      requiredFeatures: subgroupFeatures(gpu, adapter),
      requiredLimits: {
        maxStorageBufferBindingSize: adapter.limits.maxStorageBufferBindingSize,
        maxBufferSize: adapter.limits.maxBufferSize,
      },
    });
  } catch (e) {
    throw new Error(`WebGPU device request failed on ${label}: ${(e as Error).message}`);
  }
  void device.lost.then((info) => {
    if (info.reason !== 'destroyed') opts.onLost?.(info);
  });
  return { device, adapter, label, isFallbackAdapter };
}
