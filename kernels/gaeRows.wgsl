// gae.wgsl with one thread per row instead of one per trajectory (host side: gaeRowsKernel in
// critic.ts). Row j's thread walks its trajectory from the last masked row down to j: the row steps
// of gae.wgsl's walk, in its order, so row j gets gae.wgsl's bits, and the thread writes that row
// only. A trajectory then costs tp(tp+1)/2 steps instead of tp, but neighbouring threads load
// neighbouring rows and store neighbouring words, where gae.wgsl's threads store tp words apart.
// On an H200 logitGrad ran 2.4x faster once neighbouring lanes wrote neighbouring words (its
// thread version wrote a row per thread; BENCHMARKS.md), while per-row loads that far apart did
// not hold sample back. A candidate for the hardware variant, timed beside gae and gaeUnrolled
// (the kernel bench's gaeRows). Uniform, bindings and the row step: gaeIo.wgsl.

override workgroupSize: u32 = 64;

@compute @workgroup_size(workgroupSize)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let i = flatWorkgroup(wid, nwg) * workgroupSize + lid;
  if (i >= u.numTraj * u.tp) {
    return;
  }
  // Masked-out rows, those after the last masked one included, get zeros as in gae.wgsl.
  if (mask[i] == 0.0) {
    adv[i] = 0.0;
    ret[i] = 0.0;
    return;
  }
  let n = i / u.tp;
  let base = n * u.tp;
  let j = i - base;
  var last = j;
  for (var k = j + 1u; k < u.tp; k++) {
    if (mask[base + k] != 0.0) {
      last = k;
    }
  }
  // The reward enters at the last masked row, through the walk as in gae.wgsl (a walk started from
  // constants lets a compiler fold (R - V) + V to R, a few ulps from the reference).
  let reward = trajIn[n].reward;
  var next = vec2f(0.0, 0.0);
  for (var k = last; k > j; k--) {
    if (mask[base + k] != 0.0) {
      next = gaeStep(critic[stateKey[base + k]], select(0.0, reward, k == last), next);
    }
  }
  let v = critic[stateKey[i]];
  let s = gaeStep(v, select(0.0, reward, j == last), next);
  adv[i] = s.y;
  ret[i] = s.y + v;
}
