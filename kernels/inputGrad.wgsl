// Input-layer gradients, one thread per parameter, summed over rows in row order (reference:
// inputGradCpu in mlp.ts):  dW1[i, j] = sum_r x[r, i] da[r, j],  db1[j] = sum_r da[r, j],
// with x[r, k * embed + d] = emb[ctx_k(r), d]. Rows are rowBase .. rowBase + numRows - 1.

struct InputGrad {
  numRows: u32,
  rowBase: u32,
  seqLen: u32,
  context: u32,
  embed: u32,
  hidden: u32,
  embOff: u32,
  w1Off: u32,
  b1Off: u32,
}

@group(0) @binding(0) var<uniform> u: InputGrad;
@group(0) @binding(1) var<storage, read> params: array<f32>;        // flat parameters
@group(0) @binding(2) var<storage, read> seq: array<u32>;           // [N, seqLen] tokens
@group(0) @binding(3) var<storage, read> rowPos: array<u32>;        // [rows] flat positions
@group(0) @binding(4) var<storage, read> da: array<f32>;            // [rows, hidden]
@group(0) @binding(5) var<storage, read_write> grads: array<f32>;   // flat gradient (paramLayout)

override workgroupSize: u32 = 64;

@compute @workgroup_size(workgroupSize)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let idx = flatWorkgroup(wid, nwg) * workgroupSize + lid;
  let nW = u.context * u.embed * u.hidden;
  if (idx >= nW + u.hidden) {
    return;
  }
  var acc = 0.0;
  if (idx < nW) {
    let i = idx / u.hidden;
    let j = idx % u.hidden;
    let k = i / u.embed;
    let d = i % u.embed;
    for (var r = u.rowBase; r < u.rowBase + u.numRows; r++) {
      let q = contextIndex(rowPos[r], u.seqLen, u.context, k);
      let tok = select(0u, seq[max(q, 0)], q >= 0);
      acc += params[u.embOff + tok * u.embed + d] * da[r * u.hidden + j];
    }
    grads[u.w1Off + idx] = acc;
  } else {
    let j = idx - nW;
    for (var r = u.rowBase; r < u.rowBase + u.numRows; r++) {
      acc += da[r * u.hidden + j];
    }
    grads[u.b1Off + j] = acc;
  }
}
