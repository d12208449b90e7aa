/**
 * The policy's GPU kernels (kernels/model/mlp.ts has the model and its CPU reference, which these
 * are checked against): the first layer's table (embedProject), the forward in two stages
 * (forwardHidden, forwardLogits), and the backward from the logits' gradient on: headGrad,
 * hiddenGrad, slotGrad and firstLayerGrad (a thread per output, or on hardware a subgroup per
 * embedding entry). The gradient w.r.t. the logits is per-row softmax work: kernels/softmax/logitGrad.ts.
 */
import firstLayerGradWGSL from './firstLayerGrad.wgsl?raw';
import firstLayerGradSubgroupWGSL from './firstLayerGradSubgroup.wgsl?raw';
import forwardWGSL from './forward.wgsl?raw';
import backwardWGSL from './backward.wgsl?raw';
import { paramLayout, type MlpDims } from './mlp';
import { subgroupLanesWGSL, SUBGROUP_WORKGROUP_SIZE } from '../softmax/rowSubgroup';
import type { KernelVariant } from '../selectors';
import { defineKernel, uniformLayout, type BufferArg, type DefinedKernel } from '../pipeline';
import { defineStages } from '../stages';
import { defineReduction, rowChunks } from '../reduce';

/** Threads per workgroup of the per-output kernels. */
export const MLP_WORKGROUP_SIZE = 64;
/** The largest model the kernels are tested at (workers/core/config.ts allows no more). */
export const MAX_HIDDEN = 1024;
export const MAX_CONTEXT = 32;

function checkDims(label: string, d: MlpDims): void {
  if (d.H > MAX_HIDDEN) throw new Error(`${label}: hidden ${d.H} exceeds ${MAX_HIDDEN}`);
  if (d.K > MAX_CONTEXT) throw new Error(`${label}: context ${d.K} exceeds ${MAX_CONTEXT}`);
}

const perThread = (n: number) => Math.ceil(n / MLP_WORKGROUP_SIZE);

/** Words of the factored first layer's tables: proj (embedProject) and the slot sums G (slotGrad), both [K, V, H]. */
export const slotTableWords = ({ V, K, H }: MlpDims) => K * V * H;

/** `struct EmbedProject` of forward.wgsl embedProject. */
export const EMBED_PROJECT_UNIFORM = uniformLayout('EmbedProject', [
  ['vocab', 'u32'], ['context', 'u32'], ['embed', 'u32'], ['hidden', 'u32'], ['embOff', 'u32'], ['w1Off', 'u32'],
] as const);

/** `struct ForwardHidden` of forward.wgsl forwardHidden. */
export const FORWARD_HIDDEN_UNIFORM = uniformLayout('ForwardHidden', [
  ['numRows', 'u32'], ['rowBase', 'u32'], ['outBase', 'u32'], ['seqLen', 'u32'],
  ['vocab', 'u32'], ['context', 'u32'], ['hidden', 'u32'], ['b1Off', 'u32'],
] as const);

/** `struct ForwardLogits` of forward.wgsl forwardLogits. */
export const FORWARD_LOGITS_UNIFORM = uniformLayout('ForwardLogits', [
  ['numRows', 'u32'], ['rowBase', 'u32'], ['outBase', 'u32'], ['seqLen', 'u32'],
  ['vocab', 'u32'], ['hidden', 'u32'], ['w2Off', 'u32'], ['b2Off', 'u32'], ['temperature', 'f32'],
] as const);

/** The uniform structs of forward.wgsl, one per entry point. */
const FORWARD_UNIFORMS = [EMBED_PROJECT_UNIFORM, FORWARD_HIDDEN_UNIFORM, FORWARD_LOGITS_UNIFORM];

/**
 * embedProjectCpu on the GPU: buffers params, proj (output, `slotTableWords(dims)` words). Run it
 * whenever the parameters the next forward reads are not the ones the table was made from.
 */
