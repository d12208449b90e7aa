/**
 * The advantage stage (kernel `advantage.wgsl`): every estimator of the method catalogue, one GPU
 * thread per trajectory computing its value(s) for its Tp policy-token rows (the one-value
 * estimators' rows are then written by the whole workgroup together), and the same math in
 * `advantageCpu`.
 *
 * Row layout: N trajectories x Tp rows (row i = n * Tp + j); the turn of row j is
 * floor(j / actionLen); T = maxTurns; T_n = the turns trajectory n took. Groups are contiguous runs
 * of trajectories of any size (DARS adds rollouts to some prompts; padding trajectories are groups
 * of size 1 with an all-zero mask), given per trajectory as (groupStart, groupSize). Every output
 * is multiplied by the mask; a masked-out row is exactly 0.
 *
 * Estimators (docs/METHODS.md sections in brackets; "the group statistics" of a value column are its
 * mean and std over the group's members, std unbiased (G - 1) or population per `unbiasedStd`;
 * a group of one uses mean 0 and std 1 as verl does):
 *   group      [4.2, 4.3]  A = (R - mean) / (std + eps), or R - mean without `scaleStd` (or where
 *                          std <= stdMin: VCPO divides only when the std is above 1e-8).
 *   rloo       [4.6]       A = R_n - (sum_g R - R_n) / (G - 1); a group of one gives A = R.
 *   raw                    A = R (SFT phases and tests).
 *   byRole     [5.14]      (with group/rloo/raw) turn t < T_n of role rho gets the estimator applied
 *                          to roleRewards[n][rho] with the statistics of that role's steps over the
 *                          group: each turn a member acted as rho is one element of the pool
 *                          (Dr. MAS pools per agent step); a turn without a valid role gets 0.
 *   reinforce  [4.7]       REINFORCE++: token rewards along the masked rows, -beta (l_old - l_ref)
 *                          on each and R' (R, or R - group mean with `baseline`) added on the last;
 *                          A_j = r_j + gamma A_{next masked row}. Batch whitening is kernels/advantage/whiten.ts.
 *   turn       [5.1]       IGPO: per-turn values v_{n,t} (turn T_n - 1 is the outcome) z-scored in
 *                          one pool per group (joint) or finals apart from the rest (`separate`):
 *                          r^ = (v - mu) / (sqrt(var_pop + 1e-8) + 1e-6); a pool of one value has
 *                          mu = that value and std 1 (so it normalizes to 0), an empty one mu 0.
 *                          An earlier turn whose gain is exactly 0 is no element of any pool. The
 *                          turn boundaries are the turns whose r^ is nonzero (the reference marks
 *                          them so): a turn that is none takes the advantage of the next boundary
 *                          turn (0 after the last). At the boundaries A~_t = r^_t + gamma A~_{next
 *                          boundary}, A~ = r^ at the last one.
 *   turnGroup  [5.2]       CM2 turn level: (v_{n,t} - mean_t) / (std_t + eps) over the members that
 *                          took turn t (or without std); one such member: mean 0, std 1.
 *   gigpo      [5.9]       GiGPO: A = A^E_n + omega A^S_{n,t}, A^E = the group estimator on R over
 *                          the group's step rows (each member counts once per turn it took),
 *                          A^S = R^S_{n,t} - mean of R^S over the anchor set (all turns of the group
 *                          with the same key; a set of one is its own mean, so A^S = 0),
 *                          R^S_{n,t} = sum_{k >= t} gamma^(k-t) v_{n,k}.
 *   opob       [5.10]      VCPO's off-policy optimal baseline b = sum W R / sum W over the group,
 *                          W_m = w_m^2 g2_m, log w_m = logIS_m (0 when isCap = 0), in log space with
 *                          a max shift; members with g2 = 0 have weight 0, and if all have, b is the
 *                          plain mean. A = (R - b) / (std + eps) or R - b, then times
 *                          min(w_n, isCap) when isCap > 0.
 *   entropyScale [5.3]     EDGE-GRPO EDA, applied to every estimator's output for trajectory n:
 *                          times Pbar / max(P_n, 1e-6) (clamped to [0.1, 10] with entropyClamp,
 *                          a variant the reference code leaves commented out), P =
 *                          trajStats.entMean, Pbar the mean of P over the group members with len > 0.
 * Per-turn estimators (turn, turnGroup, gigpo, byRole) give 0 to rows of turns t >= T_n.
 *
 * Exact zeros: every mean is taken around one of its own values (r0 + sum(r - r0) / G), and the
 * RLOO, anchor and OPOB baselines likewise, so a group (pool, anchor set) of equal values gives
 * exactly 0 in f32 as in float64: adv_zero_frac and the collapse metrics count those zeros (and,
 * within ADV_ZERO_TOL, a member at the mean of rewards equal only before rounding).
 * Differences are written so that those zeros are +0, not -0.
 */
