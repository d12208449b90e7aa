/**
 * A counting view of a GPUDevice: submits, compute passes and dispatches
 * (through wrapped encoders and passes), mapAsync readbacks and their bytes, writeBuffer uploads,
 * and buffers / pipelines / bind groups created. The backend is built on the returned proxy, so it
 * counts real trainer iterations without changing them. GPU objects themselves are never proxied
 * (WebGPU checks their brand when they are passed back); readback buffers get an own mapAsync.
 */
import type { GpuCounts } from './types';

const MAP_READ = 0x1;

export function zeroCounts(): GpuCounts {
  return {
    submits: 0, passes: 0, dispatches: 0, readbacks: 0, readbackBytes: 0, writeBuffers: 0, uploadBytes: 0,
    buffersCreated: 0, pipelinesCreated: 0, bindGroupsCreated: 0,
  };
}

export function diffCounts(a: GpuCounts, b: GpuCounts): GpuCounts {
  const out = zeroCounts();
  for (const k of Object.keys(out) as Array<keyof GpuCounts>) out[k] = b[k] - a[k];
  return out;
}

export function addCounts(into: GpuCounts, d: GpuCounts): void {
  for (const k of Object.keys(into) as Array<keyof GpuCounts>) into[k] += d[k];
}

export function scaleCounts(c: GpuCounts, s: number): GpuCounts {
  const out = zeroCounts();
  for (const k of Object.keys(out) as Array<keyof GpuCounts>) out[k] = c[k] * s;
  return out;
}

/** Methods bound to the real object; `wrap` replaces some by name. */
function view<T extends object>(target: T, wrap: Record<string, unknown>): T {
  return new Proxy(target, {
    get(t, key) {
      if (typeof key === 'string' && key in wrap) return wrap[key];
      const v = Reflect.get(t, key, t) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(t) : v;
    },
  });
}

function bytesOf(data: BufferSource | ArrayLike<number>, dataOffset = 0, size?: number): number {
  if (ArrayBuffer.isView(data)) {
    const bpe = (data as unknown as { BYTES_PER_ELEMENT?: number }).BYTES_PER_ELEMENT ?? 1;
    return size !== undefined ? size * bpe : data.byteLength - dataOffset * bpe;
  }
  if (data instanceof ArrayBuffer) return size ?? data.byteLength - dataOffset;
  return 0;
}

export interface CountingDevice {
  device: GPUDevice;
  counts: GpuCounts;
  snapshot(): GpuCounts;
}

export function countingDevice(real: GPUDevice): CountingDevice {
  const c = zeroCounts();
  const wrapPass = (pass: GPUComputePassEncoder) =>
    view(pass, {
      dispatchWorkgroups: (x: number, y?: number, z?: number) => {
        c.dispatches++;
        pass.dispatchWorkgroups(x, y, z);
      },
      dispatchWorkgroupsIndirect: (b: GPUBuffer, off: number) => {
        c.dispatches++;
        pass.dispatchWorkgroupsIndirect(b, off);
      },
    });
  const wrapEncoder = (enc: GPUCommandEncoder) =>
    view(enc, {
      beginComputePass: (d?: GPUComputePassDescriptor) => {
        c.passes++;
        return wrapPass(enc.beginComputePass(d));
      },
    });
  const queue = view(real.queue, {
    submit: (cbs: Iterable<GPUCommandBuffer>) => {
      c.submits++;
      real.queue.submit(cbs);
    },
    writeBuffer: (b: GPUBuffer, off: number, data: BufferSource, dataOffset?: number, size?: number) => {
      c.writeBuffers++;
      c.uploadBytes += bytesOf(data, dataOffset, size);
      real.queue.writeBuffer(b, off, data as ArrayBuffer, dataOffset, size);
    },
  });
  const device = view(real, {
    queue,
    createCommandEncoder: (d?: GPUCommandEncoderDescriptor) => wrapEncoder(real.createCommandEncoder(d)),
    createBuffer: (d: GPUBufferDescriptor) => {
      c.buffersCreated++;
      const b = real.createBuffer(d);
      if (d.usage & MAP_READ) {
        const orig = b.mapAsync.bind(b);
        Object.defineProperty(b, 'mapAsync', {
          configurable: true,
          value: (mode: number, offset?: number, size?: number) => {
            c.readbacks++;
            c.readbackBytes += size ?? b.size - (offset ?? 0);
            return orig(mode, offset, size);
          },
        });
      }
      return b;
    },
    createComputePipeline: (d: GPUComputePipelineDescriptor) => {
      c.pipelinesCreated++;
      return real.createComputePipeline(d);
    },
    createComputePipelineAsync: (d: GPUComputePipelineDescriptor) => {
      c.pipelinesCreated++;
      return real.createComputePipelineAsync(d);
    },
    createBindGroup: (d: GPUBindGroupDescriptor) => {
      c.bindGroupsCreated++;
      return real.createBindGroup(d);
    },
  });
  return { device, counts: c, snapshot: () => ({ ...c }) };
}
