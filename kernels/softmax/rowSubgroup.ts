/**
 * The subgroup variants of the per-row softmax kernels (sample, tokenStats, logitGrad): a
 * subgroup walks four rows of logits at once, a lane per logit, instead of a thread per row
 * (rowSubgroup.wgsl says why). Each variant has
 * the bindings, uniform and results of its thread version, up to the order of its sums, and needs
 * a device created with the `subgroups` feature and the `subgroup_id` WGSL language feature
 * (kernels/selectors.ts).
 */
import rowSubgroupWGSL from './rowSubgroup.wgsl?raw';
import subgroupLanesWGSL from './subgroupLanes.wgsl?raw';

export { subgroupLanesWGSL };

/**
 * Rows per workgroup of 64 invocations, taken four at a time by a subgroup (rowSubgroup.wgsl): 8
 * per subgroup of 32 (NVIDIA), 16 for 64 (AMD); SwiftShader's subgroups of 4 leave 12 of its 16
 * idle, at little cost there (they run one after another on a core, and the thread variant is its
 * default anyway).
 */
export const SUBGROUP_ROWS_PER_GROUP = 16;
export const SUBGROUP_WORKGROUP_SIZE = 64;

/** A subgroup kernel's WGSL: its rows-per-workgroup constant, bindings, entry point and the shared helpers. */
export function subgroupRowSource(io: string, main: string): string {
  return `const ROWS_PER_GROUP: u32 = ${SUBGROUP_ROWS_PER_GROUP}u;\n${io}\n${main}\n${rowSubgroupWGSL}\n${subgroupLanesWGSL}`;
}

export const subgroupRowWorkgroups = (numRows: number): number => Math.ceil(numRows / SUBGROUP_ROWS_PER_GROUP);
