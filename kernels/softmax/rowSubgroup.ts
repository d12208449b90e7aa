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

/**
 * A subgroup kernel's WGSL: the thread version's source (its uniform, bindings and workgroup
 * size), the kernel's subgroupRows, the shared helpers with the entry point `main`, and its
 * rows-per-workgroup constant.
 */
export function subgroupRowSource(thread: string, rows: string): string {
  return `${thread}\n${rows}\n${rowSubgroupWGSL}\n${subgroupLanesWGSL}\nconst ROWS_PER_GROUP: u32 = ${SUBGROUP_ROWS_PER_GROUP}u;\n`;
}

export const subgroupRowWorkgroups = (numRows: number): number => Math.ceil(numRows / SUBGROUP_ROWS_PER_GROUP);
