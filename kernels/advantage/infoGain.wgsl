// IGPO's information-gain turn rewards (reference: infoGainCpu in infoGain.ts), one thread per
// trajectory. scoreLogp holds, for every trajectory n and turn slot k, the log-probs of the
// ground-truth answer's span tokens teacher-forced after the first k turns (k = 0: the bare prompt).
//   p_k = exp(mean span log-prob) (prob_diff) or the mean itself (log_prob_diff)
//   turn t < T_n - 1: reward = p_{t+1} - p_t; the last turn keeps the outcome the host wrote.
// The rewards go straight into turnIn, which the advantage kernel reads next: nothing leaves the GPU.

@group(0) @binding(0) var<uniform> u: InfoGain;
@group(0) @binding(1) var<storage, read> scoreLogp: array<f32>;    // [numTraj * maxTurns * span]
@group(0) @binding(2) var<storage, read> trajIn: array<TrajIn>;     // [numTraj]
@group(0) @binding(3) var<storage, read_write> turnIn: array<TurnIn>; // [numTraj * maxTurns]

override workgroupSize: u32 = 64;

fn answerProb(n: u32, k: u32) -> f32 {
  var s = 0.0;
  for (var i = 0u; i < u.span; i++) {
    s += scoreLogp[(n * u.maxTurns + k) * u.span + i];
  }
  let mean = select(0.0, s / f32(u.span), u.span > 0u);
  return select(exp(mean), mean, u.logDiff != 0u);
}

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
  let turns = trajIn[n].turns;
  var prev = answerProb(n, 0u);
  for (var t = 0u; t + 1u < turns; t++) {
    let next = answerProb(n, t + 1u);
    turnIn[n * u.maxTurns + t].reward = next - prev;
    prev = next;
  }
}
