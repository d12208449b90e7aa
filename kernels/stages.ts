/**
 * An operation made of kernels dispatched one after another with one configuration, such as the
 * forward pass (hidden units, then logits; kernels/model/mlpKernels.ts). It has the interface of a single
 * kernel: bind() binds every stage to the buffers it names out of one set, encode() dispatches
 * the stages in order in the caller's compute pass, so call sites need not know it is several.
 */
import { bindingBytes, type BufferArg, type DefinedKernel, type Kernel, type KernelCall, type KernelPipeline } from './pipeline';

export interface StagedCall<C> {
  readonly label: string;
  readonly stages: readonly KernelCall<C>[];
  /** Rewrites every stage's uniform (the next submit sees them). */
  update(c: C): void;
}

export interface Staged<B, C> {
  readonly label: string;
  bind(buffers: B, config: C, label?: string): StagedCall<C>;
  encode(pass: GPUComputePassEncoder, call: StagedCall<C>): void;
  destroy(): void;
}

export interface DefinedStages<B, C> {
  readonly label: string;
  /** The pipelines it dispatches, in order, for compilation checks and the self-test. */
  readonly kernels: readonly DefinedKernel<Record<string, BufferArg>, C>[];
  /** Dispatches per encode. */
  readonly dispatches: number;
  /** The pipelines a bind() with `config` compiles, in order, for compileKernels. */
  pipelines(config?: C): KernelPipeline[];
  create(device: GPUDevice): Staged<B, C>;
}

/** `B` is the union of the stages' buffers (each stage reads the names it binds). */
export function defineStages<B extends Record<string, BufferArg>, C>(
  label: string,
  stages: readonly DefinedKernel<never, C>[],
): DefinedStages<B, C> {
  const kernels = stages as unknown as readonly DefinedKernel<Record<string, BufferArg>, C>[];
  return {
    label,
    kernels,
    dispatches: stages.length,
    pipelines: (config?: C) => kernels.flatMap((k) => k.pipelines(config)),
    create(device) {
      const made = kernels.map((k) => k.create(device)) as Kernel<Record<string, BufferArg>, C>[];
      return {
        label,
        bind(buffers, config, callLabel = label) {
          const calls = made.map((k) => k.bind(buffers, config, `${callLabel} ${k.label}`));
          return {
            label: callLabel,
            stages: calls,
            update(c: C) {
              for (const s of calls) s.update(c);
            },
          };
        },
        encode(pass, call) {
          made.forEach((k, i) => k.encode(pass, call.stages[i]!));
        },
        destroy() {
          for (const k of made) k.destroy();
        },
      };
    },
  };
}

/** How big the scratch buffer `partials` of some stages must be, and how an error says so. */
export interface ScratchSize<C> {
  words: (c: C) => number;
  /** The subject of the refusal, with its verb: "1000 rows need", "this configuration needs". */
  needs: (c: C) => string;
  /** Where a caller finds the size, named in the refusal. */
  source: string;
}

/**
 * `stages` with their scratch buffer `partials` checked at bind and at every update: one smaller
 * than `size.words(c)` words is refused by name, where robust access would drop the writes past its
 * end silently.
 */
export function withScratchCheck<B extends { partials: BufferArg }, C>(stages: DefinedStages<B, C>, size: ScratchSize<C>) {
  const check = (label: string, partials: BufferArg | undefined, c: C) => {
    if (!partials) throw new Error(`${label}: missing buffer "partials"`);
    const have = bindingBytes(partials);
    const need = 4 * size.words(c);
    if (have < need) throw new Error(`${label}: the partials buffer holds ${have} bytes, ${size.needs(c)} ${need} (${size.source})`);
  };
  return {
    ...stages,
    scratchWords: size.words,
    create(device: GPUDevice): Staged<B, C> {
      const staged = stages.create(device);
      return {
        ...staged,
        bind(buffers, config, label = stages.label): StagedCall<C> {
          check(label, buffers.partials, config);
          const call = staged.bind(buffers, config, label);
          return {
            ...call,
            update(c: C) {
              check(label, buffers.partials, c);
              call.update(c);
            },
          };
        },
      };
    },
  };
}
