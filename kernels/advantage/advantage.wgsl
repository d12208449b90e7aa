// Token advantages for every estimator, one thread per trajectory (reference: advantageCpu in
// advantage.ts, which documents each estimator). Groups are contiguous runs of trajectories given
// per trajectory (groupStart, groupSize). Means are taken around one of their own values
// (r0 + sum(r - r0) / G), so equal values give exactly 0 in f32 as in float64.
// Estimators with one value per trajectory (group, rloo, raw, opob; the default path) leave it in
// workgroup memory, and then the workgroup writes its trajectories' rows together, neighbouring
// threads on neighbouring rows, their masks loaded twelve rows at a time per thread, the first
// twelve before the group walks. The other estimators write a
// trajectory's rows from its own thread (row by row, each depending on the ones before or on the
// turn).

@group(0) @binding(0) var<uniform> u: Advantage;
@group(0) @binding(1) var<storage, read> trajIn: array<TrajIn>;       // [N]
@group(0) @binding(2) var<storage, read> turnIn: array<TurnIn>;       // [N * maxTurns]
@group(0) @binding(3) var<storage, read> roleRewards: array<f32>;     // [N * nRoles]
@group(0) @binding(4) var<storage, read> trajStats: array<TrajStats>; // [N]
@group(0) @binding(5) var<storage, read> mask: array<f32>;            // [N * tp] 0/1
@group(0) @binding(6) var<storage, read> logpOld: array<f32>;         // [N * tp]
@group(0) @binding(7) var<storage, read> logpRef: array<f32>;         // [N * tp]
@group(0) @binding(8) var<storage, read_write> adv: array<f32>;       // [N * tp]

override workgroupSize: u32 = 64;

// Codes of ADV_ESTIMATORS in advantage.ts.
const EST_GROUP: u32 = 0u;
const EST_RLOO: u32 = 1u;
const EST_RAW: u32 = 2u;
const EST_REINFORCE: u32 = 3u;
const EST_TURN: u32 = 4u;
const EST_TURN_GROUP: u32 = 5u;
const EST_GIGPO: u32 = 6u;
const EST_OPOB: u32 = 7u;

// Per-thread context: the trajectory, its group and the factor every output is multiplied by.
struct Ctx {
  n: u32,
  g0: u32,
  G: u32,
  tn: u32,
  factor: f32,
}

fn turnsOf(m: u32) -> u32 {
  return min(trajIn[m].turns, u.maxTurns);
}

fn turnVal(m: u32, t: u32) -> f32 {
  return turnIn[m * u.maxTurns + t].reward;
}

// Column col of trajectory m: -1 the outcome reward, else roleRewards[m][col].
fn colVal(m: u32, col: i32) -> f32 {
  if (col < 0) {
    return trajIn[m].reward;
  }
  return roleRewards[m * u.nRoles + u32(col)];
}

// The run's group size compiled into the pipeline (AdvantageConfig.groupSize; 0: none). A group of
// exactly that many members takes meanStdFixed; every other group (DARS's, padding, dropped
// prompts) the walks below. The default is for compilation checks.
override groupSize: u32 = 0u;
// Largest groupSize: the size of meanStdFixed's member array (ADVANTAGE_MAX_FIXED_GROUP in advantage.ts).
const MAX_FIXED_GROUP: u32 = 64u;

// meanStd of a group of exactly groupSize members: the loops' trip counts are pipeline constants,
// so they unroll, the members' loads go out together, once, and both walks read registers (what
// made sampleUnrolled twice as fast on an H200). The same sums in the same order as meanStd's
// walks, so the same bits. The divisor is the group size read from memory (the group's first
// member's, equal to G), not the constant: a compiler may turn a division by a constant into a
// product with its reciprocal, which rounds differently unless it is a power of two (SwiftShader
// did, at groups of 5 and 33), and one that knows G == groupSize here may do it to f32(G) too.
fn meanStdFixed(g0: u32, col: i32) -> vec2f {
  let G = trajIn[g0].groupSize;
  var x: array<f32, MAX_FIXED_GROUP>;
  for (var k = 0u; k < groupSize; k++) {
    x[k] = colVal(g0 + k, col);
  }
  let r0 = x[0];
  var s = 0.0;
  for (var k = 0u; k < groupSize; k++) {
    s += x[k] - r0;
  }
  let mean = r0 + s / f32(G);
  var ss = 0.0;
  for (var k = 0u; k < groupSize; k++) {
    let e = x[k] - mean;
    ss += e * e;
  }
  return vec2f(mean, sqrt(ss / f32(select(G, G - 1u, u.unbiasedStd != 0u))));
}

