// ARLArena's diagnosis (reference: negOutShareCpu in negOutShare.ts, which has the definition): the
// share of the update's |dL/dlogp| on negative-advantage policy tokens whose token ratio lies outside
// a strict clip's bounds [loLog, hiLog] (log 0.8, log 1.2). One workgroup: thread t sums rows t,
// t + workgroupSize, ... in order, then a fixed tree adds the threads' sums, so the result is the
// same bits on every run; out[0] = num / den, 0 when den is 0.

@group(0) @binding(0) var<uniform> u: NegOutShare;
@group(0) @binding(1) var<storage, read> mask: array<f32>;     // [numRows] 0/1
@group(0) @binding(2) var<storage, read> adv: array<f32>;      // [numRows]
@group(0) @binding(3) var<storage, read> logp: array<f32>;     // [numRows] (each row's last forward)
@group(0) @binding(4) var<storage, read> logpOld: array<f32>;  // [numRows]
@group(0) @binding(5) var<storage, read> dlogp: array<f32>;    // [numRows] d(aggregated loss)/d(logp)
@group(0) @binding(6) var<storage, read_write> out: array<f32>; // [1]

override workgroupSize: u32 = 256;

var<workgroup> tree: array<vec2f, workgroupSize>;

@compute @workgroup_size(workgroupSize)
fn main(@builtin(local_invocation_index) lid: u32) {
  var acc = vec2f(0.0);  // (num, den)
  for (var i = lid; i < u.numRows; i += workgroupSize) {
    if (mask[i] == 0.0) {
      continue;
    }
    let g = abs(dlogp[i]);
    let lam = clamp(logp[i] - logpOld[i], -20.0, 20.0);
    let outside = lam < u.loLog || lam > u.hiLog;
    acc += vec2f(select(0.0, g, adv[i] < 0.0 && outside), g);
  }
  tree[lid] = acc;
  workgroupBarrier();
  for (var s = workgroupSize / 2u; s > 0u; s >>= 1u) {
    if (lid < s) {
      tree[lid] += tree[lid + s];
    }
    workgroupBarrier();
  }
  if (lid == 0u) {
    let t = tree[0];
    out[0] = select(0.0, t.x / t.y, t.y > 0.0);
  }
}
