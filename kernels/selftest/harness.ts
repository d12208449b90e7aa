/**
 * The kernel self-test's harness: what a case is, how its GPU output is compared with the CPU
 * reference, and the small buffer helpers the cases share. DOM-free, so the same cases run in the
 * `?selftest` page, in the GPU test suite and anywhere else a GPUDevice exists.
 *
 * Error measures, per compared element i (a = GPU value, e = reference value):
 *   abs_i = |a_i - e_i|
 *   rel_i = abs_i / max(|e_i|, floor),   floor = atol / rtol  (1 for exact checks)
 *   pass  <=> abs_i <= atol + rtol |e_i| for every i   (the tfjs / tests/helpers/expectClose rule)
 * The floor is where the tolerance's absolute and relative terms are equal: below it the absolute
 * term decides, and dividing by a near-zero |e_i| would report a huge "relative error" for an
 * error the tolerance accepts. With this floor a passing check has max rel < 2 rtol, and
 * max rel <= rtol always passes. Identical values (NaN against NaN included) have error 0; a NaN or
 * an infinity against a finite value has infinite error.
 */
import type { DefinedKernel, KernelCall } from '../pipeline';
import { BufferUsage, MapMode } from '../pipeline';
import type { ReductionCall } from '../reduce';
import type { StagedCall } from '../stages';

/** How close the GPU must come to the reference, and why that much (shown to the user). */
export interface Tolerance {
  atol: number;
  rtol: number;
  /** One sentence: where the allowed error comes from. */
  why: string;
}

/** atol = rtol = 0: token ids, counts and flags must match exactly. */
export const exact = (why: string): Tolerance => ({ atol: 0, rtol: 0, why });

/** One output of a case compared with its reference. */
export interface Check {
  /** The output's name ("h, z", "dx"); empty when the case has one output. */
  output: string;
  actual: ArrayLike<number>;
  expected: ArrayLike<number>;
  tol: Tolerance;
}

/** What the runner needs of a defined kernel (any DefinedKernel fits): its name and WGSL. */
export type AnyKernel = Pick<DefinedKernel<unknown, unknown>, 'label' | 'source' | 'workgroupSize' | 'requires'>;

/**
 * One self-test case: seeded inputs, the kernel run on the device, the CPU reference, and the
 * outputs to compare. `run` must be deterministic (fixed seeds, no Math.random).
 */
export interface SelfTestCase {
  /** The kernel under test; its label names the table row. */
  kernel: AnyKernel;
  /** Other kernels the case dispatches (gradNorm before adam); compiled and checked first too. */
  uses?: readonly AnyKernel[];
  /** Short description of the inputs: "rows 65", "logits ±1e4". */
  name: string;
  run(device: GPUDevice): Promise<Check[]>;
}

export interface Errors {
  /** Elements compared. */
  n: number;
  maxAbs: number;
  maxRel: number;
  /** Largest abs_i / (atol + rtol |e_i|): at most 1 when the check passes (Infinity: exact miss). */
  worst: number;
  /** Elements outside the tolerance, and the first of them (-1 if none). */
  bad: number;
  firstBad: number;
}

/** The comparison described in the header. Throws if the lengths differ. */
export function measure(actual: ArrayLike<number>, expected: ArrayLike<number>, tol: Pick<Tolerance, 'atol' | 'rtol'>): Errors {
  if (actual.length !== expected.length) throw new Error(`got ${actual.length} values, expected ${expected.length}`);
  const floor = tol.rtol > 0 ? tol.atol / tol.rtol : 1;
  let maxAbs = 0;
  let maxRel = 0;
  let worst = 0;
  let bad = 0;
  let firstBad = -1;
  for (let i = 0; i < actual.length; i++) {
    const a = actual[i]!;
    const e = expected[i]!;
    if (a === e || (Number.isNaN(a) && Number.isNaN(e))) continue;
    const err = Math.abs(a - e);
    const ok = err <= tol.atol + tol.rtol * Math.abs(e); // false for a NaN error
    if (!Number.isFinite(err)) {
      maxAbs = maxRel = worst = Infinity;
    } else {
      maxAbs = Math.max(maxAbs, err);
      const d = Math.max(Math.abs(e), floor);
      maxRel = Math.max(maxRel, d > 0 ? err / d : Infinity);
      const allowed = tol.atol + tol.rtol * Math.abs(e);
      worst = Math.max(worst, allowed > 0 ? err / allowed : Infinity);
    }
    if (!ok) {
      bad++;
      if (firstBad < 0) firstBad = i;
    }
  }
  return { n: actual.length, maxAbs, maxRel, worst, bad, firstBad };
}