// (mean, std) of a column over the group; a group of one gives (0, 1). Both walks load four
// members before adding them in member order (the same sums, bit for bit): a thread then waits out
// one load latency per four members, which counts at groups of 64.
fn meanStd(g0: u32, G: u32, col: i32) -> vec2f {
  if (G <= 1u) {
    return vec2f(0.0, 1.0);
  }
  if (G == groupSize) {
    return meanStdFixed(g0, col);
  }
  let r0 = colVal(g0, col);
  let g1 = g0 + G;
  var s = 0.0;
  var m = g0;
  for (; m + 3u < g1; m += 4u) {
    let x = vec4f(colVal(m, col), colVal(m + 1u, col), colVal(m + 2u, col), colVal(m + 3u, col));
    s += x.x - r0;
    s += x.y - r0;
    s += x.z - r0;
    s += x.w - r0;
  }
  for (; m < g1; m++) {
    s += colVal(m, col) - r0;
  }
  let mean = r0 + s / f32(G);
  var ss = 0.0;
  m = g0;
  for (; m + 3u < g1; m += 4u) {
    let e = vec4f(colVal(m, col), colVal(m + 1u, col), colVal(m + 2u, col), colVal(m + 3u, col)) - mean;
    ss += e.x * e.x;
    ss += e.y * e.y;
    ss += e.z * e.z;
    ss += e.w * e.w;
  }
  for (; m < g1; m++) {
    let e = colVal(m, col) - mean;
    ss += e * e;
  }
  return vec2f(mean, sqrt(ss / f32(select(G, G - 1u, u.unbiasedStd != 0u))));
}

// A std of 0 means equal values, whose centred value is exactly 0 either way.
fn scaled(x: f32, ms: vec2f) -> f32 {
  if (u.scaleStd != 0u && ms.y > u.stdMin) {
    return (x - ms.x) / (ms.y + u.eps);
  }
  return x - ms.x;
}

// Turns member m acted as role col (Dr. MAS: each is one element of the role's pool).
fn roleSteps(m: u32, col: i32) -> u32 {
  var c = 0u;
  for (var t = 0u; t < turnsOf(m); t++) {
    if (turnIn[m * u.maxTurns + t].role == col) {
      c++;
    }
  }
  return c;
}

// Weight of member m in a pool: its steps in role col (col >= 0), or its turns (col < 0: GiGPO's
// episode statistics over step rows).
fn poolWeight(m: u32, col: i32) -> u32 {
  if (col < 0) {
    return turnsOf(m);
  }
  return roleSteps(m, col);
}

// (mean, std, count) of a column over the pool in which member m counts poolWeight(m, col) times;
// a pool of at most one element gives (0, 1).
fn weightedMeanStd(g0: u32, G: u32, col: i32) -> vec3f {
  var c = 0u;
  var r0 = 0.0;
  var s = 0.0;
  for (var m = g0; m < g0 + G; m++) {
    let w = poolWeight(m, col);
    if (w == 0u) {
      continue;
    }
    if (c == 0u) {
      r0 = colVal(m, col);
    }
    s += f32(w) * (colVal(m, col) - r0);
    c += w;
  }
  if (c <= 1u) {
    return vec3f(0.0, 1.0, f32(c));
  }
  let mean = r0 + s / f32(c);
  var ss = 0.0;
  for (var m = g0; m < g0 + G; m++) {
    let e = colVal(m, col) - mean;
    ss += f32(poolWeight(m, col)) * e * e;
  }
  return vec3f(mean, sqrt(ss / f32(select(c, c - 1u, u.unbiasedStd != 0u))), f32(c));
}

