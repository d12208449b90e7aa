// The entry point of whitening's apply with the merge in every workgroup (whitenMergeApply.wgsl,
// whitenFoldApply.wgsl): each workgroup loads its rows, APPLY_ROWS_PER_THREAD a thread at
// r0 + lid + k workgroupSize (neighbouring threads on neighbouring rows), merges every block's
// moments (thread t blocks t, t + workgroupSize, ..., in that order: with at most workgroupSize
// blocks, its one block), then the fixed tree, and whitens its rows. The rows are loaded before
// the merge, so their loads overlap its tree. Needs the kernel's mask, adv, `u: Whiten`,
// workgroupSize and `fn blockMoments(j: u32) -> vec4f`, block j's moments record.

const APPLY_ROWS_PER_THREAD: u32 = 8u;

struct ApplyRows {
  x: array<f32, APPLY_ROWS_PER_THREAD>,
  m: array<f32, APPLY_ROWS_PER_THREAD>,
}

fn loadApplyRows(r0: u32, lid: u32) -> ApplyRows {
  var rows: ApplyRows;
  for (var k = 0u; k < APPLY_ROWS_PER_THREAD; k++) {
    let i = r0 + lid + k * workgroupSize;
    if (i < u.numRows) {
      rows.x[k] = adv[i];
      rows.m[k] = mask[i];
    }
  }
  return rows;
}

// whitenApply.wgsl's arithmetic with the merged moments t of every block.
fn writeApplyRows(r0: u32, lid: u32, rows: ApplyRows, t: vec4f) {
  let sd = whitenSd(t);
  for (var k = 0u; k < APPLY_ROWS_PER_THREAD; k++) {
    let i = r0 + lid + k * workgroupSize;
    if (i < u.numRows) {
      adv[i] = whitenRow(rows.x[k], rows.m[k], t.y, t.z, sd);
    }
  }
}

@compute @workgroup_size(workgroupSize)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let r0 = flatWorkgroup(wid, nwg) * workgroupSize * APPLY_ROWS_PER_THREAD;
  let rows = loadApplyRows(r0, lid);
  // Uniform control flow: no thread has returned.
  var b = vec4f(0.0);
  for (var j = lid; j < u.blocks; j += workgroupSize) {
    b = mergeMoments(b, blockMoments(j));
  }
  writeApplyRows(r0, lid, rows, reduceMoments(lid, b, u.treeTop));
}
