// Clipped surrogate with low/high and dual clip plus k3 KL, and d(loss)/d(logp), one thread per row
// (reference: ppoLossCpu in ppoLoss.ts). Row r is rowBase + r in every array. The clip is taken in
// log space (loLog = log(1 - clipLow), hiLog = log(1 + clipHigh)) and exp is applied once.

struct PpoLoss {
  numRows: u32,
  rowBase: u32,
  loLog: f32,
  hiLog: f32,
  dualClip: f32,
  klCoef: f32,
}

// One row's outputs besides dlogp (kept apart so that at most 8 storage buffers are bound).
struct PpoRow {
  loss: f32,    // weighted token loss
  ratio: f32,   // exp(clamped log-ratio)
  kl: f32,      // k3 estimate to the reference
  clip: i32,    // -1 low side, 1 high side, 0 none
}

@group(0) @binding(0) var<uniform> u: PpoLoss;
@group(0) @binding(1) var<storage, read> logp: array<f32>;            // [rows]
@group(0) @binding(2) var<storage, read> logpOld: array<f32>;         // [rows]
@group(0) @binding(3) var<storage, read> logpRef: array<f32>;         // [rows]
@group(0) @binding(4) var<storage, read> adv: array<f32>;             // [rows]
@group(0) @binding(5) var<storage, read> weight: array<f32>;          // [rows] aggregation weights
@group(0) @binding(6) var<storage, read_write> dlogp: array<f32>;     // [rows]
@group(0) @binding(7) var<storage, read_write> out: array<PpoRow>;    // [rows]

override workgroupSize: u32 = 64;

@compute @workgroup_size(workgroupSize)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let j = flatWorkgroup(wid, nwg) * workgroupSize + lid;
  if (j >= u.numRows) {
    return;
  }
  let i = u.rowBase + j;
  let A = adv[i];
  let d = logp[i] - logpOld[i];
  let logR = clamp(d, -20.0, 20.0);
  let r = exp(logR);
  let rc = exp(clamp(logR, u.loLog, u.hiLog));
  let L1 = -A * r;
  let L2 = -A * rc;
  var L = max(L1, L2);
  var g = select(0.0, -A * r, L1 >= L2 && logR == d);
  var clip = select(0, select(1, -1, logR < 0.0), L2 > L1);
  if (A < 0.0 && L > -A * u.dualClip) {
    L = -A * u.dualClip;
    g = 0.0;
    clip = 1;
  }
  let kArg = logpRef[i] - logp[i];
  let k = clamp(kArg, -20.0, 20.0);
  let ek = exp(k);
  let k3raw = ek - k - 1.0;
  let k3 = clamp(k3raw, -10.0, 10.0);
  let gk = select(0.0, 1.0 - ek, k == kArg && k3 == k3raw);
  let w = weight[i];
  dlogp[i] = w * (g + u.klCoef * gk);
  out[i] = PpoRow(w * (L + u.klCoef * k3), r, k3, select(clip, 0, w == 0.0));
}