import advantageWGSL from './advantage.wgsl?raw';
import { defineKernel, uniformLayout } from '../pipeline';
import type { TrajStats } from '../stats/trajStats';

export { ADV_ESTIMATORS, ADVANTAGE_DEFAULTS, type AdvEstimator, type AdvantageOptions } from './options';
import { ADV_ESTIMATORS, ADVANTAGE_DEFAULTS, type AdvantageOptions } from './options';

export interface AdvantageShape {
  /** Trajectories N. */
  numTraj: number;
  /** Policy-token rows per trajectory. */
  tp: number;
  /** T: turn slots per trajectory in the per-turn inputs. */
  maxTurns: number;
  /** Rows per turn: row j belongs to turn floor(j / actionLen). */
  actionLen: number;
  /** Columns of roleRewards (0 when the task has no roles). */
  nRoles: number;
}

/** Inputs of advantageCpu; the GPU gets the same data as packTrajIn / packTurnIn words. */
export interface AdvantageInputs {
  /** [N] outcome reward R_n */
  reward: Float32Array;
  /** [N] first trajectory of n's group (groupLayout builds these two) */
  groupStart: Uint32Array;
  /** [N] size of n's group */
  groupSize: Uint32Array;
  /** [N] turns taken T_n (<= maxTurns) */
  turns: Uint32Array;
  /** [N * T] per-turn reward v_{n,t} (IGPO, CM2, GiGPO) */
  turnReward?: Float32Array;
  /** [N * T] role of each turn, -1 none (Dr. MAS) */
  turnRole?: Int32Array;
  /** [N * T] GiGPO anchor key (e.g. an observation hash) */
  turnKey?: Uint32Array;
  /** [N * nRoles] each role's reward (Dr. MAS) */
  roleRewards?: Float32Array;
  /** entropyScale (entMean, len) and opob (logIS, g2): kernels/stats/trajStats.ts */
  trajStats?: TrajStats;
  /** [N * Tp] 0/1 loss mask */
  mask: Float32Array;
  /** [N * Tp] reinforce with klInReward only */
  logpOld?: Float32Array;
  /** [N * Tp] reinforce with klInReward only */
  logpRef?: Float32Array;
}

/** groupStart / groupSize for contiguous groups of the given sizes, in order. */
export function groupLayout(sizes: readonly number[]): { groupStart: Uint32Array; groupSize: Uint32Array } {
  const N = sizes.reduce((a, b) => a + b, 0);
  const groupStart = new Uint32Array(N);
  const groupSize = new Uint32Array(N);
  let n = 0;
  for (const G of sizes) {
    if (!(Number.isInteger(G) && G >= 1)) throw new Error(`groupLayout: group size ${G}`);
    for (let k = 0; k < G; k++, n++) {
      groupStart[n] = n - k;
      groupSize[n] = G;
    }
  }
  return { groupStart, groupSize };
}

/** Words per trajectory of `struct TrajIn` and per turn of `struct TurnIn`. */
export const TRAJ_IN_WORDS = 4;
export const TURN_IN_WORDS = 4;

/** [N * 4] `struct TrajIn { reward: f32, groupStart: u32, groupSize: u32, turns: u32 }`. */
export function packTrajIn(inp: Pick<AdvantageInputs, 'reward' | 'groupStart' | 'groupSize' | 'turns'>): Uint32Array {
  const N = inp.reward.length;
  const words = new Uint32Array(N * TRAJ_IN_WORDS);
  const f = new Float32Array(words.buffer);
  for (let n = 0; n < N; n++) {
    f[n * 4] = inp.reward[n]!;
    words[n * 4 + 1] = inp.groupStart[n]!;
    words[n * 4 + 2] = inp.groupSize[n]!;
    words[n * 4 + 3] = inp.turns[n]!;
  }
  return words;
}

