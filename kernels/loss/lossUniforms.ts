/**
 * The uniform structs of ppoLoss.wgsl, whose two entry points (seqRatio, ppoLoss) are two kernels
 * of two modules: each module's kernel joins both structs in front of the file (kernels/pipeline.ts
 * kernelSource), so both live here, apart from either module.
 */
import { uniformLayout } from '../pipeline';

/** `struct SeqRatio` of ppoLoss.wgsl's seqRatio entry point. */
export const SEQ_RATIO_UNIFORM = uniformLayout('SeqRatio', [
  ['numSegments', 'u32'], // local trajectories * segments
  ['rowBase', 'u32'], // first row of the call, a multiple of tp
  ['tp', 'u32'], // policy-token rows per trajectory
  ['actionLen', 'u32'], // rows per turn (turn mode)
  ['segments', 'u32'], // outputs per trajectory: maxTurns in turn mode, else 1
  ['mode', 'u32'], // 0 sequence, 1 turn, 2 geometric
  ['loLog', 'f32'], // geometric: -clipLow
  ['hiLog', 'f32'], // geometric: +clipHigh
] as const);

/** `struct PpoLoss` of ppoLoss.wgsl's ppoLoss entry point. */
export const PPO_LOSS_UNIFORM = uniformLayout('PpoLoss', [
  ['numRows', 'u32'],
  ['rowBase', 'u32'],
  ['loLog', 'f32'],
  ['hiLog', 'f32'],
  ['dualClip', 'f32'],
  ['klCoef', 'f32'],
  ['ratioMode', 'u32'], // 0 token, 1 sequence, 2 geometric, 3 turn stage, 4 step, 5 sft, 6 cispo, 7 sapo
  ['klType', 'u32'], // 0 k3, 1 k1, 2 k2
  ['tp', 'u32'], // policy-token rows per trajectory
  ['actionLen', 'u32'], // rows per turn
  ['maxTurns', 'u32'], // T: seqLog entries per trajectory in mode 3
  ['stage', 'u32'], // the turn k updated in mode 3
  ['isWeights', 'u32'], // 1: weight[isBase + row] is the row's IS weight on its policy term
  ['isBase', 'u32'],
] as const);

/** Every uniform struct ppoLoss.wgsl reads, in the order its entry points come. */
export const LOSS_UNIFORMS = [SEQ_RATIO_UNIFORM, PPO_LOSS_UNIFORM];
