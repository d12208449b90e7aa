/**
 * Two-level deterministic row reductions, for the gradient kernels that sum over the rows of a
 * minibatch (headGrad and slotGrad in model/mlpKernels.ts). No float atomics, so the result is the same bits
 * on every run:
 *
 *   pass 1 (the kernel's own WGSL): the rows are cut into `chunks` consecutive chunks of
 *          `rowsPerChunk` rows; each chunk's sum is formed in row order, one invocation per
 *          (chunk, output), into a scratch buffer `partials` [chunks, outputs];
 *   pass 2 (chunkSum.wgsl): one invocation per output adds the chunk partials in chunk order and
 *          writes (overwrites) the output range of its destination buffer.
 *
 * The chunking is a function of the row count and the output count only (rowChunks below), so a
 * given run shape always sums in the same order. A chunk is `minRowsPerChunk` rows (64 for the
 * matmul-like kernels), growing only once there would be more than REDUCE_MAX_CHUNKS chunks or the
 * scratch would pass REDUCE_MAX_SCRATCH_WORDS; that bounds both the scratch buffer and pass 2's
 * serial loop. The scratch buffer is the caller's (allocated once per run, sized with
 * `scratchWords`); the reductions of one update run one after another in one compute pass, so
 * they can share it.
 *
 * defineTwoPass is the same plumbing with a pass 2 of the kernel's own: the whole-array reductions
 * gradNorm (adam.ts) and stats (stats.ts) cut their input into fixed blocks, one workgroup each in
 * pass 1, and combine the block results in one workgroup in pass 2, in an order fixed by the sizes.
 */
import chunkSumWGSL from './chunkSum.wgsl?raw';
import { bindingBytes, defineKernel, uniformLayout, type BufferArg, type DefinedKernel, type KernelCall, type KernelPipeline } from './pipeline';

/** At most this many chunks (pass 2's serial loop); above 64 * 256 rows a chunk grows instead. */
export const REDUCE_MAX_CHUNKS = 256;
/** Scratch budget of one reduction, in 4-byte words (16 MiB): fewer chunks for very wide outputs. */
export const REDUCE_MAX_SCRATCH_WORDS = 1 << 22;

export interface ChunkLayout {
  rowsPerChunk: number;
  /** 0 when there are no rows: pass 1 does nothing and pass 2 writes zeros. */
  chunks: number;
}

/** How `numRows` rows are cut into chunks for a reduction with `outputs` outputs. */
export function rowChunks(numRows: number, outputs: number, minRowsPerChunk: number): ChunkLayout {
  if (!(Number.isInteger(numRows) && numRows >= 0)) throw new Error(`rowChunks: bad row count ${numRows}`);
  if (!(Number.isInteger(minRowsPerChunk) && minRowsPerChunk >= 1)) throw new Error(`rowChunks: bad chunk size ${minRowsPerChunk}`);
  const maxChunks = Math.max(1, Math.min(REDUCE_MAX_CHUNKS, Math.floor(REDUCE_MAX_SCRATCH_WORDS / Math.max(outputs, 1))));
  const rowsPerChunk = Math.max(minRowsPerChunk, Math.ceil(numRows / maxChunks));
  return { rowsPerChunk, chunks: Math.ceil(numRows / rowsPerChunk) };
}

export interface ChunkSumConfig {
  outputs: number;
  chunks: number;
  /** First word of the destination range in `grads`. */
  dstOff: number;
}

/** `struct ChunkSum` of chunkSum.wgsl. */
export const CHUNK_SUM_UNIFORM = uniformLayout('ChunkSum', [['outputs', 'u32'], ['chunks', 'u32'], ['dstOff', 'u32']] as const);

/** Pass 2: buffers partials [chunks, outputs] and grads (writes grads[dstOff .. dstOff + outputs)). */
export const chunkSumKernel = defineKernel({
  label: 'chunkSum',
  wgsl: chunkSumWGSL,
  workgroupSize: 64,
  bindings: ['partials', 'grads'],
  uniform: CHUNK_SUM_UNIFORM,
  values: (c: ChunkSumConfig) => ({ outputs: c.outputs, chunks: c.chunks, dstOff: c.dstOff }),
  workgroups: (c: ChunkSumConfig) => Math.ceil(c.outputs / 64),
});

/** The two dispatches of one reduction configuration (S: pass 2's configuration). */
export interface ReductionCall<C, S = ChunkSumConfig> {
  readonly label: string;
  readonly partial: KernelCall<C>;
  readonly combine: KernelCall<S>;
  /** Rewrites both uniforms (the next submit sees them). */
  update(c: C): void;
}

