// The rollout-training mismatch of an update (reference: mismatchStatsCpu in mismatchStats.ts,
// which has the definitions). One workgroup: thread t walks trajectories t, t + workgroupSize, ...
// and their rows in order, then fixed trees add the threads' sums and counts, so the result is the
// same bits on every run; histogram bins are u32 workgroup atomics, exact in any order.
// out: [logratio, k3, chi2 token, chi2 seq, ppl ratio, hist[HIST_BINS]].

@group(0) @binding(0) var<uniform> u: MismatchStats;
@group(0) @binding(1) var<storage, read> mask: array<f32>;         // [numTraj * tp] 0/1
@group(0) @binding(2) var<storage, read> logpOld: array<f32>;      // [numTraj * tp] the trainer's
@group(0) @binding(3) var<storage, read> logpRollout: array<f32>;  // [numTraj * tp] the sampler's
@group(0) @binding(4) var<storage, read_write> out: array<f32>;    // [MISMATCH_WORDS]

override workgroupSize: u32 = 256;
const HIST_BINS: u32 = 24u;
const BOUND: f32 = 20.0;

var<workgroup> treeA: array<vec4f, workgroupSize>;
var<workgroup> treeB: array<vec4f, workgroupSize>;
var<workgroup> hist: array<atomic<u32>, HIST_BINS>;

// exp(x) - 1 and exp(x) - 1 - x: near 0 the f32 subtraction would keep none of the digits that
// matter (a bf16 sampler's log-ratios are ~1e-3), so a Taylor polynomial there, as in the reference.
fn expm1s(x: f32) -> f32 {
  if (abs(x) < 0.125) {
    return x * (1.0 + x * (0.5 + x * (1.0 / 6.0 + x * (1.0 / 24.0 + x / 120.0))));
  }
  return exp(x) - 1.0;
}

fn k3s(x: f32) -> f32 {
  if (abs(x) < 0.125) {
    return x * x * (0.5 + x * (1.0 / 6.0 + x * (1.0 / 24.0 + x / 120.0)));
  }
  return exp(x) - 1.0 - x;
}

// Same rounding steps as histBin in stats.ts.
fn bin(x: f32) -> u32 {
  let t = floor((x - u.histLo) * u.histScale);
  return u32(clamp(t, 0.0, f32(HIST_BINS - 1u)));
}

@compute @workgroup_size(workgroupSize)
fn main(@builtin(local_invocation_index) lid: u32) {
  // a: (sum lr, sum k3, sum chi2 token terms, sum chi2 seq terms); b: (sum ppl ratios, tokens, rows, 0).
  var a = vec4f(0.0);
  var b = vec4f(0.0);
  for (var n = lid; n < u.numTraj; n += workgroupSize) {
    var rowSum = 0.0;
    var rowCount = 0u;
    for (var j = 0u; j < u.tp; j++) {
      let i = n * u.tp + j;
      if (mask[i] == 0.0) {
        continue;
      }
      let lr = logpOld[i] - logpRollout[i];
      let c = clamp(lr, -BOUND, BOUND);
      a += vec4f(lr, k3s(c), expm1s(2.0 * c), 0.0);
      rowSum += lr;
      rowCount += 1u;
      atomicAdd(&hist[bin(lr)], 1u);
    }
    if (rowCount > 0u) {
      a.w += expm1s(2.0 * clamp(rowSum, -BOUND, BOUND));
      b += vec4f(exp(-rowSum / f32(rowCount)), f32(rowCount), 1.0, 0.0);
    }
  }
  treeA[lid] = a;
  treeB[lid] = b;
  workgroupBarrier();
  for (var s = workgroupSize / 2u; s > 0u; s >>= 1u) {
    if (lid < s) {
      treeA[lid] += treeA[lid + s];
      treeB[lid] += treeB[lid + s];
    }
    workgroupBarrier();
  }
  if (lid == 0u) {
    let sa = treeA[0];
    let sb = treeB[0];
    let tokens = max(sb.y, 1.0);
    let rows = max(sb.z, 1.0);
    out[0] = sa.x / tokens;
    out[1] = sa.y / tokens;
    out[2] = sa.z / tokens;
    out[3] = sa.w / rows;
    out[4] = select(1.0, sb.x / rows, sb.z > 0.0);
  }
  if (lid < HIST_BINS) {
    out[5u + lid] = f32(atomicLoad(&hist[lid]));
  }
}