export const embedProjectKernel = defineKernel({
  label: 'embedProject',
  wgsl: forwardWGSL,
  fileUniforms: FORWARD_UNIFORMS,
  file: 'forward',
  entryPoint: 'embedProject',
  workgroupSize: MLP_WORKGROUP_SIZE,
  bindings: { params: 1, proj: 2 },
  uniform: EMBED_PROJECT_UNIFORM,
  values: (c: { dims: MlpDims }) => {
    const P = paramLayout(c.dims);
    return { vocab: c.dims.V, context: c.dims.K, embed: c.dims.D, hidden: c.dims.H, embOff: P.emb, w1Off: P.w1 };
  },
  workgroups: (c) => perThread(slotTableWords(c.dims)),
});

export interface ForwardConfig {
  dims: MlpDims;
  /** L: tokens per trajectory sequence. */
  seqLen: number;
  numRows: number;
  /** First entry of rowPos to read (default 0). */
  rowBase?: number;
  /** First row of h and z to write (default rowBase). */
  outBase?: number;
  temperature: number;
}



const forwardRows = (c: ForwardConfig) => {
  const rowBase = c.rowBase ?? 0;
  return { numRows: c.numRows, rowBase, outBase: c.outBase ?? rowBase, seqLen: c.seqLen };
};

/** Stage 1 of the forward: h from the table; buffers params, proj, seq, rowPos, h (output). */
export const forwardHiddenKernel = defineKernel({
  label: 'forwardHidden',
  wgsl: forwardWGSL,
  fileUniforms: FORWARD_UNIFORMS,
  file: 'forward',
  entryPoint: 'forwardHidden',
  workgroupSize: MLP_WORKGROUP_SIZE,
  bindings: { params: 1, proj: 2, seq: 3, rowPos: 4, h: 5 },
  uniform: FORWARD_HIDDEN_UNIFORM,
  check: (c: ForwardConfig) => checkDims('forward', c.dims),
  values: (c: ForwardConfig) => ({
    ...forwardRows(c), vocab: c.dims.V, context: c.dims.K, hidden: c.dims.H, b1Off: paramLayout(c.dims).b1,
  }),
  workgroups: (c: ForwardConfig) => perThread(c.numRows * c.dims.H),
});

/** Stage 2 of the forward: z from h; buffers params, seq, rowPos, grammar (u32 0/1), h, z (output). */
export const forwardLogitsKernel = defineKernel({
  label: 'forwardLogits',
  wgsl: forwardWGSL,
  fileUniforms: FORWARD_UNIFORMS,
  file: 'forward',
  entryPoint: 'forwardLogits',
  workgroupSize: MLP_WORKGROUP_SIZE,
  bindings: { params: 1, seq: 3, rowPos: 4, grammar: 6, h: 7, z: 8 },
  uniform: FORWARD_LOGITS_UNIFORM,
  values: (c: ForwardConfig) => {
    const P = paramLayout(c.dims);
    return { ...forwardRows(c), vocab: c.dims.V, hidden: c.dims.H, w2Off: P.w2, b2Off: P.b2, temperature: c.temperature };
  },
  workgroups: (c: ForwardConfig) => perThread(c.numRows * c.dims.V),
});

/**
 * forwardCpu on the GPU, two dispatches (hidden units, then logits; kernels/stages.ts): buffers
 * params, proj (embedProject's table of the same params), seq (u32), rowPos, grammar (u32 0/1),
 * h and z (outputs). Two thread-per-output stages instead of one workgroup per row: no barriers or
 * workgroup memory, and R*H then R*V threads in flight.
 */
export const forwardKernel = defineStages<Record<'params' | 'proj' | 'seq' | 'rowPos' | 'grammar' | 'h' | 'z', BufferArg>, ForwardConfig>(
  'forward',
  [forwardHiddenKernel, forwardLogitsKernel],
);

export interface RowsConfig {
  numRows: number;
  /** First row (default 0): row r of the call is rowBase + r everywhere. */
  rowBase?: number;
}


