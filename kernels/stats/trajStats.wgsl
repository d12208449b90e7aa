// Per-trajectory statistics, one thread per trajectory (reference: trajStatsCpu in trajStats.ts):
// masked token count, mean entropy, log sequence IS weight and the summed logit-gradient proxy.
// Rows are walked in order, as the reference does.

@group(0) @binding(0) var<uniform> u: TrajStatsParams;
@group(0) @binding(1) var<storage, read> mask: array<f32>;          // [N * tp] 0/1
@group(0) @binding(2) var<storage, read> logpOld: array<f32>;       // [N * tp]
@group(0) @binding(3) var<storage, read> logpRollout: array<f32>;   // [N * tp]
@group(0) @binding(4) var<storage, read> entropyOld: array<f32>;    // [N * tp]
@group(0) @binding(5) var<storage, read> sumP2Old: array<f32>;      // [N * tp]
@group(0) @binding(6) var<storage, read_write> out: array<TrajStats>; // [N]

override workgroupSize: u32 = 64;

@compute @workgroup_size(workgroupSize)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let n = flatWorkgroup(wid, nwg) * workgroupSize + lid;
  if (n >= u.numTraj) {
    return;
  }
  var len = 0.0;
  var ent = 0.0;
  var lis = 0.0;
  var g2 = 0.0;
  for (var j = 0u; j < u.tp; j++) {
    let i = n * u.tp + j;
    let m = mask[i];
    if (m == 0.0) {
      continue;
    }
    len += m;
    ent += m * entropyOld[i];
    lis += m * clamp(logpOld[i] - logpRollout[i], -20.0, 20.0);
    // 1 - 2 pi_a + sum pi^2 = (1 - pi_a)^2 + sum_{v != a} pi_v^2 >= 0 up to rounding.
    g2 += m * gradProxy(logpOld[i], sumP2Old[i]);
  }
  out[n] = TrajStats(len, select(0.0, ent / len, len > 0.0), lis, g2);
}
