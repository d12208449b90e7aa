// Back through tanh and into the concatenated embeddings, one workgroup per row (reference:
// hiddenGradCpu in mlp.ts):
//   da[r, j] = (1 - h[r, j]^2) sum_v W2[j, v] dz[r, v],   dx[r, i] = sum_j W1[i, j] da[r, j].
// Row r is rowBase + r in h, dz, da and dx.

struct HiddenGrad {
  numRows: u32,
  rowBase: u32,
  vocab: u32,
  hidden: u32,
  inputs: u32,
  w1Off: u32,
  w2Off: u32,
}

@group(0) @binding(0) var<uniform> u: HiddenGrad;
@group(0) @binding(1) var<storage, read> params: array<f32>;        // flat parameters
@group(0) @binding(2) var<storage, read> h: array<f32>;             // [rows, hidden]
@group(0) @binding(3) var<storage, read> dz: array<f32>;            // [rows, vocab]
@group(0) @binding(4) var<storage, read_write> da: array<f32>;      // [rows, hidden]
@group(0) @binding(5) var<storage, read_write> dx: array<f32>;      // [rows, inputs = context * embed]

override workgroupSize: u32 = 64;
const MAX_HIDDEN: u32 = 1024u;

var<workgroup> das: array<f32, MAX_HIDDEN>;

@compute @workgroup_size(workgroupSize)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let i0 = flatWorkgroup(wid, nwg);
  if (i0 >= u.numRows) {
    return;
  }
  let r = u.rowBase + i0;
  for (var j = lid; j < u.hidden; j += workgroupSize) {
    var acc = 0.0;
    for (var v = 0u; v < u.vocab; v++) {
      acc += params[u.w2Off + j * u.vocab + v] * dz[r * u.vocab + v];
    }
    let hj = h[r * u.hidden + j];
    let g = acc * (1.0 - hj * hj);
    das[j] = g;
    da[r * u.hidden + j] = g;
  }
  workgroupBarrier();
  for (var i = lid; i < u.inputs; i += workgroupSize) {
    var acc = 0.0;
    for (var j = 0u; j < u.hidden; j++) {
      acc += params[u.w1Off + i * u.hidden + j] * das[j];
    }
    dx[r * u.inputs + i] = acc;
  }
}