// group / rloo / raw on one column of trajectory c.n.
fn trajValue(c: Ctx, col: i32) -> f32 {
  let x = colVal(c.n, col);
  if (u.estimator == EST_RAW) {
    return x;
  }
  if (col >= 0) {
    // A role's pool is its steps: member m's reward counted once per turn it acted in that role.
    let ms = weightedMeanStd(c.g0, c.G, col);
    if (u.estimator == EST_RLOO) {
      if (ms.z <= 1.0) {
        return x;
      }
      return x - (ms.x * ms.z - x) / (ms.z - 1.0);
    }
    return scaled(x, ms.xy);
  }
  if (u.estimator == EST_RLOO) {
    if (c.G <= 1u) {
      return x;
    }
    let r0 = colVal(c.g0, col);
    var s = 0.0;
    for (var m = c.g0; m < c.g0 + c.G; m++) {
      if (m != c.n) {
        s += colVal(m, col) - r0;
      }
    }
    return x - (r0 + s / f32(c.G - 1u));
  }
  return scaled(x, meanStd(c.g0, c.G, col));
}

// log W_m = 2 log w_m + log g2_m (log w_m = logIS_m, or 0 without IS weights); only for g2 > 0.
fn opobLogW(m: u32) -> f32 {
  let lis = select(0.0, trajStats[m].logIS, u.isCap > 0.0);
  return 2.0 * lis + log(trajStats[m].g2);
}

fn opobValue(c: Ctx) -> f32 {
  var b = 0.0;
  var sd = 1.0;
  if (c.G > 1u) {
    let ms = meanStd(c.g0, c.G, -1);
    sd = ms.y;
    var M = -F32_MAX;
    var anyW = false;
    for (var m = c.g0; m < c.g0 + c.G; m++) {
      if (trajStats[m].g2 > 0.0) {
        M = max(M, opobLogW(m));
        anyW = true;
      }
    }
    if (!anyW) {
      b = ms.x;
    } else {
      let r0 = trajIn[c.g0].reward;
      var num = 0.0;
      var den = 0.0;
      for (var m = c.g0; m < c.g0 + c.G; m++) {
        if (trajStats[m].g2 > 0.0) {
          let e = exp(opobLogW(m) - M);
          num += e * (trajIn[m].reward - r0);
          den += e;
        }
      }
      b = r0 + num / den;   // den >= 1: the heaviest member has e = 1
    }
  }
  var a = scaled(trajIn[c.n].reward, vec2f(b, sd));
  if (u.isCap > 0.0) {
    a *= exp(min(trajStats[c.n].logIS, log(u.isCap)));   // min(w_n, isCap), no overflow
  }
  return a;
}

// EDGE-GRPO EDA: Pbar / max(P_n, 1e-6), Pbar over the members with len > 0 (clamped to [0.1, 10]
// with entropyClamp).
fn entropyFactor(n: u32, g0: u32, G: u32) -> f32 {
  var c = 0u;
  var p0 = 0.0;
  var acc = 0.0;
  for (var m = g0; m < g0 + G; m++) {
    if (trajStats[m].len > 0.0) {
      if (c == 0u) {
        p0 = trajStats[m].entMean;
      }
      acc += trajStats[m].entMean - p0;
      c++;
    }
  }
  if (c == 0u) {
    return 1.0;
  }
  let f = (p0 + acc / f32(c)) / max(trajStats[n].entMean, 1e-6);
  return select(f, clamp(f, 0.1, 10.0), u.entropyClamp != 0u);
}

// IGPO turn boundary: the final turn, or an earlier one with a nonzero gain.
fn isBoundary(m: u32, t: u32, tm: u32) -> bool {
  return t + 1u == tm || turnVal(m, t) != 0.0;
}