/**
 * Rows per chunk of the two-level reductions (kernels/reduce.ts) at small and medium batches.
 * headGrad does a multiply-add per row and output. slotGrad does one add per row and owned
 * column but first zeroes V table entries per column, so its chunks stay as long as headGrad's:
 * the zeroing (and pass 2's reads) cost chunks * K*V*H against R*K*H adds, V / 64 of the work.
 */
export const HEAD_CHUNK_ROWS = 64;
export const SLOT_CHUNK_ROWS = 64;
/**
 * Outputs per invocation of headGrad's pass 1 (`VB` in backward.wgsl headGrad): 4 consecutive vocabulary
 * entries that share the row's h[r, j], read once for 4 multiply-adds.
 */
export const HEAD_GRAD_BLOCK = 4;

/** `struct HeadGrad` of backward.wgsl headGrad. */
export const HEAD_GRAD_UNIFORM = uniformLayout('HeadGrad', [
  ['numRows', 'u32'], ['rowBase', 'u32'], ['vocab', 'u32'], ['hidden', 'u32'], ['rowsPerChunk', 'u32'], ['chunks', 'u32'],
] as const);

/** `struct HiddenGrad` of backward.wgsl hiddenGrad. */
export const HIDDEN_GRAD_UNIFORM = uniformLayout('HiddenGrad', [
  ['numRows', 'u32'], ['rowBase', 'u32'], ['vocab', 'u32'], ['hidden', 'u32'], ['w2Off', 'u32'],
] as const);

/** `struct SlotGrad` of backward.wgsl slotGrad. */
export const SLOT_GRAD_UNIFORM = uniformLayout('SlotGrad', [
  ['numRows', 'u32'], ['rowBase', 'u32'], ['seqLen', 'u32'], ['vocab', 'u32'], ['context', 'u32'], ['hidden', 'u32'],
  ['rowsPerChunk', 'u32'], ['chunks', 'u32'],
] as const);

/** The uniform structs of backward.wgsl, one per entry point. */
const BACKWARD_UNIFORMS = [HEAD_GRAD_UNIFORM, HIDDEN_GRAD_UNIFORM, SLOT_GRAD_UNIFORM];

type HeadGradConfig = RowsConfig & { dims: MlpDims };
const headOutputs = (d: MlpDims) => (d.H + 1) * d.V;
const headChunks = (c: HeadGradConfig) => rowChunks(c.numRows, headOutputs(c.dims), HEAD_CHUNK_ROWS);

/** Pass 1 of headGrad: buffers h, dz, partials ([chunks, (H+1)V]: W2 then b2 per chunk); (chunk, j, 4 v) per invocation. */
export const headGradPartialKernel = defineKernel({
  label: 'headGrad',
  wgsl: backwardWGSL,
  fileUniforms: BACKWARD_UNIFORMS,
  file: 'backward',
  entryPoint: 'headGrad',
  workgroupSize: MLP_WORKGROUP_SIZE,
  bindings: ['h', 'dz', 'partials'],
  uniform: HEAD_GRAD_UNIFORM,
  values: (c: HeadGradConfig) => {
    const { rowsPerChunk, chunks } = headChunks(c);
    return { numRows: c.numRows, rowBase: c.rowBase ?? 0, vocab: c.dims.V, hidden: c.dims.H, rowsPerChunk, chunks };
  },
  workgroups: (c) => perThread(headChunks(c).chunks * (c.dims.H + 1) * Math.ceil(c.dims.V / HEAD_GRAD_BLOCK)),
});

/**
 * headGradCpu on the GPU, two dispatches (kernels/reduce.ts): buffers h, dz, partials (scratch of
 * at least `headGradKernel.scratchWords(config)` words) and grads (writes the W2 and b2 ranges).
 */
