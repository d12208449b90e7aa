// One subgroup per row of logits, for the subgroup variants of sample, tokenStats and logitGrad.
// They define subgroupRow(r, lanes) for row r of the call, bind `z` [rows, vocab] and `u.numRows`,
// and join this after their own source (ROWS_PER_GROUP is put in front by the host); the entry
// point below hands each row to one subgroup. Neighbouring lanes read neighbouring logits, so a
// row is read in whole cache lines, where one thread per row strides vocab * 4 bytes between
// neighbours.
//
// Subgroup s of a workgroup takes rows s, s + num_subgroups, ... of the workgroup's ROWS_PER_GROUP,
// by the subgroup_id builtin rather than by invocation index: WebGPU does not promise which
// invocations form a subgroup, nor that every subgroup is full. Lanes work by their rank among
// the active lanes (subgroupLanes.wgsl), for the same reason.

// Row max and sum of exp(z - max) over the lanes (rowMaxSumExp in rowSoftmax.wgsl, summed in
// another order): lse = m + log(s).
fn rowMaxSumExpSubgroup(off: u32, vocab: u32, lanes: vec2u) -> vec2f {
  var m = -F32_MAX;
  for (var v = lanes.x; v < vocab; v += lanes.y) {
    m = max(m, z[off + v]);
  }
  m = subgroupMax(m);
  var s = 0.0;
  for (var v = lanes.x; v < vocab; v += lanes.y) {
    s += exp(z[off + v] - m);
  }
  return vec2f(m, subgroupAdd(s));
}

override workgroupSize: u32 = 64;

@compute @workgroup_size(workgroupSize)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(subgroup_id) sid: u32,
  @builtin(num_subgroups) numSubgroups: u32,
) {
  let lanes = subgroupLanes();
  let first = flatWorkgroup(wid, nwg) * ROWS_PER_GROUP;
  for (var j = sid; j < ROWS_PER_GROUP; j += numSubgroups) {
    if (first + j >= u.numRows) {
      break;
    }
    subgroupRow(first + j, lanes);
  }
}
