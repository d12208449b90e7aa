// Input-layer gradients, pass 1 of a two-level row reduction (kernels/reduce.ts; reference:
// inputGradCpu in mlp.ts):  dW1[i, j] = sum_r x[r, i] da[r, j],  db1[j] = sum_r da[r, j],
// with x[r, k * embed + d] = emb[ctx_k(r), d]; the bias is input row i = context * embed with
// x = 1. One invocation per (row chunk, input i, block of 4 hidden units j0 .. j0 + 3): it
// gathers x[r, i] once per row for its 4 outputs. Chunk c holds rows rowBase + c * rowsPerChunk
// onwards (at most rowsPerChunk, never past rowBase + numRows); each output is summed in row order
// into partials[c * outputs + i * hidden + j], outputs = (context * embed + 1) * hidden (W1 then
// b1, the gradient's own layout). chunkSum.wgsl adds the chunks in order.

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
// Hidden units per invocation (INPUT_GRAD_BLOCK in mlp.ts).
const JB: u32 = 4u;

@compute @workgroup_size(workgroupSize)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let idx = flatWorkgroup(wid, nwg) * workgroupSize + lid;
  let inputs = u.context * u.embed;
  let blocks = (u.hidden + JB - 1u) / JB;
  let perChunk = (inputs + 1u) * blocks;
  if (idx >= perChunk * u.chunks) {
    return;
  }
  let c = idx / perChunk;
  let rest = idx - c * perChunk;
  let i = rest / blocks;
  let j0 = (rest - i * blocks) * JB;
  // The last block may be partial: its spare lanes read a valid da entry and are never written.
  let last = u.hidden - 1u;
  let j1 = min(j0 + 1u, last);
  let j2 = min(j0 + 2u, last);
  let j3 = min(j0 + 3u, last);
  let k = i / u.embed;
  let d = i % u.embed;
  let r0 = u.rowBase + c * u.rowsPerChunk;
  let r1 = min(r0 + u.rowsPerChunk, u.rowBase + u.numRows);
  var acc = vec4<f32>(0.0);
  for (var r = r0; r < r1; r++) {
    var x = 1.0;
    if (i < inputs) {
      let q = contextIndex(rowPos[r], u.seqLen, u.context, k);
      let tok = select(0u, seq[max(q, 0)], q >= 0);
      x = params[u.embOff + tok * u.embed + d];
    }
    let row = r * u.hidden;
    acc += x * vec4<f32>(da[row + j0], da[row + j1], da[row + j2], da[row + j3]);
  }
  let at = c * (inputs + 1u) * u.hidden + i * u.hidden + j0;
  partials[at] = acc.x;
  if (j0 + 1u < u.hidden) {
    partials[at + 1u] = acc.y;
  }
  if (j0 + 2u < u.hidden) {
    partials[at + 2u] = acc.z;
  }
  if (j0 + 3u < u.hidden) {
    partials[at + 3u] = acc.w;
  }
}