export const headGradKernel = defineReduction({
  label: 'headGrad',
  partial: headGradPartialKernel,
  layout: (c: HeadGradConfig) => ({ outputs: headOutputs(c.dims), chunks: headChunks(c).chunks, dstOff: paramLayout(c.dims).w2 }),
});


/** hiddenDaCpu on the GPU, one thread per (row, hidden unit): buffers params, h, dz, da (output). */
export const hiddenGradKernel = defineKernel({
  label: 'hiddenGrad',
  wgsl: backwardWGSL,
  fileUniforms: BACKWARD_UNIFORMS,
  file: 'backward',
  entryPoint: 'hiddenGrad',
  workgroupSize: MLP_WORKGROUP_SIZE,
  bindings: { params: 4, h: 1, dz: 2, da: 5 },
  uniform: HIDDEN_GRAD_UNIFORM,
  values: (c: RowsConfig & { dims: MlpDims }) => ({
    numRows: c.numRows, rowBase: c.rowBase ?? 0, vocab: c.dims.V, hidden: c.dims.H, w2Off: paramLayout(c.dims).w2,
  }),
  workgroups: (c) => perThread(c.numRows * c.dims.H),
});


type SlotGradConfig = RowsConfig & { dims: MlpDims; seqLen: number };
const slotChunks = (c: SlotGradConfig) => rowChunks(c.numRows, slotTableWords(c.dims), SLOT_CHUNK_ROWS);

/**
 * Pass 1 of slotGrad: buffers seq, rowPos, da, partials ([chunks, K, V, H]). One invocation per
 * (chunk, slot k, hidden unit j) owns column j of slot k of its chunk's table: it zeroes it, then
 * scatters its rows' da into it in row order. No two invocations touch the same word, so no atomics.
 */
export const slotGradPartialKernel = defineKernel({
  label: 'slotGrad',
  wgsl: backwardWGSL,
  fileUniforms: BACKWARD_UNIFORMS,
  file: 'backward',
  entryPoint: 'slotGrad',
  workgroupSize: MLP_WORKGROUP_SIZE,
  bindings: { seq: 6, rowPos: 7, da: 5, partials: 3 },
  uniform: SLOT_GRAD_UNIFORM,
  values: (c: SlotGradConfig) => {
    const { rowsPerChunk, chunks } = slotChunks(c);
    return {
      numRows: c.numRows, rowBase: c.rowBase ?? 0, seqLen: c.seqLen, vocab: c.dims.V,
      context: c.dims.K, hidden: c.dims.H, rowsPerChunk, chunks,
    };
  },
  workgroups: (c) => perThread(slotChunks(c).chunks * c.dims.K * c.dims.H),
});

/**
 * slotGradCpu on the GPU, two dispatches (kernels/reduce.ts): buffers seq, rowPos, da, partials
 * (scratch, `slotGradKernel.scratchWords(config)` words) and grads: bind the slot-sum buffer G
 * ([K, V, H], `slotTableWords(dims)` words) there, which pass 2 overwrites from word 0.
 */
export const slotGradKernel = defineReduction({
  label: 'slotGrad',
  partial: slotGradPartialKernel,
  layout: (c: SlotGradConfig) => ({ outputs: slotTableWords(c.dims), chunks: slotChunks(c).chunks, dstOff: 0 }),
});

/** `struct FirstLayerGrad` of firstLayerGrad.wgsl. */
export const FIRST_LAYER_GRAD_UNIFORM = uniformLayout('FirstLayerGrad', [
  ['vocab', 'u32'], ['context', 'u32'], ['embed', 'u32'], ['hidden', 'u32'], ['embOff', 'u32'], ['w1Off', 'u32'],
] as const);

export interface FirstLayerGradConfig {
  dims: MlpDims;
}

/** Outputs of firstLayerGrad: the adjacent emb | W1 | b1 range of the gradient. */
const firstLayerOutputs = ({ V, K, D, H }: MlpDims) => V * D + K * D * H + H;

