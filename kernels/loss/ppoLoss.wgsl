// The loss: seqRatio (sequence- and turn-level log-ratios) and ppoLoss (the clipped surrogate, its
// KL and the gradient w.r.t. the log-probs), each an entry point of this file with its own uniform
// (both at binding 0: no entry point uses two) over shared buffer declarations (each binds the ones
// it uses; host side: kernels/loss/seqRatio.ts and ppoLoss.ts).

@group(0) @binding(0) var<uniform> uSeq: SeqRatio;
@group(0) @binding(0) var<uniform> uPpo: PpoLoss;
@group(0) @binding(1) var<storage, read> mask: array<f32>;  // [rows] 0/1
@group(0) @binding(2) var<storage, read> logp: array<f32>;  // [rows]
@group(0) @binding(3) var<storage, read> logpOld: array<f32>;  // [rows]
@group(0) @binding(4) var<storage, read> adv: array<f32>;  // [rows] (geometric mode)
@group(0) @binding(5) var<storage, read_write> seqOut: array<f32>;  // [N * segments]
@group(0) @binding(6) var<storage, read> logpRef: array<f32>;  // [rows]
@group(0) @binding(7) var<storage, read> weight: array<f32>;  // [rows] aggregation weights, then (isWeights) [rows] IS weights
@group(0) @binding(8) var<storage, read> seqLog: array<f32>;  // [N] or [N * maxTurns] (modes 1-3)
@group(0) @binding(9) var<storage, read_write> dlogp: array<f32>;  // [rows]
@group(0) @binding(10) var<storage, read_write> out: array<PpoRow>;  // [rows]

override workgroupSize: u32 = 64;

// Segment log-ratio: masked mean of lambda = clamp(logp - logpOld, -20, 20) over a segment's rows,
// 0 for an empty segment; one thread per segment (reference: seqRatioCpu in seqRatio.ts).
// mode 0 sequence (segment = trajectory), 1 turn (segment = (trajectory, turn), turn of row j is
// j / actionLen), 2 geometric (GMPO: lambda* = sign-aware clip of lambda to [loLog, hiLog]).
// Rows are absolute (rowBase + r); seqOut is written at the absolute trajectory rowBase / tp + local.

@compute @workgroup_size(workgroupSize)
fn seqRatio(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let s = flatWorkgroup(wid, nwg) * workgroupSize + lid;
  if (s >= uSeq.numSegments) {
    return;
  }
  let n = uSeq.rowBase / uSeq.tp + s / uSeq.segments;  // absolute trajectory
  let seg = s % uSeq.segments;
  var j0 = 0u;
  var j1 = uSeq.tp;
  if (uSeq.mode == 1u) {
    j0 = min(seg * uSeq.actionLen, uSeq.tp);
    j1 = min(j0 + uSeq.actionLen, uSeq.tp);
  }
  var sum = 0.0;
  var cnt = 0.0;
  for (var j = j0; j < j1; j++) {
    let i = n * uSeq.tp + j;
    let m = mask[i];
    if (m == 0.0) {
      continue;
    }
    var lam = clamp(logp[i] - logpOld[i], -20.0, 20.0);
    if (uSeq.mode == 2u) {
      let A = adv[i];
      let lc = clamp(lam, uSeq.loLog, uSeq.hiLog);
      lam = select(select(lam, max(lam, lc), A < 0.0), min(lam, lc), A > 0.0);
    }
    sum += m * lam;
    cnt += m;
  }
  seqOut[n * uSeq.segments + seg] = select(0.0, sum / cnt, cnt > 0.0);
}

// Policy loss per row for every ratio mode, plus a KL to the reference, and d(loss)/d(logp), one
// thread per row (reference: ppoLossCpu in ppoLoss.ts, whose header has the formulas). Row r is
// rowBase + r in every array; seqLog is indexed by absolute trajectory n = row / tp.
// ratioMode 0 token (dual clip), 1 sequence (GSPO), 2 geometric (GMPO), 3 turn stage (SeeUPO),
// 4 step (GSPO per step, as GiGPO's step rows make it), 5 sft (cross-entropy: ReGFT's fine-tuning).
// Clips are taken in log space against [loLog, hiLog]: log(1 -+ eps) in modes 0, 1, 3, and GMPO's
// [-eps_low, +eps_high] in mode 2 (the host fills them per mode); exp is applied once.

// Clipped surrogate on a log-ratio: loss, gradient factor (-A r on the unclipped branch), clip flag.
struct Clipped {
  L: f32,
  g: f32,
  clip: i32,
}

