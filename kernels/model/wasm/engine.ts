/**
 * The one WebAssembly module of the CPU backend (the backward pass's loops), compiled
 * once per worker, and its memory, which the calls share one after another (a call copies its
 * arrays in, runs, copies its results out) and which grows to the largest call so far.
 *
 * Null where the engine has no WebAssembly, no SIMD, or refuses to compile (a Content-Security-
 * Policy without 'wasm-unsafe-eval'), and for a call that would need more than MAX_BYTES, so that
 * a worker's memory does not stay at a large run's size: the caller then runs the TypeScript
 * loops, the same bits.
 */
import { wasmModule } from './asm';
import { BACKWARD_FUNCTIONS, type BackwardExports } from './backwardKernels';

/** The most memory the module may take: larger calls run in TypeScript. */
const MAX_BYTES = 256 * 2 ** 20;
const PAGE = 65536;

interface Engine {
  fns: BackwardExports;
  memory: WebAssembly.Memory;
}

let engine: Engine | null | undefined;

/** The module's bytes (about 5 KB). */
function cpuModuleBytes(): Uint8Array<ArrayBuffer> {
  return wasmModule(BACKWARD_FUNCTIONS.map((f) => f()));
}

function loadEngine(): Engine | null {
  if (engine !== undefined) return engine;
  engine = null;
  try {
    if (typeof WebAssembly !== 'object') return null;
    const bytes = cpuModuleBytes();
    if (!WebAssembly.validate(bytes)) return null;
    const memory = new WebAssembly.Memory({ initial: 16 });
    const instance = new WebAssembly.Instance(new WebAssembly.Module(bytes), { env: { memory } });
    engine = { fns: instance.exports as unknown as Engine['fns'], memory };
  } catch {
    // A page's main thread may refuse to compile synchronously, a policy may refuse it anywhere.
    engine = null;
  }
  return engine;
}

/** Whether the CPU backend's loops run as WebAssembly here. */
export function wasmAvailable(): boolean {
  return loadEngine() !== null;
}

/**
 * The engine with at least `bytes` of memory, or null (run the TypeScript loops): also where the
 * memory cannot grow that far (the browser refuses the allocation), so a call never fails for it.
 */
export function engineFor(bytes: number): Engine | null {
  if (bytes > MAX_BYTES) return null;
  const e = loadEngine();
  if (!e || e.memory.buffer.byteLength >= bytes) return e;
  try {
    e.memory.grow(Math.ceil((bytes - e.memory.buffer.byteLength) / PAGE));
    return e;
  } catch {
    return null;
  }
}