// IGPO pool of the group's boundary turn values: kind 0 all, 1 final turns, 2 earlier turns.
fn inPool(m: u32, t: u32, tm: u32, kind: u32) -> bool {
  let fin = t + 1u == tm;
  return isBoundary(m, t, tm) && (kind == 0u || (kind == 1u && fin) || (kind == 2u && !fin));
}

// (mu, sqrt(var_pop + 1e-8) + 1e-6) of a pool; a pool of one value gives (value, 1), so it
// normalizes to 0; an empty one (0, 1).
fn poolStats(g0: u32, G: u32, kind: u32) -> vec2f {
  var c = 0u;
  var r0 = 0.0;
  var s = 0.0;
  for (var m = g0; m < g0 + G; m++) {
    let tm = turnsOf(m);
    for (var t = 0u; t < tm; t++) {
      if (inPool(m, t, tm, kind)) {
        let x = turnVal(m, t);
        if (c == 0u) {
          r0 = x;
        }
        s += x - r0;
        c++;
      }
    }
  }
  if (c == 0u) {
    return vec2f(0.0, 1.0);
  }
  if (c == 1u) {
    return vec2f(r0, 1.0);
  }
  let mu = r0 + s / f32(c);
  var ss = 0.0;
  for (var m = g0; m < g0 + G; m++) {
    let tm = turnsOf(m);
    for (var t = 0u; t < tm; t++) {
      if (inPool(m, t, tm, kind)) {
        let e = turnVal(m, t) - mu;
        ss += e * e;
      }
    }
  }
  return vec2f(mu, sqrt(ss / f32(c) + 1e-8) + 1e-6);
}

// CM2 turn-level (mean, std) of turn t over the members that took it; one member gives (0, 1).
fn turnStats(g0: u32, G: u32, t: u32) -> vec2f {
  var c = 0u;
  var r0 = 0.0;
  var s = 0.0;
  for (var m = g0; m < g0 + G; m++) {
    if (t < turnsOf(m)) {
      let x = turnVal(m, t);
      if (c == 0u) {
        r0 = x;
      }
      s += x - r0;
      c++;
    }
  }
  if (c <= 1u) {
    return vec2f(0.0, 1.0);
  }
  let mean = r0 + s / f32(c);
  var ss = 0.0;
  for (var m = g0; m < g0 + G; m++) {
    if (t < turnsOf(m)) {
      let e = turnVal(m, t) - mean;
      ss += e * e;
    }
  }
  return vec2f(mean, sqrt(ss / f32(select(c, c - 1u, u.unbiasedStd != 0u))));
}

// GiGPO step return R^S_{m,s} = sum_{k >= s} gamma^(k-s) v_{m,k}, accumulated backwards.
fn stepReturn(m: u32, s: u32) -> f32 {
  var acc = 0.0;
  for (var k = turnsOf(m); k > s; k--) {
    acc = turnVal(m, k - 1u) + u.gamma * acc;
  }
  return acc;
}

// One trajectory's value, times its entropy factor (the factor put multiplies by).
var<workgroup> trajValues: array<f32, workgroupSize>;

// Row k of the workgroup's rows (trajectory k / tp of the workgroup) with mask m. Same product
// order as put: (a * factor) * m.
fn rowAdvantage(k: u32, m: f32) -> f32 {
  return select(0.0, trajValues[k / u.tp] * m, m != 0.0);
}

// Masks of the workgroup's rows k, k + workgroupSize, k + 2 workgroupSize, k + 3 workgroupSize
// (rows past `rows` load row rows - 1 and are not written). Needs k < rows.
fn rowMasks(r0: u32, rows: u32, k: u32) -> vec4f {
  let last = rows - 1u;
  let w = workgroupSize;
  return vec4f(mask[r0 + k], mask[r0 + min(k + w, last)], mask[r0 + min(k + 2u * w, last)], mask[r0 + min(k + 3u * w, last)]);
}

