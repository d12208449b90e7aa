// Output-layer gradients, pass 1 of a two-level row reduction (kernels/reduce.ts; reference:
// headGradCpu in mlp.ts):  dW2[j, v] = sum_r h[r, j] dz[r, v],  db2[v] = sum_r dz[r, v]; the bias
// is hidden row j = hidden with h = 1. One invocation per (row chunk, hidden row j, block of 4
// vocabulary entries v0 .. v0 + 3): it reads h[r, j] once per row for its 4 outputs. Chunk c
// holds rows rowBase + c * rowsPerChunk onwards (at most rowsPerChunk, never past
// rowBase + numRows); each output is summed in row order into partials[c * outputs + j * vocab + v],
// outputs = (hidden + 1) * vocab (W2 then b2, the gradient's own layout). chunkSum.wgsl then adds
// the chunks in order.

struct HeadGrad {
  numRows: u32,
  rowBase: u32,
  vocab: u32,
  hidden: u32,
  rowsPerChunk: u32,
  chunks: u32,
}

@group(0) @binding(0) var<uniform> u: HeadGrad;
@group(0) @binding(1) var<storage, read> h: array<f32>;              // [rows, hidden]
@group(0) @binding(2) var<storage, read> dz: array<f32>;             // [rows, vocab]
@group(0) @binding(3) var<storage, read_write> partials: array<f32>; // [chunks, (hidden + 1) * vocab]

override workgroupSize: u32 = 64;
// Vocabulary entries per invocation (HEAD_GRAD_BLOCK in mlpKernels.ts).
const VB: u32 = 4u;

@compute @workgroup_size(workgroupSize)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let idx = flatWorkgroup(wid, nwg) * workgroupSize + lid;
  let blocks = (u.vocab + VB - 1u) / VB;
  let perChunk = (u.hidden + 1u) * blocks;
  if (idx >= perChunk * u.chunks) {
    return;
  }
  let c = idx / perChunk;
  let rest = idx - c * perChunk;
  let j = rest / blocks;
  let v0 = (rest - j * blocks) * VB;
  // The last block may be partial: its spare lanes read a valid dz entry and are never written.
  let last = u.vocab - 1u;
  let v1 = min(v0 + 1u, last);
  let v2 = min(v0 + 2u, last);
  let v3 = min(v0 + 3u, last);
  let r0 = u.rowBase + c * u.rowsPerChunk;
  let r1 = min(r0 + u.rowsPerChunk, u.rowBase + u.numRows);
  var acc = vec4<f32>(0.0);
  for (var r = r0; r < r1; r++) {
    var x = 1.0;
    if (j < u.hidden) {
      x = h[r * u.hidden + j];
    }
    let row = r * u.vocab;
    acc += x * vec4<f32>(dz[row + v0], dz[row + v1], dz[row + v2], dz[row + v3]);
  }
  let at = c * (u.hidden + 1u) * u.vocab + j * u.vocab + v0;
  partials[at] = acc.x;
  if (v0 + 1u < u.vocab) {
    partials[at + 1u] = acc.y;
  }
  if (v0 + 2u < u.vocab) {
    partials[at + 2u] = acc.z;
  }
  if (v0 + 3u < u.vocab) {
    partials[at + 3u] = acc.w;
  }
}
