// Subgroups over rows of logits, for the subgroup variants of sample, tokenStats and logitGrad.
// They define subgroupRows(r, live, lanes) for four rows of the call at once (components of r;
// `live` says which are rows of the call, the others repeat r.x and must not be written), bind `z`
// [rows, vocab] and `u.numRows` (their thread version's source, which comes first, declares them
// and workgroupSize), and join this after their own source (ROWS_PER_GROUP, a multiple
// of 4, is appended by the host). Neighbouring lanes read neighbouring logits, so a row is read
// in whole cache lines, where one thread per row strides vocab * 4 bytes between neighbours.
//
// Why four rows at once: with one row, a subgroup's loads, reductions and stores for a row were a
// chain of dependent steps with one row's bytes in flight, and on an H200 the kernel took the
// chain's latency times the rows per subgroup (logitGrad 0.121 ms at 589,824 rows, 21 % of a
// copy). Four rows are four independent chains interleaved: every load of a step is issued before
// any reduction, and each reduction runs on a vec4 (one component per row, the same operations
// per row as one row at a time).
//
// Subgroup s of a workgroup takes rows 4s .. 4s + 3, then 4 (s + num_subgroups) .., of the
// workgroup's ROWS_PER_GROUP, by the subgroup_id builtin rather than by invocation index: WebGPU
// does not promise which invocations form a subgroup, nor that every subgroup is full. Lanes work
// by their rank among the active lanes (subgroupLanes.wgsl), for the same reason.

// Logit v of the four rows that start at `off`.
fn rowLogits(off: vec4u, v: u32) -> vec4f {
  return vec4f(z[off.x + v], z[off.y + v], z[off.z + v], z[off.w + v]);
}

fn isMaskedRows(z: vec4f) -> vec4<bool> {
  return z <= vec4f(MASKED_LOGIT);
}

// Per row (component): max m and sum s of exp(z - m) over the lanes (rowMaxSumExp in
// rowSoftmax.wgsl, summed in another order): lse = m + log(s).
struct RowsMaxSum {
  m: vec4f,
  s: vec4f,
}

fn rowMaxSumExpSubgroup(off: vec4u, vocab: u32, lanes: vec2u) -> RowsMaxSum {
  var m = vec4f(-F32_MAX);
  for (var v = lanes.x; v < vocab; v += lanes.y) {
    m = max(m, rowLogits(off, v));
  }
  m = subgroupMax(m);
  var s = vec4f(0.0);
  for (var v = lanes.x; v < vocab; v += lanes.y) {
    s += exp(rowLogits(off, v) - m);
  }
  return RowsMaxSum(m, subgroupAdd(s));
}

@compute @workgroup_size(workgroupSize)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(subgroup_id) sid: u32,
  @builtin(num_subgroups) numSubgroups: u32,
) {
  let lanes = subgroupLanes();
  let first = flatWorkgroup(wid, nwg) * ROWS_PER_GROUP;
  for (var j = 4u * sid; j < ROWS_PER_GROUP; j += 4u * numSubgroups) {
    let r0 = first + j;
    if (r0 >= u.numRows) {
      break;
    }
    let r = r0 + vec4u(0u, 1u, 2u, 3u);
    let live = r < vec4u(u.numRows);
    subgroupRows(select(vec4u(r0), r, live), live, lanes);
  }
}
