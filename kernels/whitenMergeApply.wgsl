// Masked batch whitening, dispatch 2 of 2 in the hardware variant where no producer folds pass 1
// in (host side: whitenMergedKernel in whiten.ts; dispatch 1 is whiten.wgsl; the fold's one
// dispatch is whitenFoldApply.wgsl; shared declarations: whitenMoments.wgsl):
// whitenCombine.wgsl and whitenApply.wgsl in one. Every workgroup merges the block moments in the
// combine's tree (the same order, so the same mean and sd, bit for bit) and then whitens its
// rows, APPLY_ROWS_PER_THREAD a thread (whitenApplyEntry.wgsl), as whitenApply.wgsl does one.
// Why: on an H200 each dependent dispatch costs ~3 us whatever its size (the three dispatches took
// 9.7 us at 9,216 rows and 12 us at 589,824), more than a copy of the rows' bytes. The rows are
// loaded before the merge, so their loads overlap its tree. On SwiftShader, where every workgroup
// with barriers costs ~0.5 ms, the thread variant keeps the three dispatches.

@group(0) @binding(0) var<uniform> u: Whiten;
@group(0) @binding(1) var<storage, read> mask: array<f32>;                // [numRows] 0/1
@group(0) @binding(2) var<storage, read> partials: array<vec4f>;          // [blocks + 1]
@group(0) @binding(3) var<storage, read_write> adv: array<f32>;           // [numRows]

override workgroupSize: u32 = 256;

// whitenCombine.wgsl's input: the blocks of pass 1, at most workgroupSize of them.
fn blockMoments(j: u32) -> vec4f {
  return partials[j];
}
