// Gradient of the loss w.r.t. the raw logits, one thread per row (reference: logitGradCpu in logitGrad.ts):
//   dz[r, v] = g_r * (onehot(a_r)_v - pi_v) / temperature,   g_r = dLoss/dlogp_r.
// Row r is rowBase + r in z, dlogp and dz. Forbidden tokens have pi = 0 and gradient 0.
// The uniform and bindings here are logitGradSubgroup.wgsl's too (a subgroup per four rows): its
// source starts with this file.

@group(0) @binding(0) var<uniform> u: LogitGrad;
@group(0) @binding(1) var<storage, read> z: array<f32>;            // [rows, vocab] masked logits
@group(0) @binding(2) var<storage, read> seq: array<u32>;          // [N, seqLen] tokens
@group(0) @binding(3) var<storage, read> rowPos: array<u32>;       // [rows] flat positions
@group(0) @binding(4) var<storage, read> dlogp: array<f32>;        // [rows]
@group(0) @binding(5) var<storage, read_write> dz: array<f32>;     // [rows, vocab]

override workgroupSize: u32 = 64;

@compute @workgroup_size(workgroupSize)
fn logitGradRows(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let i = flatWorkgroup(wid, nwg) * workgroupSize + lid;
  if (i >= u.numRows) {
    return;
  }
  let row = u.rowBase + i;
  let off = row * u.vocab;
  let g = dlogp[row];
  if (g == 0.0) {
    for (var v = 0u; v < u.vocab; v++) {
      dz[off + v] = 0.0;
    }
    return;
  }
  let ms = rowMaxSumExp(off, u.vocab);
  let m = ms.x;
  let s = ms.y;
  let ls = log(s);
  let a = seq[rowPos[row]];
  for (var v = 0u; v < u.vocab; v++) {
    let zv = z[off + v];
    // pi = exp(z - lse) taken as exp((z - m) - log s): exact shift, no rounding of a large lse.
    let p = select(exp((zv - m) - ls), 0.0, isMasked(zv));
    dz[off + v] = (g * (select(0.0, 1.0, v == a) - p)) / u.temperature;
  }
}
