// Policy loss per row for every ratio mode, plus a KL to the reference, and d(loss)/d(logp), one
// thread per row (reference: ppoLossCpu in ppoLoss.ts, whose header has the formulas). Row r is
// rowBase + r in every array; seqLog is indexed by absolute trajectory n = row / tp.
// ratioMode 0 token (dual clip), 1 sequence (GSPO), 2 geometric (GMPO), 3 turn stage (SeeUPO),
// 4 step (GSPO per step, as GiGPO's step rows make it), 5 sft (cross-entropy: ReGFT's fine-tuning).
// Clips are taken in log space against [loLog, hiLog]: log(1 -+ eps) in modes 0, 1, 3, and GMPO's
// [-eps_low, +eps_high] in mode 2 (the host fills them per mode); exp is applied once.

struct PpoLoss {
  numRows: u32,
  rowBase: u32,
  loLog: f32,
  hiLog: f32,
  dualClip: f32,
  klCoef: f32,
  ratioMode: u32,   // 0 token, 1 sequence, 2 geometric, 3 turn stage, 4 step, 5 sft
  klType: u32,      // 0 k3, 1 k1, 2 k2
  tp: u32,          // policy-token rows per trajectory
  actionLen: u32,   // rows per turn
  maxTurns: u32,    // T: seqLog entries per trajectory in mode 3
  stage: u32,       // the turn k updated in mode 3
}

// Clipped surrogate on a log-ratio: loss, gradient factor (-A r on the unclipped branch), clip flag.
struct Clipped {
  L: f32,
  g: f32,
  clip: i32,
}

@group(0) @binding(0) var<uniform> u: PpoLoss;
@group(0) @binding(1) var<storage, read> logp: array<f32>;            // [rows]
@group(0) @binding(2) var<storage, read> logpOld: array<f32>;         // [rows]
@group(0) @binding(3) var<storage, read> logpRef: array<f32>;         // [rows]
@group(0) @binding(4) var<storage, read> adv: array<f32>;             // [rows]
@group(0) @binding(5) var<storage, read> weight: array<f32>;          // [rows] aggregation weights
@group(0) @binding(6) var<storage, read> seqLog: array<f32>;          // [N] or [N * maxTurns] (modes 1-3)
@group(0) @binding(7) var<storage, read_write> dlogp: array<f32>;     // [rows]
@group(0) @binding(8) var<storage, read_write> out: array<PpoRow>;    // [rows]

override workgroupSize: u32 = 64;

fn clipped(logR: f32, A: f32) -> Clipped {
  let r = exp(logR);
  let L1 = -A * r;
  let L2 = -A * exp(clamp(logR, u.loLog, u.hiLog));
  return Clipped(max(L1, L2), select(0.0, -A * r, L1 >= L2), select(0, select(1, -1, logR < 0.0), L2 > L1));
}

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
  let n = i / u.tp;
  let A = adv[i];
  let d = logp[i] - logpOld[i];
  let lam = clamp(d, -20.0, 20.0);
  let own = lam == d;  // false where the +-20 clamp cut this token's own gradient
  var c = Clipped(0.0, 0.0, 0);
  var ratio = 1.0;
  var counts = true;
  if (u.ratioMode == 0u) {
    ratio = exp(lam);
    c = clipped(lam, A);
    c.g = select(0.0, c.g, own);
    if (A < 0.0 && c.L > -A * u.dualClip) {
      c = Clipped(-A * u.dualClip, 0.0, 1);
    }
  } else if (u.ratioMode == 1u || u.ratioMode == 4u) {
    // Mode 4: the sequence is the row's step (turn): seqLog holds one entry per (n, turn).
    var sl = seqLog[n];
    if (u.ratioMode == 4u) {
      sl = seqLog[n * u.maxTurns + min((i - n * u.tp) / u.actionLen, u.maxTurns - 1u)];
    }
    let logS = min(sl, 10.0);
    ratio = exp(logS);
    c = clipped(logS, A);
    c.g = select(0.0, c.g, own && logS == sl);
  } else if (u.ratioMode == 5u) {
    // ReGFT's fine-tuning: token cross-entropy -A logp, no ratio, no clip.
    ratio = exp(lam);
    c = Clipped(-A * logp[i], -A, 0);
  } else if (u.ratioMode == 2u) {
    ratio = exp(clamp(seqLog[n], -20.0, 20.0));
    let lc = clamp(lam, u.loLog, u.hiLog);
    let star = select(select(lam, max(lam, lc), A < 0.0), min(lam, lc), A > 0.0);
    c = Clipped(-A * ratio, select(0.0, -A * ratio, star == lam && own), select(select(0, -1, star > lam), 1, star < lam));
  } else {
    let T = u.maxTurns;
    let k = u.stage;
    let turn = (i - n * u.tp) / u.actionLen;
    if (turn < T) {
      ratio = exp(clamp(seqLog[n * T + turn], -20.0, 20.0));
    }
    counts = turn == k;
    if (counts) {
      var later = 0.0;
      for (var t = k + 1u; t < T; t++) {
        later += seqLog[n * T + t];
      }
      let M = A * exp(clamp(later, -20.0, 20.0));
      c = clipped(clamp(seqLog[n * T + k], -20.0, 20.0), M);
      c.g = select(0.0, c.g, own);
    }
  }

  // KL to the reference, d = logp - logpRef.
  let dr = logp[i] - logpRef[i];
  var kl = dr;
  var gk = 1.0;
  if (u.klType == 2u) {
    kl = 0.5 * dr * dr;
    gk = dr;
  } else if (u.klType == 0u) {
    let kArg = logpRef[i] - logp[i];
    let k = clamp(kArg, -20.0, 20.0);
    let ek = exp(k);
    let k3raw = ek - k - 1.0;
    kl = clamp(k3raw, -10.0, 10.0);
    gk = select(0.0, 1.0 - ek, k == kArg && kl == k3raw);
  }
  let w = weight[i];
  dlogp[i] = select(0.0, w * (c.g + u.klCoef * gk), counts);
  out[i] = PpoRow(select(0.0, w * (c.L + u.klCoef * kl), counts), ratio, kl, select(c.clip, 0, w == 0.0));
}
