// gae.wgsl with the rows per trajectory fixed when the pipeline is compiled (the override tpSize;
// host side: gaeUnrolledKernel in critic.ts), as sampleUnrolled.wgsl fixes the vocabulary: the
// loops over a trajectory unroll, so its masks go out in one batch of loads, then its state keys,
// then its critic values, and the walk reads them from registers. gae.wgsl waits out those three
// latencies once per four rows; here once per trajectory.
// The walk covers every row from the last down: rows after the last masked one are masked out and
// get zeros from gaeRow as in gae.wgsl, and the reward enters at the last masked row, so the
// arithmetic is gae.wgsl's, row for row. Keys are loaded for masked-out rows too (every row's key
// is < tableSize, gaeIo.wgsl), which keeps the loads independent of where the walk starts.
// Uniform, bindings and the row step: gaeIo.wgsl (u.tp is tpSize).

const GAE_UNROLLED_MAX_TP: u32 = 64u;

override workgroupSize: u32 = 64;
// The default is for compilation checks; every call sets it (GAE_UNROLLED_MAX_TP in critic.ts).
override tpSize: u32 = 64;

@compute @workgroup_size(workgroupSize)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let block = flatWorkgroup(wid, nwg);
  let n = block * workgroupSize + lid;
  if (n < u.numTraj) {
    walkTrajectory(n);
  }
  // Every invocation reaches the whitening hooks' barriers (whitenFold.wgsl; a no-op without).
  foldFinish(lid, block, block * workgroupSize < u.numTraj, u.numTraj * tpSize);
}

fn walkTrajectory(n: u32) {
  let base = n * tpSize;
  var m: array<f32, GAE_UNROLLED_MAX_TP>;
  for (var j = 0u; j < tpSize; j++) {
    m[j] = mask[base + j];
  }
  var key: array<u32, GAE_UNROLLED_MAX_TP>;
  for (var j = 0u; j < tpSize; j++) {
    key[j] = stateKey[base + j];
  }
  var v: array<f32, GAE_UNROLLED_MAX_TP>;
  for (var j = 0u; j < tpSize; j++) {
    v[j] = critic[key[j]];
  }
  let reward = trajIn[n].reward;
  var last = -1;
  for (var j = 0u; j < tpSize; j++) {
    if (m[j] != 0.0) {
      last = i32(j);
    }
  }
  var next = vec2f(0.0, 0.0);
  for (var j = i32(tpSize) - 1; j >= 0; j--) {
    next = gaeRow(base + u32(j), m[j], v[j], select(0.0, reward, j == last), next);
  }
}
