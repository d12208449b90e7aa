// Masked batch whitening in three dispatches, each an entry point of this file (reference:
// whitenCpu in whiten.ts; host side: whitenKernel), over the declarations they share: the uniform,
// the buffers (each entry point binds the ones it uses), the moments record with Chan's merge and
// the fixed-order tree.
//   whitenBlocks:  workgroup w owns the fixed block of rows [w block, min((w + 1) block, numRows)) and
//            writes its masked moments (n, pivot, off, m2) to partials[w]. Thread t takes rows
//            w block + t, + workgroupSize, ... in that order, one at a time (Welford's update is
//            the merge with a one-row set), then a fixed tree merges the threads.
//   whitenCombine: one workgroup: thread b takes block b's moments, the fixed tree merges them (treeTop
//            levels), and partials[blocks] = (pivot, off, sd, n), sd = sqrt(m2 / (n - 1) + 1e-8),
//            1 when n <= 1, so the mean is pivot + off. Without masked rows pivot = off = 0.
//   whitenApply:   one thread per row, in place: adv[i] = mask[i] != 0 ? ((adv[i] - pivot) - off) / sd : 0.
// Every order depends on numRows alone: the same bits on every run.

@group(0) @binding(0) var<uniform> u: Whiten;
@group(0) @binding(1) var<storage, read> mask: array<f32>;                // [numRows] 0/1
@group(0) @binding(2) var<storage, read_write> adv: array<f32>;           // [numRows]
@group(0) @binding(3) var<storage, read_write> partials: array<vec4f>;    // [blocks + 1] moments

override workgroupSize: u32 = 256;

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

@compute @workgroup_size(workgroupSize)
fn whitenBlocks(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) lid: u32) {
  // blocks <= workgroupSize: a 1-D grid.
  let w = wid.x;
  let start = w * u.block;
  let end = min(start + u.block, u.numRows);
  var m = vec4f(0.0);
  for (var i = start + lid; i < end; i += workgroupSize) {
    // Both loads first, so they do not wait on each other.
    let x = adv[i];
    if (mask[i] != 0.0) {
      m = mergeMoments(m, vec4f(1.0, x, 0.0, 0.0));
    }
  }
  let total = reduceMoments(lid, m, workgroupSize / 2u);
  if (lid == 0u) {
    partials[w] = total;
  }
}

@compute @workgroup_size(workgroupSize)
fn whitenCombine(@builtin(local_invocation_index) lid: u32) {
  var b = vec4f(0.0);
  if (lid < u.blocks) {
    b = partials[lid];
  }
  let m = reduceMoments(lid, b, u.treeTop);
  if (lid == 0u) {
    var sd = 1.0;
    if (m.x > 1.0) {
      sd = sqrt(m.w / (m.x - 1.0) + 1e-8);
    }
    partials[u.blocks] = vec4f(m.y, m.z, sd, m.x);
  }
}

@compute @workgroup_size(workgroupSize)
fn whitenApply(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let i = flatWorkgroup(wid, nwg) * workgroupSize + lid;
  if (i >= u.numRows) {
    return;
  }
  let s = partials[u.blocks];
  // With one masked row, adv - pivot is exactly 0: the pivot is that row's value and off is 0.
  adv[i] = select(0.0, ((adv[i] - s.x) - s.y) / s.z, mask[i] != 0.0);
}
