// Segment log-ratio: masked mean of lambda = clamp(logp - logpOld, -20, 20) over a segment's rows,
// 0 for an empty segment; one thread per segment (reference: seqRatioCpu in seqRatio.ts).
// mode 0 sequence (segment = trajectory), 1 turn (segment = (trajectory, turn), turn of row j is
// j / actionLen), 2 geometric (GMPO: lambda* = sign-aware clip of lambda to [loLog, hiLog]).
// Rows are absolute (rowBase + r); out is written at the absolute trajectory rowBase / tp + local.

struct SeqRatio {
  numSegments: u32,  // local trajectories * segments
  rowBase: u32,      // first row of the call, a multiple of tp
  tp: u32,           // policy-token rows per trajectory
  actionLen: u32,    // rows per turn (turn mode)
  segments: u32,     // outputs per trajectory: maxTurns in turn mode, else 1
  mode: u32,         // 0 sequence, 1 turn, 2 geometric
  loLog: f32,        // geometric: -clipLow
  hiLog: f32,        // geometric: +clipHigh
}

@group(0) @binding(0) var<uniform> u: SeqRatio;
@group(0) @binding(1) var<storage, read> mask: array<f32>;          // [rows] 0/1
@group(0) @binding(2) var<storage, read> logp: array<f32>;          // [rows]
@group(0) @binding(3) var<storage, read> logpOld: array<f32>;       // [rows]
@group(0) @binding(4) var<storage, read> adv: array<f32>;           // [rows] (geometric mode)
@group(0) @binding(5) var<storage, read_write> out: array<f32>;     // [N * segments]

override workgroupSize: u32 = 64;

@compute @workgroup_size(workgroupSize)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let s = flatWorkgroup(wid, nwg) * workgroupSize + lid;
  if (s >= u.numSegments) {
    return;
  }
  let n = u.rowBase / u.tp + s / u.segments;  // absolute trajectory
  let seg = s % u.segments;
  var j0 = 0u;
  var j1 = u.tp;
  if (u.mode == 1u) {
    j0 = min(seg * u.actionLen, u.tp);
    j1 = min(j0 + u.actionLen, u.tp);
  }
  var sum = 0.0;
  var cnt = 0.0;
  for (var j = j0; j < j1; j++) {
    let i = n * u.tp + j;
    let m = mask[i];
    if (m == 0.0) {
      continue;
    }
    var lam = clamp(logp[i] - logpOld[i], -20.0, 20.0);
    if (u.mode == 2u) {
      let A = adv[i];
      let lc = clamp(lam, u.loLog, u.hiLog);
      lam = select(select(lam, max(lam, lc), A < 0.0), min(lam, lc), A > 0.0);
    }
    sum += m * lam;
    cnt += m;
  }
  out[n * u.segments + seg] = select(0.0, sum / cnt, cnt > 0.0);
}
