// Whitening's pass 1 done by the kernel that writes the rows (the hardware variant; host side:
// WHITEN_FOLD_HOOKS in whiten.ts, joined after the producer's own WGSL). The producer
// (advantage.wgsl, gaeUnrolled.wgsl) calls foldRow for each row it writes, foldRowAt for a row
// whose mask it has not loaded, and foldFinish once at the end of main in uniform control flow:
// each workgroup then leaves the masked moments of the rows it wrote as four words at
// adv[tail + 4 (its index)], tail = the row count, and whitenFoldApply.wgsl merges them in every
// workgroup of rows. Without it whitening reads every row and its mask once more in a pass of
// its own, a dependent dispatch. Behind the rows of `adv`, not in a binding of their own:
// advantage.wgsl has the 8 storage buffers WebGPU guarantees. The order of every merge is fixed
// by the producer's layout: the same bits on every run. Needs the producer's `mask`, `adv` and
// `workgroupSize`; whitenMoments.wgsl is joined after.

// This invocation's rows so far, (n, pivot, off, m2) as in whitenMoments.wgsl; zero: none yet.
var<private> foldAcc: vec4f;

fn foldRow(x: f32, m: f32) {
  if (m != 0.0) {
    foldAcc = mergeMoments(foldAcc, vec4f(1.0, x, 0.0, 0.0));
  }
}

fn foldRowAt(i: u32, x: f32) {
  foldRow(x, mask[i]);
}

// `live`: whether the workgroup owns rows (a 2-D grid pads past the last one); `tail`: the rows.
fn foldFinish(lid: u32, block: u32, live: bool, tail: u32) {
  let t = reduceMoments(lid, foldAcc, workgroupSize / 2u);
  if (lid == 0u && live) {
    let at = tail + 4u * block;
    adv[at] = t.x;
    adv[at + 1u] = t.y;
    adv[at + 2u] = t.z;
    adv[at + 3u] = t.w;
  }
}
