// Back through W2 and tanh, one thread per (row, hidden unit) (reference: hiddenDaCpu in mlp.ts):
//   da[r, j] = (1 - h[r, j]^2) sum_v W2[j, v] dz[r, v]      [rows, hidden]
// summed over v in order. Row r is rowBase + r in h, dz and da. Nothing flows further back per row:
// slotGrad.wgsl gathers da by context slot and token, and firstLayerGrad.wgsl takes it from there.

struct HiddenGrad {
  numRows: u32,
  rowBase: u32,
  vocab: u32,
  hidden: u32,
  w2Off: u32,
}

@group(0) @binding(0) var<uniform> u: HiddenGrad;
@group(0) @binding(1) var<storage, read> params: array<f32>;        // flat parameters
@group(0) @binding(2) var<storage, read> h: array<f32>;             // [rows, hidden]
@group(0) @binding(3) var<storage, read> dz: array<f32>;            // [rows, vocab]
@group(0) @binding(4) var<storage, read_write> da: array<f32>;      // [rows, hidden]

override workgroupSize: u32 = 64;

@compute @workgroup_size(workgroupSize)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let i = flatWorkgroup(wid, nwg) * workgroupSize + lid;
  if (i >= u.numRows * u.hidden) {
    return;
  }
  let r = u.rowBase + i / u.hidden;
  let j = i % u.hidden;
  var acc = 0.0;
  for (var v = 0u; v < u.vocab; v++) {
    acc += params[u.w2Off + j * u.vocab + v] * dz[r * u.vocab + v];
  }
  let hj = h[r * u.hidden + j];
  da[r * u.hidden + j] = acc * (1.0 - hj * hj);
}