/**
 * [N * T * 4] `struct TurnIn { reward: f32, role: i32, key: u32, pad: u32 }`; absent arrays give
 * reward 0, role -1, key 0.
 */
export function packTurnIn(
  inp: Pick<AdvantageInputs, 'turnReward' | 'turnRole' | 'turnKey'>,
  N: number,
  T: number,
): Uint32Array {
  const words = new Uint32Array(Math.max(N * T, 1) * TURN_IN_WORDS);
  const f = new Float32Array(words.buffer);
  const r = new Int32Array(words.buffer);
  for (let k = 0; k < N * T; k++) {
    f[k * 4] = inp.turnReward?.[k] ?? 0;
    r[k * 4 + 1] = inp.turnRole?.[k] ?? -1;
    words[k * 4 + 2] = inp.turnKey?.[k] ?? 0;
  }
  return words;
}

/** Which optional inputs an option set reads. */
function required(o: AdvantageOptions): Array<keyof AdvantageInputs> {
  const need: Array<keyof AdvantageInputs> = [];
  const e = o.estimator;
  if (e === 'turn' || e === 'turnGroup' || e === 'gigpo') need.push('turnReward');
  if (e === 'gigpo') need.push('turnKey');
  if (o.byRole && (e === 'group' || e === 'rloo' || e === 'raw')) need.push('turnRole', 'roleRewards');
  if (o.entropyScale || e === 'opob') need.push('trajStats');
  if (e === 'reinforce' && o.klInReward !== 0) need.push('logpOld', 'logpRef');
  return need;
}

/** What every estimator of advantageCpu reads: the inputs, the options and the helpers over a group. */
interface AdvContext {
  inp: AdvantageInputs;
  o: AdvantageOptions;
  shape: AdvantageShape;
  /** Turns member m took (at most maxTurns). */
  turnsOf(m: number): number;
  /** Member m's per-turn value at turn t. */
  v(m: number, t: number): number;
  /** Member m's reward (col < 0) or its reward as role `col`. */
  colVal(m: number, col: number): number;
  /** Centred, and divided by std + eps where `scaleStd` and the std is above stdMin. */
  scale(x: number, mean: number, sd: number): number;
}

/**
 * Token advantages [N * Tp] (float64 math, rounded to f32 once at the end). Throws if an input the
 * options read is missing or a group does not contain its trajectory.
 */
export function advantageCpu(inp: AdvantageInputs, o: AdvantageOptions, shape: AdvantageShape): Float32Array {
  const { numTraj: N, tp, maxTurns: T, actionLen: aL, nRoles } = shape;
  for (const k of required(o)) if (!inp[k]) throw new Error(`advantage: ${o.estimator}${o.byRole ? ' byRole' : ''} needs inputs.${k}`);
  if (inp.mask.length !== N * tp) throw new Error(`advantage: mask has ${inp.mask.length} rows, expected ${N} x ${tp}`);
  for (let n = 0; n < N; n++) {
    const g0 = inp.groupStart[n]!;
    const G = inp.groupSize[n]!;
    if (!(G >= 1 && g0 <= n && n < g0 + G && g0 + G <= N)) throw new Error(`advantage: trajectory ${n} is not in its group [${g0}, ${g0 + G})`);
  }
  const { reward, mask } = inp;
  const turnReward = inp.turnReward ?? new Float32Array(0);
  const c: AdvContext = {
    inp,
    o,
    shape,
    turnsOf: (m) => Math.min(inp.turns[m]!, T),
    v: (m, t) => turnReward[m * T + t]!,
    colVal: (m, col) => (col < 0 ? reward[m]! : inp.roleRewards![m * nRoles + col]!),
    // A std of 0 means equal values, whose centred value is exactly 0 either way.
    scale: (x, mean, sd) => (o.scaleStd && sd > o.stdMin ? (x - mean) / (sd + o.eps) : x - mean),
  };
  const adv = new Float32Array(N * tp);
  for (let n = 0; n < N; n++) {
    const g0 = inp.groupStart[n]!;
    const G = inp.groupSize[n]!;
    const tn = c.turnsOf(n);
    const factor = o.entropyScale ? entropyFactor(c, n, g0, G) : 1;
    const put = (j: number, a: number) => {
      const m = mask[n * tp + j]!;
      adv[n * tp + j] = m !== 0 ? a * factor * m : 0;
    };
    const putTurn = (t: number, a: number) => {
      for (let j = t * aL; j < Math.min((t + 1) * aL, tp); j++) put(j, a);
    };
    const e = o.estimator;
    if (e === 'reinforce') reinforceRows(c, n, g0, G, put);
    else if (e === 'turn') igpoTurns(c, n, g0, G, putTurn);
    else if (e === 'turnGroup') for (let t = 0; t < tn; t++) putTurn(t, turnGroupValue(c, n, g0, G, t));
    else if (e === 'gigpo') gigpoTurns(c, n, g0, G, putTurn);
    else if (o.byRole && e !== 'opob') {
      for (let t = 0; t < tn; t++) {
        const role = inp.turnRole![n * T + t]!;
        if (role < 0 || role >= nRoles) continue;
        putTurn(t, trajValue(c, n, g0, G, role));
      }
    } else {
      const a = e === 'opob' ? opobValue(c, n, g0, G) : trajValue(c, n, g0, G, -1);
      for (let j = 0; j < tp; j++) put(j, a);
    }
  }
  return adv;
}