/** Several outputs with one tolerance compared as one: their values end to end. */
export function joined(...parts: ArrayLike<number>[]): Float64Array {
  const out = new Float64Array(parts.reduce((s, p) => s + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** Sizes that break tail guards and multi-workgroup paths. */
export function edgeSizes(workgroupSize: number, large: number): number[] {
  return [1, workgroupSize - 1, workgroupSize, workgroupSize + 1, 123, large];
}

// PLUMBING: buffers for one case, one compute pass, readback.

const STORAGE = BufferUsage.STORAGE | BufferUsage.COPY_SRC | BufferUsage.COPY_DST;

/** The buffers and kernel instances one case makes; `destroy()` frees them all. */
export class Scratch {
  private readonly buffers: GPUBuffer[] = [];
  private readonly owners: Array<{ destroy(): void }> = [];
  constructor(readonly device: GPUDevice) {}

  /** The kernel on this device, destroyed with the scratch. */
  kernel<K extends { destroy(): void }>(k: K): K {
    this.owners.push(k);
    return k;
  }

  upload(data: Float32Array | Uint32Array | Int32Array, label = 'selftest input'): GPUBuffer {
    const b = this.device.createBuffer({ label, size: Math.max(16, data.byteLength), usage: STORAGE });
    this.device.queue.writeBuffer(b, 0, data.buffer, data.byteOffset, data.byteLength);
    this.buffers.push(b);
    return b;
  }

  /** `words` 4-byte words filled with NaN bits, so an output the kernel never writes shows. */
  empty(words: number, label = 'selftest output'): GPUBuffer {
    return this.upload(new Uint32Array(Math.max(words, 1)).fill(0x7fc00000), label);
  }

  async read(b: GPUBuffer, words: number): Promise<ArrayBuffer> {
    const staging = this.device.createBuffer({
      label: 'selftest readback',
      size: Math.max(16, 4 * words),
      usage: BufferUsage.MAP_READ | BufferUsage.COPY_DST,
    });
    this.buffers.push(staging);
    const enc = this.device.createCommandEncoder({ label: 'selftest readback' });
    enc.copyBufferToBuffer(b, 0, staging, 0, 4 * words);
    this.device.queue.submit([enc.finish()]);
    await staging.mapAsync(MapMode.READ);
    const out = staging.getMappedRange().slice(0, 4 * words);
    staging.unmap();
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
    for (const k of this.owners.splice(0)) k.destroy();
  }
}

type Encodable = { encode(pass: GPUComputePassEncoder, call: never): void };

/**
 * Encodes the calls, in order, into one compute pass and submits it. A call is a kernel's (one
 * dispatch), a two-pass reduction's (kernels/reduce.ts) or a staged operation's (kernels/stages.ts), with
 * the object that made it.
 */
export function dispatch(device: GPUDevice, items: Array<[Encodable, KernelCall<never> | ReductionCall<never, never> | StagedCall<never>]>): void {
  const enc = device.createCommandEncoder({ label: 'selftest' });
  const pass = enc.beginComputePass({ label: 'selftest' });
  for (const [kernel, call] of items) kernel.encode(pass, call as never);
  pass.end();
  device.queue.submit([enc.finish()]);
}

/** Runs `fn` with a fresh Scratch that is destroyed afterwards, whatever happens. */
export async function withScratch<T>(device: GPUDevice, fn: (s: Scratch) => Promise<T>): Promise<T> {
  const s = new Scratch(device);
  try {
    return await fn(s);
  } finally {
    s.destroy();
  }
}
