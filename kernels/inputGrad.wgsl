// Input-layer gradients, pass 1 of a two-level row reduction (kernels/reduce.ts; reference:
// inputGradCpu in mlp.ts):  dW1[i, j] = sum_r x[r, i] da[r, j],  db1[j] = sum_r da[r, j],
// with x[r, k * embed + d] = emb[ctx_k(r), d]. One invocation per (row chunk, output): chunk c
// holds rows rowBase + c * rowsPerChunk onwards (at most rowsPerChunk, never past
// rowBase + numRows), summed in row order into partials[c * outputs + o], outputs =
// (context * embed + 1) * hidden laid out as W1 then b1. chunkSum.wgsl adds the chunks in order.

struct InputGrad {
  numRows: u32,
  rowBase: u32,
  seqLen: u32,
  context: u32,
  embed: u32,
  hidden: u32,
  embOff: u32,
  rowsPerChunk: u32,
  chunks: u32,
}

@group(0) @binding(0) var<uniform> u: InputGrad;
@group(0) @binding(1) var<storage, read> params: array<f32>;         // flat parameters
@group(0) @binding(2) var<storage, read> seq: array<u32>;            // [N, seqLen] tokens
@group(0) @binding(3) var<storage, read> rowPos: array<u32>;         // [rows] flat positions
@group(0) @binding(4) var<storage, read> da: array<f32>;             // [rows, hidden]
@group(0) @binding(5) var<storage, read_write> partials: array<f32>; // [chunks, (context * embed + 1) * hidden]

override workgroupSize: u32 = 64;

@compute @workgroup_size(workgroupSize)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let idx = flatWorkgroup(wid, nwg) * workgroupSize + lid;
  let nW = u.context * u.embed * u.hidden;
  let outputs = nW + u.hidden;
  if (idx >= outputs * u.chunks) {
    return;
  }
  let c = idx / outputs;
  let o = idx - c * outputs;
  let r0 = u.rowBase + c * u.rowsPerChunk;
  let r1 = min(r0 + u.rowsPerChunk, u.rowBase + u.numRows);
  var acc = 0.0;
  if (o < nW) {
    let i = o / u.hidden;
    let j = o % u.hidden;
    let k = i / u.embed;
    let d = i % u.embed;
    for (var r = r0; r < r1; r++) {
      let q = contextIndex(rowPos[r], u.seqLen, u.context, k);
      let tok = select(0u, seq[max(q, 0)], q >= 0);
      acc += params[u.embOff + tok * u.embed + d] * da[r * u.hidden + j];
    }
  } else {
    let j = o - nW;
    for (var r = r0; r < r1; r++) {
      acc += da[r * u.hidden + j];
    }
  }
  partials[idx] = acc;
}