/** Mean and std of a column over the group (mean 0, std 1 for a group of one). */
function meanStd(c: AdvContext, g0: number, G: number, col: number): [number, number] {
  if (G <= 1) return [0, 1];
  const r0 = c.colVal(g0, col);
  let s = 0;
  for (let m = g0; m < g0 + G; m++) s += c.colVal(m, col) - r0;
  const mean = r0 + s / G;
  let ss = 0;
  for (let m = g0; m < g0 + G; m++) ss += (c.colVal(m, col) - mean) ** 2;
  return [mean, Math.sqrt(ss / (c.o.unbiasedStd ? G - 1 : G))];
}

/** Turns member m acted as role `col` (Dr. MAS: each is one element of the role's pool). */
function roleSteps(c: AdvContext, m: number, col: number): number {
  let k = 0;
  for (let t = 0; t < c.turnsOf(m); t++) if (c.inp.turnRole![m * c.shape.maxTurns + t] === col) k++;
  return k;
}

/**
 * Mean and std of a column over a pool in which member m counts weight(m) times (Dr. MAS's agent
 * steps, GiGPO's step rows); a pool of one element has mean 0 and std 1, an empty one too.
 */
function weightedMeanStd(c: AdvContext, g0: number, G: number, col: number, weight: (m: number) => number): [number, number, number] {
  let k = 0;
  let r0 = 0;
  let s = 0;
  for (let m = g0; m < g0 + G; m++) {
    const w = weight(m);
    if (w === 0) continue;
    if (k === 0) r0 = c.colVal(m, col);
    s += w * (c.colVal(m, col) - r0);
    k += w;
  }
  if (k <= 1) return [0, 1, k];
  const mean = r0 + s / k;
  let ss = 0;
  for (let m = g0; m < g0 + G; m++) ss += weight(m) * (c.colVal(m, col) - mean) ** 2;
  return [mean, Math.sqrt(ss / (c.o.unbiasedStd ? k - 1 : k)), k];
}

/** group / rloo / raw on one column of trajectory n. */
function trajValue(c: AdvContext, n: number, g0: number, G: number, col: number): number {
  const { o } = c;
  const x = c.colVal(n, col);
  if (o.estimator === 'raw') return x;
  if (col >= 0) {
    // A role's pool is its steps: member m's reward counted once per turn it acted in that role.
    const [mean, sd, k] = weightedMeanStd(c, g0, G, col, (m) => roleSteps(c, m, col));
    if (o.estimator === 'rloo') return k <= 1 ? x : x - (mean * k - x) / (k - 1);
    return c.scale(x, mean, sd);
  }
  if (o.estimator === 'rloo') {
    if (G <= 1) return x;
    const r0 = c.colVal(g0, col);
    let s = 0;
    for (let m = g0; m < g0 + G; m++) if (m !== n) s += c.colVal(m, col) - r0;
    return x - (r0 + s / (G - 1));
  }
  const [mean, sd] = meanStd(c, g0, G, col);
  return c.scale(x, mean, sd);
}