// Twelve rows' masks, three rowMasks from row k on: a thread's rows of a workgroup of trajectories
// with tp <= 12 (each thread has tp of them) in one round trip.
struct RowMasks {
  a: vec4f,
  b: vec4f,
  c: vec4f,
}

fn rowMasks12(r0: u32, rows: u32, k: u32) -> RowMasks {
  var m = RowMasks(vec4f(0.0), vec4f(0.0), vec4f(0.0));
  let w = workgroupSize;
  if (k < rows) {
    m.a = rowMasks(r0, rows, k);
  }
  if (k + 4u * w < rows) {
    m.b = rowMasks(r0, rows, k + 4u * w);
  }
  if (k + 8u * w < rows) {
    m.c = rowMasks(r0, rows, k + 8u * w);
  }
  return m;
}

fn putRows4(r0: u32, rows: u32, k: u32, m: vec4f) {
  let w = workgroupSize;
  for (var j = 0u; j < 4u; j++) {
    let kj = k + j * w;
    if (kj < rows) {
      adv[r0 + kj] = rowAdvantage(kj, m[j]);
    }
  }
}

// The rows of the workgroup's trajectories (rows from r0), from their values in trajValues.
// Thread t writes rows t, t + workgroupSize, ..., twelve a round, with the masks of the first
// round loaded by the caller before the trajectory values (`first`): the masks do not depend on
// them, so that round trip overlaps the group walks, and with tp <= 12 none is left after the
// barrier. Same values as one row at a time.
fn putWorkgroupRows(r0: u32, rows: u32, lid: u32, first: RowMasks) {
  let w = workgroupSize;
  var m = first;
  for (var k = lid; k < rows; k += 12u * w) {
    if (k != lid) {
      m = rowMasks12(r0, rows, k);
    }
    putRows4(r0, rows, k, m.a);
    putRows4(r0, rows, k + 4u * w, m.b);
    putRows4(r0, rows, k + 8u * w, m.c);
  }
}

fn put(c: Ctx, j: u32, a: f32) {
  let i = c.n * u.tp + j;
  let m = mask[i];
  adv[i] = select(0.0, a * c.factor * m, m != 0.0);
}

// Rows of turn t (the last turn may be cut short by tp).
fn putTurn(c: Ctx, t: u32, a: f32) {
  for (var j = t * u.actionLen; j < min((t + 1u) * u.actionLen, u.tp); j++) {
    put(c, j, a);
  }
}

// REINFORCE++: reward-to-go over the masked rows, from the last one back.
fn reinforce(c: Ctx) {
  var Rp = trajIn[c.n].reward;
  if (u.baseline != 0u) {
    Rp -= meanStd(c.g0, c.G, -1).x;
  }
  var acc = 0.0;
  var last = true;
  for (var jj = 0u; jj < u.tp; jj++) {
    let j = u.tp - 1u - jj;
    let i = c.n * u.tp + j;
    if (mask[i] == 0.0) {
      adv[i] = 0.0;
      continue;
    }
    var r = 0.0;
    if (u.klInReward != 0.0) {
      r = u.klInReward * (logpRef[i] - logpOld[i]);
    }
    if (last) {
      r += Rp;
      last = false;
    }
    acc = r + u.gamma * acc;
    put(c, j, acc);
  }
}

fn igpo(c: Ctx) {
  var pj = vec2f(0.0, 1.0);
  var pf = vec2f(0.0, 1.0);
  var pr = vec2f(0.0, 1.0);
  if (u.separate != 0u) {
    pf = poolStats(c.g0, c.G, 1u);
    pr = poolStats(c.g0, c.G, 2u);
  } else {
    pj = poolStats(c.g0, c.G, 0u);
  }
  var acc = 0.0;
  for (var tt = 0u; tt < c.tn; tt++) {
    let t = c.tn - 1u - tt;
    // The reference marks turn boundaries where the normalized reward is nonzero: a turn whose
    // value is no pool member, or normalizes to exactly 0 (a pool of one), is skipped by the
    // discounting and takes the advantage of the next boundary turn (0 after the last one).
    if (isBoundary(c.n, t, c.tn)) {
      var p = pj;
      if (u.separate != 0u) {
        p = select(pr, pf, tt == 0u);
      }
      let r = (turnVal(c.n, t) - p.x) / p.y;
      if (r != 0.0) {
        acc = r + u.gamma * acc;
      }
    }
    putTurn(c, t, acc);
  }
}