export interface Reduction<B, C, S = ChunkSumConfig> {
  readonly label: string;
  bind(buffers: B, config: C, label?: string): ReductionCall<C, S>;
  /** Pass 1 then pass 2, in the caller's compute pass: two dispatches (none for pass 1 without rows). */
  encode(pass: GPUComputePassEncoder, call: ReductionCall<C, S>): void;
  destroy(): void;
}

export interface DefinedReduction<B, C, S = ChunkSumConfig> {
  readonly label: string;
  /** The pipelines it dispatches (pass 1's, then pass 2's), for compilation checks. */
  readonly kernels: readonly [DefinedKernel<Record<string, BufferArg>, C>, DefinedKernel<Record<string, BufferArg>, S>];
  /** Words of `partials` one configuration needs. */
  scratchWords(c: C): number;
  /** Dispatches per encode. */
  readonly dispatches: 2;
  /** The pipelines a bind() with `config` compiles (pass 1's, then pass 2's), for compileKernels. */
  pipelines(config?: C): KernelPipeline[];
  create(device: GPUDevice): Reduction<B, C, S>;
}


/**
 * A two-pass reduction from its two kernels: pass 1 writes partial results into the scratch
 * buffer `partials` (`scratchWords(c)` words), pass 2 reads them and writes the outputs. Both
 * passes bind from one buffer set (each takes the names it declares); pass 2's configuration is
 * `combineConfig(c)`. gradNorm and stats (one workgroup combining the chunks) are built on this
 * directly; the row reductions through defineReduction below (chunkSum as pass 2).
 */
export function defineTwoPass<C, S, const B1 extends string, const B2 extends string>(spec: {
  label: string;
  partial: DefinedKernel<Record<B1, BufferArg>, C>;
  combine: DefinedKernel<Record<B2, BufferArg>, S>;
  combineConfig: (c: C) => S;
  scratchWords: (c: C) => number;
}): DefinedReduction<Record<B1 | B2 | 'partials', BufferArg>, C, S> {
  type B = Record<B1 | B2 | 'partials', BufferArg>;
  const { scratchWords } = spec;
  return {
    label: spec.label,
    kernels: [
      spec.partial as unknown as DefinedKernel<Record<string, BufferArg>, C>,
      spec.combine as unknown as DefinedKernel<Record<string, BufferArg>, S>,
    ],
    scratchWords,
    dispatches: 2,
    pipelines: (c?: C) => [...spec.partial.pipelines(c), ...spec.combine.pipelines(c === undefined ? undefined : spec.combineConfig(c))],
    create(device: GPUDevice): Reduction<B, C, S> {
      const partial = spec.partial.create(device);
      const combine = spec.combine.create(device);
      return {
        label: spec.label,
        bind(buffers, config, label = spec.label) {
          const need = 4 * scratchWords(config);
          if (!buffers.partials) throw new Error(`${label}: missing buffer "partials"`);
          const have = bindingBytes(buffers.partials);
          if (have < need) {
            throw new Error(`${label}: the partials buffer holds ${have} bytes, this configuration needs ${need} (scratchWords)`);
          }
          const p = partial.bind(buffers as unknown as Record<B1, BufferArg>, config, label);
          const s = combine.bind(buffers as unknown as Record<B2, BufferArg>, spec.combineConfig(config), `${label} ${spec.combine.label}`);
          return {
            label,
            partial: p,
            combine: s,
            update(c: C) {
              if (4 * scratchWords(c) > have) throw new Error(`${label}: the partials buffer is too small for this configuration`);
              p.update(c);
              s.update(spec.combineConfig(c));
            },
          };
        },
        encode(pass, call) {
          partial.encode(pass, call.partial);
          combine.encode(pass, call.combine);
        },
        destroy() {
          partial.destroy();
          combine.destroy();
        },
      };
    },
  };
}

/**
 * A row reduction from its pass-1 kernel (whose bindings include `partials`) and where its
 * outputs go: `layout(c)` gives pass 2's configuration (outputs, chunks, dstOff). The bound
 * buffers are pass 1's plus `grads`.
 */
export function defineReduction<C, const BN extends string>(spec: {
  label: string;
  partial: DefinedKernel<Record<BN, BufferArg>, C>;
  layout: (c: C) => ChunkSumConfig;
}): DefinedReduction<Record<BN | 'partials' | 'grads', BufferArg>, C> {
  return defineTwoPass({
    label: spec.label,
    partial: spec.partial,
    combine: chunkSumKernel,
    combineConfig: spec.layout,
    scratchWords: (c: C) => {
      const l = spec.layout(c);
      return l.chunks * l.outputs;
    },
  });
}