/** VCPO's off-policy optimal baseline, then the truncated IS weight. */
function opobValue(c: AdvContext, n: number, g0: number, G: number): number {
  const { o } = c;
  const s = c.inp.trajStats!;
  const reward = c.inp.reward;
  let b = 0;
  let sd = 1;
  if (G > 1) {
    const logW = (m: number) => 2 * (o.isCap > 0 ? s.logIS[m]! : 0) + Math.log(s.g2[m]!);
    let M = -Infinity;
    for (let m = g0; m < g0 + G; m++) if (s.g2[m]! > 0) M = Math.max(M, logW(m));
    const [mean, std] = meanStd(c, g0, G, -1);
    sd = std;
    if (M === -Infinity) b = mean;
    else {
      const r0 = reward[g0]!;
      let num = 0;
      let den = 0;
      for (let m = g0; m < g0 + G; m++) {
        if (!(s.g2[m]! > 0)) continue;
        const e = Math.exp(logW(m) - M);
        num += e * (reward[m]! - r0);
        den += e;
      }
      b = r0 + num / den;
    }
  }
  let a = c.scale(reward[n]!, b, sd);
  if (o.isCap > 0) a *= Math.exp(Math.min(s.logIS[n]!, Math.log(o.isCap)));
  return a;
}

/** EDGE-GRPO's factor: the group's mean entropy over the trajectory's own. */
function entropyFactor(c: AdvContext, n: number, g0: number, G: number): number {
  const s = c.inp.trajStats!;
  let k = 0;
  let p0 = 0;
  let acc = 0;
  for (let m = g0; m < g0 + G; m++) {
    if (!(s.len[m]! > 0)) continue;
    if (k === 0) p0 = s.entMean[m]!;
    acc += s.entMean[m]! - p0;
    k++;
  }
  if (k === 0) return 1;
  const f = (p0 + acc / k) / Math.max(s.entMean[n]!, 1e-6);
  return c.o.entropyClamp ? Math.min(Math.max(f, 0.1), 10) : f;
}

/** REINFORCE++: the token rewards' discounted sum from each masked row to the end. */
function reinforceRows(c: AdvContext, n: number, g0: number, G: number, put: (j: number, a: number) => void): void {
  const { o, inp } = c;
  const tp = c.shape.tp;
  const Rp = inp.reward[n]! - (o.baseline ? meanStd(c, g0, G, -1)[0] : 0);
  let acc = 0;
  let last = true;
  for (let j = tp - 1; j >= 0; j--) {
    const i = n * tp + j;
    if (inp.mask[i] === 0) continue;
    let r = o.klInReward !== 0 ? o.klInReward * (inp.logpRef![i]! - inp.logpOld![i]!) : 0;
    if (last) r += Rp;
    last = false;
    acc = r + o.gamma * acc;
    put(j, acc);
  }
}

/** An IGPO turn boundary: the final turn, or an earlier one with a nonzero gain. */
const boundary = (c: AdvContext, m: number, t: number, tm: number) => t === tm - 1 || c.v(m, t) !== 0;

/** IGPO pool statistics over the boundary turns: kind 0 all, 1 final turns, 2 earlier turns. */
function poolStats(c: AdvContext, g0: number, G: number, kind: 0 | 1 | 2): [number, number] {
  const vals: number[] = [];
  for (let m = g0; m < g0 + G; m++) {
    const tm = c.turnsOf(m);
    for (let t = 0; t < tm; t++) {
      const fin = t === tm - 1;
      if ((kind === 1 && !fin) || (kind === 2 && fin) || !boundary(c, m, t, tm)) continue;
      vals.push(c.v(m, t));
    }
  }
  const k = vals.length;
  if (k === 0) return [0, 1];
  if (k === 1) return [vals[0]!, 1];
  const r0 = vals[0]!;
  const mu = r0 + vals.reduce((a, x) => a + (x - r0), 0) / k;
  const varPop = vals.reduce((a, x) => a + (x - mu) ** 2, 0) / k;
  return [mu, Math.sqrt(varPop + 1e-8) + 1e-6];
}

