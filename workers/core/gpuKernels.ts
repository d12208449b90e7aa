/**
 * Which kernels a GPU backend of a given shape selects (the selector table of kernels/selectors.ts),
 * and the configurations the table picks for it. The stages of the update
 * (workers/core/update/stages.ts) bind these kernels and list their pipelines.
 */
import type { AdvantageConfig } from '../../kernels/advantage/advantage';
import { CONFIG_SELECTORS, selectKernels, type KernelVariant, type SelectorShape } from '../../kernels/selectors';
import type { StatsConfig } from '../../kernels/stats/stats';
import type { RunShape } from './backend';

/** What the selector table reads of a run's shape. */
const selectorShape = (shape: RunShape): SelectorShape => ({ vocab: shape.dims.V, group: shape.group });

/** The kernels a backend of `shape` runs in `variant`, by the names the backend gives them. */
export function backendKernels(shape: RunShape, variant: KernelVariant) {
  return selectKernels(variant, selectorShape(shape));
}

export function advantageConfigFor(shape: RunShape, variant: KernelVariant): AdvantageConfig {
  return {
    numTraj: shape.N, tp: shape.Tp, maxTurns: shape.maxTurns, actionLen: shape.actionLen, nRoles: shape.nRoles,
    ...shape.adv, groupSize: CONFIG_SELECTORS.advantageGroupSize.pick(variant, selectorShape(shape)),
  };
}

export function statsConfigFor(shape: RunShape, variant: KernelVariant): StatsConfig {
  const s = selectorShape(shape);
  return {
    numTraj: shape.N, tp: shape.Tp, minibatches: shape.minibatches.length,
    spreadBins: CONFIG_SELECTORS.statsSpreadBins.pick(variant, s), histCopies: CONFIG_SELECTORS.statsHistCopies.pick(variant, s),
  };
}

/** gradNorm's block in the optimizer step's configuration. */
export const gradNormBlockFor = (shape: RunShape, variant: KernelVariant): number => CONFIG_SELECTORS.gradNormBlock.pick(variant, selectorShape(shape));

type Created<T> = { [K in keyof T]: T[K] extends { create(device: GPUDevice): infer R } ? R : never };

/** Each kernel's instance on `device`, by the same names. */
export function createKernels<T extends Record<string, { create(device: GPUDevice): unknown }>>(device: GPUDevice, defs: T): Created<T> {
  return Object.fromEntries(Object.entries(defs).map(([name, d]) => [name, d.create(device)])) as Created<T>;
}
