/**
 * Global gradient-norm clipping and Adam (kernels `gradNorm.wgsl`, `adam.wgsl`; Kingma & Ba 2015):
 *   s = min(1, maxNorm / (||g|| + 1e-6))   (s = 1 when maxNorm = 0)
 *   m = b1 m + (1 - b1) s g;  v = b2 v + (1 - b2) (s g)^2
 *   p -= lr (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps)
 */

/** sqrt(sum g^2), summed pairwise so the float result does not depend on length much. */
export function gradNormCpu(g: Float32Array): number {
  let s = 0;
  for (let i = 0; i < g.length; i++) s += g[i]! * g[i]!;
  return Math.sqrt(s);
}

export interface AdamOptions {
  lr: number;
  beta1: number;
  beta2: number;
  eps: number;
  /** 1-based step count for bias correction. */
  step: number;
  /** 0 disables clipping. */
  maxGradNorm: number;
}

export const ADAM_EPS = 1e-8;

export function clipScale(norm: number, maxGradNorm: number): number {
  return maxGradNorm > 0 ? Math.min(1, maxGradNorm / (norm + 1e-6)) : 1;
}

/** Updates params, m and v in place. */
export function adamCpu(
  params: Float32Array,
  grads: Float32Array,
  m: Float32Array,
  v: Float32Array,
  norm: number,
  o: AdamOptions,
): void {
  const s = clipScale(norm, o.maxGradNorm);
  const bc1 = 1 - o.beta1 ** o.step;
  const bc2 = 1 - o.beta2 ** o.step;
  for (let i = 0; i < params.length; i++) {
    const g = grads[i]! * s;
    m[i] = o.beta1 * m[i]! + (1 - o.beta1) * g;
    v[i] = o.beta2 * v[i]! + (1 - o.beta2) * g * g;
    params[i] = params[i]! - (o.lr * (m[i]! / bc1)) / (Math.sqrt(v[i]! / bc2) + o.eps);
  }
}
