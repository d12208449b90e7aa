// Embedding gradient, gathered per (token, d) over rows and context slots in order, so no float
// atomics are needed (reference: embedGradCpu in mlp.ts):
//   demb[t, d] = sum_r sum_k [ctx_k(r) = t] dx[r, k * embed + d].
// Rows are rowBase .. rowBase + numRows - 1 of rowPos and dx.

struct EmbedGrad {
  numRows: u32,
  rowBase: u32,
  seqLen: u32,
  vocab: u32,
  context: u32,
  embed: u32,
  embOff: u32,
}

@group(0) @binding(0) var<uniform> u: EmbedGrad;
@group(0) @binding(1) var<storage, read> seq: array<u32>;           // [N, seqLen] tokens
@group(0) @binding(2) var<storage, read> rowPos: array<u32>;        // [rows] flat positions
@group(0) @binding(3) var<storage, read> dx: array<f32>;            // [rows, context * embed]
@group(0) @binding(4) var<storage, read_write> grads: array<f32>;   // flat gradient (paramLayout)

override workgroupSize: u32 = 64;

@compute @workgroup_size(workgroupSize)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let idx = flatWorkgroup(wid, nwg) * workgroupSize + lid;
  if (idx >= u.vocab * u.embed) {
    return;
  }
  let t = idx / u.embed;
  let d = idx % u.embed;
  let inputs = u.context * u.embed;
  var acc = 0.0;
  for (var r = u.rowBase; r < u.rowBase + u.numRows; r++) {
    let pos = rowPos[r];
    for (var k = 0u; k < u.context; k++) {
      let q = contextIndex(pos, u.seqLen, u.context, k);
      let tok = select(0u, seq[max(q, 0)], q >= 0);
      if (tok == t) {
        acc += dx[r * inputs + k * u.embed + d];
      }
    }
  }
  grads[u.embOff + idx] = acc;
}
