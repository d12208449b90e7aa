// Each trajectory's own policy-gradient norm squared, one workgroup per trajectory (reference:
// trajGradNormCpu in trajGradNorm.ts, which derives the three sums):
//   g2_n = c_n^2 ( sum_{t,s} (h_t.h_s + 1)(dz_t.dz_s) + (x_t.x_s + 1)(da_t.da_s)
//                  + sum_tok || sum_{(t,k): ctx_k(t) = tok} W1_k^T da_t ||^2 )
// over the masked rows t, s of trajectory n, c_n = min(exp(logIS_n), isCap) (1 when isCap = 0).
// dz and da are those of the loss sum_t m_t log pi(a_t) (logitGrad with dlogp = mask, then
// hiddenGrad). The result replaces trajStats[n].g2, the weight VCPO's baseline reads.

@group(0) @binding(0) var<uniform> u: TrajGradNorm;
@group(0) @binding(1) var<storage, read> params: array<f32>;
@group(0) @binding(2) var<storage, read> h: array<f32>;      // [N * tp, hidden]
@group(0) @binding(3) var<storage, read> dz: array<f32>;     // [N * tp, vocab]
@group(0) @binding(4) var<storage, read> da: array<f32>;     // [N * tp, hidden]
@group(0) @binding(5) var<storage, read> seq: array<u32>;    // [N, seqLen]
@group(0) @binding(6) var<storage, read> rowPos: array<u32>; // [N * tp]
@group(0) @binding(7) var<storage, read> mask: array<f32>;   // [N * tp]
@group(0) @binding(8) var<storage, read_write> stats: array<TrajStats>; // [N]

override workgroupSize: u32 = 64;

// Each lane's share of the sum, then a tree over the lanes.
var<workgroup> part: array<f32, workgroupSize>;

fn slotToken(r: u32, k: u32) -> u32 {
  let q = contextIndex(rowPos[r], u.seqLen, u.context, k);
  return vocabToken(select(0u, seq[max(q, 0)], q >= 0), u.vocab);
}

// One workgroup per trajectory: the lanes share its row pairs, then its (row, slot, d) entries of
// the embedding term, each counted at the first (row, slot) of its token in row-then-slot order.
@compute @workgroup_size(workgroupSize)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let n = flatWorkgroup(wid, nwg);
  if (n >= u.numTraj) {
    return;
  }
  let H = u.hidden;
  let V = u.vocab;
  let D = u.embed;
  let K = u.context;
  let tp = u.tp;
  let r0 = n * tp;
  var sum = 0.0;
  for (var p = lid; p < tp * tp; p += workgroupSize) {
    let t = r0 + p / tp;
    let s = r0 + p % tp;
    if (mask[t] == 0.0 || mask[s] == 0.0) {
      continue;
    }
    var hh = 1.0;
    var dd = 0.0;
    for (var i = 0u; i < H; i++) {
      hh += h[t * H + i] * h[s * H + i];
      dd += da[t * H + i] * da[s * H + i];
    }
    var zz = 0.0;
    for (var v = 0u; v < V; v++) {
      zz += dz[t * V + v] * dz[s * V + v];
    }
    var xx = 1.0;
    for (var k = 0u; k < K; k++) {
      let et = slotToken(t, k) * D;
      let es = slotToken(s, k) * D;
      for (var d = 0u; d < D; d++) {
        xx += params[et + d] * params[es + d];
      }
    }
    sum += hh * zz + xx * dd;
  }
  for (var e = lid; e < tp * K * D; e += workgroupSize) {
    let t = r0 + e / (K * D);
    let k = (e / D) % K;
    let d = e % D;
    if (mask[t] == 0.0) {
      continue;
    }
    let tok = slotToken(t, k);
    var first = true;
    for (var t2 = r0; t2 <= t && first; t2++) {
      if (mask[t2] == 0.0) {
        continue;
      }
      let kEnd = select(K, k, t2 == t);
      for (var k2 = 0u; k2 < kEnd; k2++) {
        if (slotToken(t2, k2) == tok) {
          first = false;
          break;
        }
      }
    }
    if (!first) {
      continue;
    }
    var g = 0.0;
    for (var s = t; s < r0 + tp; s++) {
      if (mask[s] == 0.0) {
        continue;
      }
      for (var l = 0u; l < K; l++) {
        if (slotToken(s, l) != tok) {
          continue;
        }
        let row = u.w1Off + (l * D + d) * H;
        for (var i = 0u; i < H; i++) {
          g += params[row + i] * da[s * H + i];
        }
      }
    }
    sum += g * g;
  }
  part[lid] = sum;
  workgroupBarrier();
  for (var w = workgroupSize / 2u; w > 0u; w /= 2u) {
    if (lid < w) {
      part[lid] += part[lid + w];
    }
    workgroupBarrier();
  }
  if (lid == 0u) {
    var c2 = 1.0;
    if (u.isCap > 0.0) {
      let c = exp(min(stats[n].logIS, log(u.isCap)));
      c2 = c * c;
    }
    stats[n].g2 = c2 * part[0];
  }
}
