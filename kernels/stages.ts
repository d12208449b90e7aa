/**
 * An operation made of kernels dispatched one after another with one configuration, such as the
 * forward pass (hidden units, then logits; kernels/mlp.ts). It has the interface of a single
 * kernel: bind() binds every stage to the buffers it names out of one set, encode() dispatches
 * the stages in order in the caller's compute pass, so call sites need not know it is several.
 */
import type { BufferArg, DefinedKernel, Kernel, KernelCall } from './pipeline';

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
