/**
 * The sampler's settings as data (sampler.ts has the math and the WGSL): what a run config and the
 * page need to name and check them without loading a kernel.
 */

export const SAMPLER_PRECISIONS = ['fp32', 'bf16', 'fp16'] as const;
export type SamplerPrecision = (typeof SAMPLER_PRECISIONS)[number];

export interface SamplerOptions {
  precision: SamplerPrecision;
  /** Nucleus mass in (0, 1]; 1 keeps every token. */
  topP: number;
  /** Tokens kept by rank, ties at the k-th kept; 0 keeps every token. */
  topK: number;
}

/** The trainer's own distribution: f32 logits, nothing truncated. */
export const SAMPLER_OFF: Readonly<SamplerOptions> = { precision: 'fp32', topP: 1, topK: 0 };

/** Whether the sampler differs from the trainer (the kernels then take their sampler path). */
export const samplerActive = (o: SamplerOptions | undefined): o is SamplerOptions =>
  o !== undefined && (o.precision !== 'fp32' || o.topK !== 0 || o.topP < 1);
