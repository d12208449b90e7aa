// The policy's backward below the logits' gradient (logitGrad: kernels/softmax): headGrad (W2, b2),
// hiddenGrad (through W2 and tanh) and slotGrad (the first layer's slot sums), each an entry point
// of this file with its own uniform (all at binding 0: no entry point uses two) over shared buffer
// declarations (each binds the ones it uses; host side: kernels/model/mlpKernels.ts). firstLayerGrad
// finishes the gradient from the slot sums: firstLayerGrad.wgsl.

@group(0) @binding(0) var<uniform> uHead: HeadGrad;
@group(0) @binding(0) var<uniform> uHidden: HiddenGrad;
@group(0) @binding(0) var<uniform> uSlot: SlotGrad;
@group(0) @binding(1) var<storage, read> h: array<f32>;  // [rows, hidden]
@group(0) @binding(2) var<storage, read> dz: array<f32>;  // [rows, vocab]
@group(0) @binding(3) var<storage, read_write> partials: array<f32>;  // [chunks, (hidden + 1) * vocab]
@group(0) @binding(4) var<storage, read> params: array<f32>;  // flat parameters
@group(0) @binding(5) var<storage, read_write> da: array<f32>;  // [rows, hidden]
@group(0) @binding(6) var<storage, read> seq: array<u32>;  // [N, seqLen] tokens
@group(0) @binding(7) var<storage, read> rowPos: array<u32>;  // [rows] flat positions

override workgroupSize: u32 = 64;

// Output-layer gradients, pass 1 of a two-level row reduction (kernels/reduce.ts; reference:
// headGradCpu in mlp.ts):  dW2[j, v] = sum_r h[r, j] dz[r, v],  db2[v] = sum_r dz[r, v]; the bias
// is hidden row j = hidden with h = 1. One invocation per (row chunk, hidden row j, block of 4
// vocabulary entries v0 .. v0 + 3): it reads h[r, j] once per row for its 4 outputs. Chunk c
// holds rows rowBase + c * rowsPerChunk onwards (at most rowsPerChunk, never past
// rowBase + numRows); each output is summed in row order into partials[c * outputs + j * vocab + v],
// outputs = (hidden + 1) * vocab (W2 then b2, the gradient's own layout). chunkSum.wgsl then adds
// the chunks in order.

// Vocabulary entries per invocation (HEAD_GRAD_BLOCK in mlpKernels.ts).
const VB: u32 = 4u;

@compute @workgroup_size(workgroupSize)
fn headGrad(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let idx = flatWorkgroup(wid, nwg) * workgroupSize + lid;
  let blocks = (uHead.vocab + VB - 1u) / VB;
  let perChunk = (uHead.hidden + 1u) * blocks;
  if (idx >= perChunk * uHead.chunks) {
    return;
  }
  let c = idx / perChunk;
  let rest = idx - c * perChunk;
  let j = rest / blocks;
  let v0 = (rest - j * blocks) * VB;
  // The last block may be partial: its spare lanes read a valid dz entry and are never written.
  let last = uHead.vocab - 1u;
  let v1 = min(v0 + 1u, last);
  let v2 = min(v0 + 2u, last);
  let v3 = min(v0 + 3u, last);
  let r0 = uHead.rowBase + c * uHead.rowsPerChunk;
  let r1 = min(r0 + uHead.rowsPerChunk, uHead.rowBase + uHead.numRows);
  var acc = vec4<f32>(0.0);
  for (var r = r0; r < r1; r++) {
    var x = 1.0;
    if (j < uHead.hidden) {
      x = h[r * uHead.hidden + j];
    }
    let row = r * uHead.vocab;
    acc += x * vec4<f32>(dz[row + v0], dz[row + v1], dz[row + v2], dz[row + v3]);
  }
  let at = c * (uHead.hidden + 1u) * uHead.vocab + j * uHead.vocab + v0;
  partials[at] = acc.x;
  if (v0 + 1u < uHead.vocab) {
    partials[at + 1u] = acc.y;
  }
  if (v0 + 2u < uHead.vocab) {
    partials[at + 2u] = acc.z;
  }
  if (v0 + 3u < uHead.vocab) {
    partials[at + 3u] = acc.w;
  }
}

// Back through W2 and tanh, one thread per (row, hidden unit) (reference: hiddenDaCpu in mlp.ts):
//   da[r, j] = (1 - h[r, j]^2) sum_v W2[j, v] dz[r, v]      [rows, hidden]
// summed over v in order. Row r is rowBase + r in h, dz and da. Nothing flows further back per row:
// slotGrad.wgsl gathers da by context slot and token, and firstLayerGrad.wgsl takes it from there.

@compute @workgroup_size(workgroupSize)
fn hiddenGrad(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let i = flatWorkgroup(wid, nwg) * workgroupSize + lid;
  if (i >= uHidden.numRows * uHidden.hidden) {
    return;
  }
  let r = uHidden.rowBase + i / uHidden.hidden;
  let j = i % uHidden.hidden;
  var acc = 0.0;
  for (var v = 0u; v < uHidden.vocab; v++) {
    acc += params[uHidden.w2Off + j * uHidden.vocab + v] * dz[r * uHidden.vocab + v];
  }
  let hj = h[r * uHidden.hidden + j];
  da[r * uHidden.hidden + j] = acc * (1.0 - hj * hj);
}

// Row gradients gathered by context slot and token, pass 1 of a two-level row reduction
// (kernels/reduce.ts; reference: slotGradCpu in mlp.ts):
//   G[k, t, j] = sum_r [ctx_k(r) = t] da[r, j]      [context, vocab, hidden]
// with a context token outside the vocabulary read as PAD (vocabToken). One invocation per
// (row chunk c, slot k, hidden unit j) owns column j of slot k of chunk c's table
// partials[c, k, 0..vocab, j]: it zeroes it, then scatters the da of its rows into it in row order,
// so each (k, t, j) of a chunk sums its terms in the reference's order and no two invocations write
// the same word (no atomics). Work R * context * hidden, where a per-(k, t, j) gather was vocab
// times that. Neighbouring invocations differ in j: their da reads and table writes are adjacent.
// Chunk c holds rows rowBase + c * rowsPerChunk onwards (at most rowsPerChunk, never past
// rowBase + numRows). chunkSum.wgsl then adds the chunks in order into G.

@compute @workgroup_size(workgroupSize)
fn slotGrad(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let idx = flatWorkgroup(wid, nwg) * workgroupSize + lid;
  let perChunk = uSlot.context * uSlot.hidden;
  if (idx >= uSlot.chunks * perChunk) {
    return;
  }
  let c = idx / perChunk;
  let rest = idx - c * perChunk;
  let k = rest / uSlot.hidden;
  let j = rest - k * uSlot.hidden;
  // Column j of slot k's [vocab, hidden] block in chunk c's table.
  let column = (c * uSlot.context + k) * uSlot.vocab * uSlot.hidden + j;
  for (var t = 0u; t < uSlot.vocab; t++) {
    partials[column + t * uSlot.hidden] = 0.0;
  }
  let r0 = uSlot.rowBase + c * uSlot.rowsPerChunk;
  let r1 = min(r0 + uSlot.rowsPerChunk, uSlot.rowBase + uSlot.numRows);
  for (var r = r0; r < r1; r++) {
    let q = contextIndex(rowPos[r], uSlot.seqLen, uSlot.context, k);
    let tok = vocabToken(select(0u, seq[max(q, 0)], q >= 0), uSlot.vocab);
    let at = column + tok * uSlot.hidden;
    partials[at] = partials[at] + da[r * uSlot.hidden + j];
  }
}
