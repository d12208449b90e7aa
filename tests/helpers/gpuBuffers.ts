/** Small buffer helpers for the GPU kernel tests: upload, empty, run one pass, read back. */
import type { KernelCall } from '../../kernels/pipeline';
import type { ReductionCall } from '../../kernels/reduce';
import type { StagedCall } from '../../kernels/stages';

const USAGE = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;

export class GpuScratch {
  private readonly buffers: GPUBuffer[] = [];
  constructor(readonly device: GPUDevice) {}

  upload(data: Float32Array | Uint32Array | Int32Array, label = 'test input'): GPUBuffer {
    const b = this.device.createBuffer({ label, size: Math.max(16, data.byteLength), usage: USAGE });
    this.device.queue.writeBuffer(b, 0, data);
    this.buffers.push(b);
    return b;
  }

  /** A buffer of `words` 4-byte words, filled with NaN bits so unwritten outputs show. */
  empty(words: number, label = 'test output'): GPUBuffer {
    return this.upload(new Uint32Array(Math.max(words, 1)).fill(0x7fc00000), label);
  }

  async read(b: GPUBuffer, words: number): Promise<ArrayBuffer> {
    const staging = this.device.createBuffer({ size: Math.max(16, 4 * words), usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
    const enc = this.device.createCommandEncoder();
    enc.copyBufferToBuffer(b, 0, staging, 0, 4 * words);
    this.device.queue.submit([enc.finish()]);
    await staging.mapAsync(GPUMapMode.READ);
    const out = staging.getMappedRange().slice(0, 4 * words);
    staging.unmap();
    staging.destroy();
    return out;
  }

  async readF32(b: GPUBuffer, words: number): Promise<Float32Array> {
    return new Float32Array(await this.read(b, words));
  }

  async readU32(b: GPUBuffer, words: number): Promise<Uint32Array> {
    return new Uint32Array(await this.read(b, words));
  }

  destroy(): void {
    for (const b of this.buffers.splice(0)) b.destroy();
  }
}

/**
 * Encodes the calls into one compute pass and submits it. A call is a kernel's (one dispatch) or a
 * two-pass reduction's (kernels/reduce.ts, two dispatches); each goes with the object that made it.
 */
export function runCalls(
  device: GPUDevice,
  items: Array<[{ encode(pass: GPUComputePassEncoder, call: never): void }, KernelCall<never> | ReductionCall<never, never> | StagedCall<never>]>,
): void {
  const enc = device.createCommandEncoder();
  const pass = enc.beginComputePass();
  for (const [kernel, call] of items) kernel.encode(pass, call as never);
  pass.end();
  device.queue.submit([enc.finish()]);
}

/** Runs `fn` inside a validation error scope and fails on any validation error. */
export async function withValidation<T>(device: GPUDevice, fn: () => Promise<T>): Promise<T> {
  device.pushErrorScope('validation');
  let out: T;
  try {
    out = await fn();
  } finally {
    const err = await device.popErrorScope();
    if (err) throw new Error(`WebGPU validation error: ${err.message}`);
  }
  return out;
}