/** IGPO: z-scored turn values, discounted backwards over the boundary turns. */
function igpoTurns(c: AdvContext, n: number, g0: number, G: number, putTurn: (t: number, a: number) => void): void {
  const { o } = c;
  const tn = c.turnsOf(n);
  const joint = o.separate ? null : poolStats(c, g0, G, 0);
  const fin = o.separate ? poolStats(c, g0, G, 1) : null;
  const rest = o.separate ? poolStats(c, g0, G, 2) : null;
  let acc = 0;
  for (let t = tn - 1; t >= 0; t--) {
    if (boundary(c, n, t, tn)) {
      const [mu, sd] = joint ?? (t === tn - 1 ? fin! : rest!);
      // The reference's boundaries are where the normalized reward is nonzero: a value that
      // normalizes to exactly 0 (a pool of one) is skipped by the discounting.
      const r = (c.v(n, t) - mu) / sd;
      if (r !== 0) acc = r + o.gamma * acc;
    }
    putTurn(t, acc);
  }
}

/** CM2 turn level: turn t's value against the members that took turn t. */
function turnGroupValue(c: AdvContext, n: number, g0: number, G: number, t: number): number {
  const vals: number[] = [];
  for (let m = g0; m < g0 + G; m++) if (t < c.turnsOf(m)) vals.push(c.v(m, t));
  const k = vals.length;
  let mean = 0;
  let sd = 1;
  if (k > 1) {
    const r0 = vals[0]!;
    mean = r0 + vals.reduce((a, x) => a + (x - r0), 0) / k;
    sd = Math.sqrt(vals.reduce((a, x) => a + (x - mean) ** 2, 0) / (c.o.unbiasedStd ? k - 1 : k));
  }
  return c.scale(c.v(n, t), mean, sd);
}

/** Member m's discounted return from turn s on. */
function stepReturn(c: AdvContext, m: number, s: number): number {
  let acc = 0;
  for (let k = c.turnsOf(m) - 1; k >= s; k--) acc = c.v(m, k) + c.o.gamma * acc;
  return acc;
}

/** GiGPO: the episode advantage plus the weighted step advantage over each turn's anchor set. */
function gigpoTurns(c: AdvContext, n: number, g0: number, G: number, putTurn: (t: number, a: number) => void): void {
  const T = c.shape.maxTurns;
  const keys = c.inp.turnKey!;
  const [mean, sd] = weightedMeanStd(c, g0, G, -1, c.turnsOf);
  const AE = c.scale(c.inp.reward[n]!, mean, sd);
  for (let t = 0; t < c.turnsOf(n); t++) {
    const rs = stepReturn(c, n, t);
    const key = keys[n * T + t]!;
    let s = 0;
    let k = 0;
    for (let m = g0; m < g0 + G; m++) {
      const tm = c.turnsOf(m);
      for (let q = 0; q < tm; q++) {
        if (keys[m * T + q] !== key) continue;
        k++;
        if (m !== n || q !== t) s += rs - stepReturn(c, m, q);
      }
    }
    // A set of one is the step alone: its mean is its own return, so A^S is 0 (the reference's
    // step_norm_reward takes the mean of the one value).
    putTurn(t, AE + c.o.stepWeight * (s / k));
  }
}

/** The old GRPO entry point (uniform groups of `group`), kept for the CPU backend: advantageCpu 'group'. */
export interface GrpoOptions {
  group: number;
  scaleStd: boolean;
  unbiasedStd: boolean;
  eps: number;
}

/** rewards [N], mask [N * Tp] -> token advantages [N * Tp]. */
export function grpoAdvantageCpu(rewards: Float32Array, mask: Float32Array, Tp: number, o: GrpoOptions): Float32Array {
  const N = rewards.length;
  if (o.group < 1 || N % o.group !== 0) throw new Error(`advantage: ${N} trajectories are not whole groups of ${o.group}`);
  return advantageCpu(
    { reward: rewards, ...groupLayout(new Array<number>(N / o.group).fill(o.group)), turns: new Uint32Array(N).fill(1), mask },
    { ...ADVANTAGE_DEFAULTS, estimator: 'group', scaleStd: o.scaleStd, unbiasedStd: o.unbiasedStd, eps: o.eps },
    { numTraj: N, tp: Tp, maxTurns: 1, actionLen: Math.max(Tp, 1), nRoles: 0 },
  );
}

export const ADVANTAGE_WORKGROUP_SIZE = 64;