fn gigpo(c: Ctx) {
  let AE = scaled(trajIn[c.n].reward, weightedMeanStd(c.g0, c.G, -1).xy);
  for (var t = 0u; t < c.tn; t++) {
    let rs = stepReturn(c.n, t);
    let key = turnIn[c.n * u.maxTurns + t].key;
    var s = 0.0;
    var cnt = 0u;
    for (var m = c.g0; m < c.g0 + c.G; m++) {
      let tm = turnsOf(m);
      for (var k = 0u; k < tm; k++) {
        if (turnIn[m * u.maxTurns + k].key != key) {
          continue;
        }
        cnt++;
        if (m != c.n || k != t) {
          s += rs - stepReturn(m, k);
        }
      }
    }
    // A^S = R^S - mean = s / cnt; the anchor set holds (n, t) itself, so cnt >= 1, and a set of
    // one is its own mean: A^S = 0 there.
    putTurn(c, t, AE + u.stepWeight * s / f32(cnt));
  }
}

fn trajContext(n: u32) -> Ctx {
  let g0 = trajIn[n].groupStart;
  let G = trajIn[n].groupSize;
  var factor = 1.0;
  if (u.entropyScale != 0u) {
    factor = entropyFactor(n, g0, G);
  }
  return Ctx(n, g0, G, turnsOf(n), factor);
}

@compute @workgroup_size(workgroupSize)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let n0 = flatWorkgroup(wid, nwg) * workgroupSize;
  let n = n0 + lid;
  let e = u.estimator;
  let perTurn = e == EST_TURN || e == EST_TURN_GROUP || e == EST_GIGPO || (u.byRole != 0u && e != EST_OPOB);
  // Uniform (the estimator is), so the whole workgroup reaches the barrier; a workgroup past the
  // last trajectory (2-D grid padding) writes nothing.
  if (e != EST_REINFORCE && !perTurn) {
    let t0 = min(n0, u.numTraj);
    let r0 = t0 * u.tp;
    let rows = (min(n0 + workgroupSize, u.numTraj) - t0) * u.tp;
    let first = rowMasks12(r0, rows, lid);
    if (n < u.numTraj) {
      let c = trajContext(n);
      var a = 0.0;
      if (e == EST_OPOB) {
        a = opobValue(c);
      } else {
        a = trajValue(c, -1);
      }
      trajValues[lid] = a * c.factor;
    }
    workgroupBarrier();
    putWorkgroupRows(r0, rows, lid, first);
    return;
  }

  if (n >= u.numTraj) {
    return;
  }
  let c = trajContext(n);
  if (e == EST_REINFORCE) {
    reinforce(c);
    return;
  }

  // Per-turn estimators: rows of turns not taken (and of roleless turns) are 0.
  for (var j = min(c.tn * u.actionLen, u.tp); j < u.tp; j++) {
    adv[n * u.tp + j] = 0.0;
  }
  if (e == EST_TURN) {
    igpo(c);
  } else if (e == EST_GIGPO) {
    gigpo(c);
  } else if (e == EST_TURN_GROUP) {
    for (var t = 0u; t < c.tn; t++) {
      putTurn(c, t, scaled(turnVal(n, t), turnStats(c.g0, c.G, t)));
    }
  } else {
    for (var t = 0u; t < c.tn; t++) {
      let role = turnIn[n * u.maxTurns + t].role;
      if (role < 0 || u32(role) >= u.nRoles) {
        putTurn(c, t, 0.0);
      } else {
        putTurn(c, t, trajValue(c, role));
      }
    }
  }
}
