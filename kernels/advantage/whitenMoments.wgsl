// Declarations shared by the three dispatches of masked batch whitening (whiten.wgsl,
// whitenCombine.wgsl, whitenApply.wgsl; host side: whitenKernel in whiten.ts), joined after each
// one's own source: the uniform, the moments record with Chan's merge, and the fixed-order tree.

struct Whiten {
  numRows: u32,
  block: u32,     // rows per block of pass 1 (whitenBlocks in whiten.ts)
  blocks: u32,    // ceil(numRows / block) <= workgroupSize
  treeTop: u32,   // the combine's first tree stride: nextPow2(blocks) / 2 (0 for one block)
}

// Masked moments of a set of rows, vec4f(n, pivot, off, m2): n rows, mean = pivot + off, m2 = the
// sum of squared deviations from the mean. pivot is one of the set's f32 values, so every
// difference rounded below (x - pivot, pivot - pivot, the offsets) is of the size of the
// deviations: a common offset (1e6 + noise) costs no low bits. n is an f32 count, exact below
// 2^24 rows (whitenKernel refuses more).

// Chan, Golub & LeVeque (1979): the moments of the union of a and b, keeping a's pivot. An empty
// side (n = 0) returns the other one unchanged, so the empty slots of a tree change nothing.
fn mergeMoments(a: vec4f, b: vec4f) -> vec4f {
  if (b.x == 0.0) {
    return a;
  }
  if (a.x == 0.0) {
    return b;
  }
  let n = a.x + b.x;
  let d = (b.y - a.y) + (b.z - a.z);   // mean_b - mean_a, pivots first
  let w = b.x / n;
  return vec4f(n, a.y, a.z + d * w, a.w + b.w + d * d * a.x * w);
}

var<workgroup> tree: array<vec4f, workgroupSize>;

// Merges slot lid with slot lid + s for s = top, top / 2, ..., 1: an order fixed by `top`; slots
// from 2 top on are not read. Every thread gets the result; call in uniform control flow.
fn reduceMoments(lid: u32, m: vec4f, top: u32) -> vec4f {
  tree[lid] = m;
  workgroupBarrier();
  for (var s = top; s > 0u; s >>= 1u) {
    if (lid < s) {
      tree[lid] = mergeMoments(tree[lid], tree[lid + s]);
    }
    workgroupBarrier();
  }
  let total = tree[0];
  workgroupBarrier();
  return total;
}
