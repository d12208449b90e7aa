// The rows of a workgroup of whitening's one-dispatch apply (whitenMergeApply.wgsl,
// whitenFoldApply.wgsl): APPLY_ROWS_PER_THREAD rows a thread, r0 + lid + k workgroupSize, so that
// neighbouring threads take neighbouring rows. The rows are loaded before the block moments are
// merged, so their loads overlap the merge's tree. Needs the kernel's mask, adv and `u: Whiten`.

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
