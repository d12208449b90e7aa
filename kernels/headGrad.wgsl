// Output-layer gradients, one thread per parameter, summed over rows in row order (reference:
// headGradCpu in mlp.ts):  dW2[j, v] = sum_r h[r, j] dz[r, v],  db2[v] = sum_r dz[r, v].
// Rows are rowBase .. rowBase + numRows - 1 of h and dz.

struct HeadGrad {
  numRows: u32,
  rowBase: u32,
  vocab: u32,
  hidden: u32,
  w2Off: u32,
  b2Off: u32,
}

@group(0) @binding(0) var<uniform> u: HeadGrad;
@group(0) @binding(1) var<storage, read> h: array<f32>;             // [rows, hidden]
@group(0) @binding(2) var<storage, read> dz: array<f32>;            // [rows, vocab]
@group(0) @binding(3) var<storage, read_write> grads: array<f32>;   // flat gradient (paramLayout)

override workgroupSize: u32 = 64;

@compute @workgroup_size(workgroupSize)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let idx = flatWorkgroup(wid, nwg) * workgroupSize + lid;
  let nW = u.hidden * u.vocab;
  if (idx >= nW + u.vocab) {
    return;
  }
  var acc = 0.0;
  if (idx < nW) {
    let j = idx / u.vocab;
    let v = idx % u.vocab;
    for (var r = u.rowBase; r < u.rowBase + u.numRows; r++) {
      acc += h[r * u.hidden + j] * dz[r * u.vocab + v];
    }
    grads[u.w2Off + idx] = acc;
  } else {
    let v = idx - nW;
    for (var r = u.rowBase; r < u.rowBase + u.numRows; r++) {
      acc += dz[r * u.vocab + v];
    }
    grads[u.b2Off + v] = acc;
  }
}
