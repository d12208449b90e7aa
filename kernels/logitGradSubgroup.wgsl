// logitGrad.wgsl with one subgroup per row (rowSubgroup.wgsl): the row's max and sum from subgroup
// reductions, then each lane writes every lanes.y-th entry of dz, so neighbouring lanes write
// neighbouring words.

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
    let row = u.rowBase + first + j;
    let off = row * u.vocab;
    let g = dlogp[row];
    if (g == 0.0) {
      for (var v = lanes.x; v < u.vocab; v += lanes.y) {
        dz[off + v] = 0.0;
      }
      continue;
    }
    let ms = rowMaxSumExpSubgroup(off, u.vocab, lanes);
    let m = ms.x;
    let ls = log(ms.y);
    let a = seq[rowPos[row]];
    for (var v = lanes.x; v < u.vocab; v += lanes.y) {
      let zv = z[off + v];
      let p = select(exp((zv - m) - ls), 0.0, isMasked(zv));
      dz[off + v] = (g * (select(0.0, 1.0, v == a) - p)) / u.temperature;
    }
  }
}
