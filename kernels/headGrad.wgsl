// Output-layer gradients, pass 1 of a two-level row reduction (kernels/reduce.ts; reference:
// headGradCpu in mlp.ts):  dW2[j, v] = sum_r h[r, j] dz[r, v],  db2[v] = sum_r dz[r, v].
// One invocation per (row chunk, output): chunk c holds rows rowBase + c * rowsPerChunk onwards
// (at most rowsPerChunk of them, never past rowBase + numRows), summed in row order into
// partials[c * outputs + o], outputs = (hidden + 1) * vocab laid out as W2 then b2. chunkSum.wgsl
// then adds the chunks in order into grads.

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

@compute @workgroup_size(workgroupSize)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let idx = flatWorkgroup(wid, nwg) * workgroupSize + lid;
  let nW = u.hidden * u.vocab;
  let outputs = nW + u.vocab;
  if (idx >= outputs * u.chunks) {
    return;
  }
  let c = idx / outputs;
  let o = idx - c * outputs;
  let r0 = u.rowBase + c * u.rowsPerChunk;
  let r1 = min(r0 + u.rowsPerChunk, u.rowBase + u.numRows);
  var acc = 0.0;
  if (o < nW) {
    let j = o / u.vocab;
    let v = o % u.vocab;
    for (var r = r0; r < r1; r++) {
      acc += h[r * u.hidden + j] * dz[r * u.vocab + v];
    }
  } else {
    let v = o - nW;
    for (var r = r0; r < r1; r++) {
      acc += dz[r * u.vocab + v];
    }
  }
  partials[idx] = acc;
}