const firstLayerGradIo = {
  bindings: ['params', 'G', 'grads'],
  uniform: FIRST_LAYER_GRAD_UNIFORM,
  values: (c: FirstLayerGradConfig) => {
    const P = paramLayout(c.dims);
    return { vocab: c.dims.V, context: c.dims.K, embed: c.dims.D, hidden: c.dims.H, embOff: P.emb, w1Off: P.w1 };
  },
} as const;

export type FirstLayerGradBuffers = Record<'params' | 'G' | 'grads', BufferArg>;

/**
 * firstLayerGradCpu on the GPU, one thread per output: buffers params, G (slotGrad's slot sums),
 * grads (writes the emb, W1 and b1 ranges).
 */
export const firstLayerGradKernel = defineKernel({
  label: 'firstLayerGrad',
  wgsl: firstLayerGradWGSL,
  entryPoint: 'firstLayerGrad',
  workgroupSize: MLP_WORKGROUP_SIZE,
  ...firstLayerGradIo,
  workgroups: (c) => perThread(firstLayerOutputs(c.dims)),
});

/**
 * Embedding-gradient outputs per workgroup of 64 in firstLayerGradSubgroup: one per subgroup of 32
 * lanes (NVIDIA, Apple), two per subgroup of 64 (AMD). There are only V·D of them (304 at the
 * defaults), so more per workgroup would leave most multiprocessors idle and chain that many
 * K·H / 32-step sums one after another in each subgroup. SwiftShader's 16 subgroups of 4 leave 14
 * idle per workgroup, at little cost there (its subgroups run one after another on a core).
 */
export const FIRST_LAYER_EMB_PER_GROUP = 2;

/** Workgroups of firstLayerGradSubgroup: the demb ones, then a thread per dW1 and db1 output. */
export function firstLayerGradSubgroupWorkgroups({ V, K, D, H }: MlpDims): number {
  return Math.ceil((V * D) / FIRST_LAYER_EMB_PER_GROUP) + Math.ceil((K * D * H + H) / SUBGROUP_WORKGROUP_SIZE);
}

/**
 * firstLayerGradKernel with one subgroup per embedding-gradient output (its K·H terms split over
 * the lanes, then subgroupAdd; firstLayerGradSubgroup.wgsl); dW1 and db1 stay one thread each.
 * Same bindings, uniform and results up to the order of the demb sums; needs the `subgroups` feature.
 */
export const firstLayerGradSubgroupKernel = defineKernel({
  label: 'firstLayerGradSubgroup',
  wgsl: `${firstLayerGradWGSL}${firstLayerGradSubgroupWGSL}${subgroupLanesWGSL}\nconst EMB_PER_GROUP: u32 = ${FIRST_LAYER_EMB_PER_GROUP}u;\n`,
  file: 'firstLayerGrad',
  entryPoint: 'firstLayerGradSubgroup',
  workgroupSize: SUBGROUP_WORKGROUP_SIZE,
  requires: 'subgroups',
  ...firstLayerGradIo,
  workgroups: (c) => firstLayerGradSubgroupWorkgroups(c.dims),
});

/** The backend's firstLayerGrad per variant, both bound with FirstLayerGradBuffers. */
export const firstLayerGradKernels: Record<KernelVariant, DefinedKernel<FirstLayerGradBuffers, FirstLayerGradConfig>> = {
  thread: firstLayerGradKernel,
  subgroup: firstLayerGradSubgroupKernel,
};

/**
 * Words of the scratch buffer the reductions of a backward pass share (they run one after
 * another), for every row count in `rowCounts` (the minibatch sizes of a run).
 */
export function backwardScratchWords(dims: MlpDims, seqLen: number, rowCounts: readonly number[]): number {
  let words = 1;
  for (const numRows of rowCounts) {
    const c = { dims, seqLen, numRows };
    words = Math.max(words, headGradKernel.scratchWords(c), slotGradKernel.scratchWords(c));
  }
  return words;
}