fn clipped(logR: f32, A: f32) -> Clipped {
  let r = exp(logR);
  let L1 = -A * r;
  let L2 = -A * exp(clamp(logR, uPpo.loLog, uPpo.hiLog));
  return Clipped(max(L1, L2), select(0.0, -A * r, L1 >= L2), select(0, select(1, -1, logR < 0.0), L2 > L1));
}

@compute @workgroup_size(workgroupSize)
fn ppoLoss(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let j = flatWorkgroup(wid, nwg) * workgroupSize + lid;
  if (j >= uPpo.numRows) {
    return;
  }
  let i = uPpo.rowBase + j;
  let n = i / uPpo.tp;
  let A = adv[i];
  let d = logp[i] - logpOld[i];
  let lam = clamp(d, -20.0, 20.0);
  let own = lam == d;  // false where the +-20 clamp cut this token's own gradient
  var c = Clipped(0.0, 0.0, 0);
  var ratio = 1.0;
  var counts = true;
  if (uPpo.ratioMode == 0u) {
    ratio = exp(lam);
    c = clipped(lam, A);
    c.g = select(0.0, c.g, own);
    if (A < 0.0 && c.L > -A * uPpo.dualClip) {
      c = Clipped(-A * uPpo.dualClip, 0.0, 1);
    }
  } else if (uPpo.ratioMode == 1u || uPpo.ratioMode == 4u) {
    // Mode 4: the sequence is the row's step (turn): seqLog holds one entry per (n, turn).
    var sl = seqLog[n];
    if (uPpo.ratioMode == 4u) {
      sl = seqLog[n * uPpo.maxTurns + min((i - n * uPpo.tp) / uPpo.actionLen, uPpo.maxTurns - 1u)];
    }
    let logS = min(sl, 10.0);
    ratio = exp(logS);
    c = clipped(logS, A);
    c.g = select(0.0, c.g, own && logS == sl);
  } else if (uPpo.ratioMode == 6u) {
    // CISPO: the clipped IS weight, gradient stopped, times A log pi; every token keeps a gradient.
    ratio = exp(lam);
    let w = exp(clamp(lam, uPpo.loLog, uPpo.hiLog));
    c = Clipped(-w * A * logp[i], -w * A, select(select(0, -1, lam < uPpo.loLog), 1, lam > uPpo.hiLog));
  } else if (uPpo.ratioMode == 7u) {
    // SAPO: a soft gate f(r) = sigmoid(tau (r - 1)) 4 / tau; loLog and hiLog carry tau_pos and tau_neg.
    ratio = exp(lam);
    let tau = select(uPpo.hiLog, uPpo.loLog, A > 0.0);
    let s = 1.0 / (1.0 + exp(-tau * (ratio - 1.0)));
    c = Clipped(-(4.0 / tau) * s * A, select(0.0, -4.0 * A * s * (1.0 - s) * ratio, own), 0);
  } else if (uPpo.ratioMode == 5u) {
    // ReGFT's fine-tuning: token cross-entropy -A logp, no ratio, no clip.
    ratio = exp(lam);
    c = Clipped(-A * logp[i], -A, 0);
  } else if (uPpo.ratioMode == 2u) {
    ratio = exp(clamp(seqLog[n], -20.0, 20.0));
    let lc = clamp(lam, uPpo.loLog, uPpo.hiLog);
    let star = select(select(lam, max(lam, lc), A < 0.0), min(lam, lc), A > 0.0);
    c = Clipped(-A * ratio, select(0.0, -A * ratio, star == lam && own), select(select(0, -1, star > lam), 1, star < lam));
  } else {
    let T = uPpo.maxTurns;
    let k = uPpo.stage;
    let turn = (i - n * uPpo.tp) / uPpo.actionLen;
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
  if (uPpo.klType == 2u) {
    kl = 0.5 * dr * dr;
    gk = dr;
  } else if (uPpo.klType == 0u) {
    let kArg = logpRef[i] - logp[i];
    let k = clamp(kArg, -20.0, 20.0);
    let ek = exp(k);
    let k3raw = ek - k - 1.0;
    kl = clamp(k3raw, -10.0, 10.0);
    gk = select(0.0, 1.0 - ek, k == kArg && kl == k3raw);
  }
  let w = weight[i];
  // The rollout correction's IS weight scales the policy term only, as verl's pg_losses * weights:
  // the KL term keeps its plain weight. It shares the weights' buffer because the kernel already
  // binds the 8 storage buffers a stage may have.
  var isw = 1.0;
  if (uPpo.isWeights != 0u) {
    isw = weight[uPpo.isBase + i];
  }
  dlogp[i] = select(0.0, w * (isw * c.g + uPpo.klCoef * gk), counts);
  out[i] = PpoRow(select(0.0, w * (isw * c.L + uPpo.klCoef * kl), counts), ratio, kl, select(c.clip, 0, w == 0.0));
}