/** `struct Advantage` of advantage.wgsl. */
export const ADVANTAGE_UNIFORM = uniformLayout('Advantage', [
  ['numTraj', 'u32'], ['tp', 'u32'], ['maxTurns', 'u32'], ['actionLen', 'u32'], ['nRoles', 'u32'],
  ['estimator', 'u32'], ['scaleStd', 'u32'], ['unbiasedStd', 'u32'], ['eps', 'f32'],
  ['byRole', 'u32'], ['entropyScale', 'u32'], ['gamma', 'f32'], ['separate', 'u32'],
  ['stepWeight', 'f32'], ['baseline', 'u32'], ['klInReward', 'f32'], ['isCap', 'f32'],
  ['entropyClamp', 'u32'], ['stdMin', 'f32'],
] as const);

/** Largest AdvantageConfig.groupSize: the size of meanStdFixed's member array (advantage.wgsl). */
export const ADVANTAGE_MAX_FIXED_GROUP = 64;

export type AdvantageConfig = AdvantageShape &
  AdvantageOptions & {
    /**
     * The run's group size, compiled into the pipeline (0 or absent: none): groups of exactly this
     * size get their statistics from meanStdFixed (advantage.wgsl), whose loads go out together;
     * any other group the general walks. Same results either way, bit for bit. 0..64; each size
     * compiles a pipeline of its own. kernels/selectors.ts advantageGroupSize picks it per kernel variant.
     */
    groupSize?: number;
  };

/**
 * advantageCpu on the GPU, one thread per trajectory, workgroups of 64. Buffers (all read except adv):
 *   trajIn [N * 4] (packTrajIn), turnIn [N * T * 4] (packTurnIn), roleRewards [N * nRoles] f32,
 *   trajStats [N * 4] (trajStats.wgsl's output), mask, logpOld, logpRef [N * tp] f32,
 *   adv [N * tp] f32 (output, every row written).
 * An option set that does not read a buffer still needs one bound (any small buffer).
 */
export const advantageKernel = defineKernel({
  label: 'advantage',
  wgsl: advantageWGSL,
  bindings: ['trajIn', 'turnIn', 'roleRewards', 'trajStats', 'mask', 'logpOld', 'logpRef', 'adv'],
  workgroupSize: ADVANTAGE_WORKGROUP_SIZE,
  uniform: ADVANTAGE_UNIFORM,
  check: (c: AdvantageConfig) => {
    if (!ADV_ESTIMATORS.includes(c.estimator)) throw new Error(`advantage: unknown estimator ${c.estimator}`);
    if (c.actionLen < 1 || c.maxTurns < 1) throw new Error(`advantage: actionLen ${c.actionLen} and maxTurns ${c.maxTurns} must be >= 1`);
    if (c.byRole && c.nRoles < 1) throw new Error('advantage: byRole needs nRoles >= 1');
    if (!(c.isCap >= 0)) throw new Error(`advantage: isCap ${c.isCap} must be >= 0`);
    const g = c.groupSize ?? 0;
    if (!(Number.isInteger(g) && g >= 0 && g <= ADVANTAGE_MAX_FIXED_GROUP)) {
      throw new Error(`advantage: groupSize ${g} is outside 0..${ADVANTAGE_MAX_FIXED_GROUP} (0: no group size compiled in)`);
    }
  },
  // No constant for groupSize 0: the same pipeline as the compilation check's default.
  specialize: (c: AdvantageConfig): Record<string, number> => (c.groupSize ? { groupSize: c.groupSize } : {}),
  values: (c: AdvantageConfig) => ({
    numTraj: c.numTraj, tp: c.tp, maxTurns: c.maxTurns, actionLen: c.actionLen, nRoles: c.nRoles,
    estimator: ADV_ESTIMATORS.indexOf(c.estimator), scaleStd: c.scaleStd ? 1 : 0, unbiasedStd: c.unbiasedStd ? 1 : 0,
    eps: c.eps, byRole: c.byRole ? 1 : 0, entropyScale: c.entropyScale ? 1 : 0, gamma: c.gamma,
    separate: c.separate ? 1 : 0, stepWeight: c.stepWeight, baseline: c.baseline ? 1 : 0,
    klInReward: c.klInReward, isCap: c.isCap, entropyClamp: c.entropyClamp ? 1 : 0, stdMin: c.stdMin,
  }),
  workgroups: (c: AdvantageConfig) => Math.ceil(c.numTraj / ADVANTAGE_WORKGROUP_SIZE),
});

