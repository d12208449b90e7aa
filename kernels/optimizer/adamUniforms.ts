/**
 * The uniform structs of adam.wgsl, whose two entry points (essScale, adam) are kernels of two
 * modules: each module's kernel joins both structs in front of the file (kernels/pipeline.ts
 * kernelSource), so both live here, apart from either module.
 */
import { uniformLayout } from '../pipeline';

/** `struct EssScale` of adam.wgsl's essScale entry point. */
export const ESS_SCALE_UNIFORM = uniformLayout('EssScale', [
  ['numTraj', 'u32'],
  ['rule', 'u32'],
  ['rhoBase', 'f32'],
  ['enabled', 'u32'],
  ['trajBase', 'u32'], // first trajectory of the range (a minibatch: VCPO's ESS is per minibatch)
] as const);

/** `struct Adam` of adam.wgsl. */
export const ADAM_UNIFORM = uniformLayout('Adam', [
  ['n', 'u32'], ['lr', 'f32'], ['beta1', 'f32'], ['beta2', 'f32'],
  ['eps', 'f32'], ['bc1', 'f32'], ['bc2', 'f32'], ['maxGradNorm', 'f32'],
  // 1 - beta1 rounded once from float64: 1 - f32(0.999) is off by 1.3e-5 relative.
  ['oneMinusBeta1', 'f32'],
  ['oneMinusBeta2', 'f32'],
] as const);

/** Every uniform struct adam.wgsl reads, in the order its entry points come. */
export const ADAM_FILE_UNIFORMS = [ESS_SCALE_UNIFORM, ADAM_UNIFORM];
