/**
 * The sampling and filtering stages of one iteration (docs/METHODS.md 6): roll out, then whatever the
 * active methods do before the update -- DAPO/SAMPO dynamic sampling (more generation rounds until
 * the batch has no all-equal group), DARS (a second, targeted round for hard prompts), EDGE-GRPO's
 * guided error correction and ReGFT's hinted rollouts (re-rolled rows with reference actions
 * forced), PF-PPO's resampling multiplicities. The result is the batch the update trains on, its tokens already on the backend.
 *
 * Rows are laid out as batch x groupCap (groupCap = the group size, or DARS's N_max); a group is a
 * run of consecutive rows, and rows that hold no trajectory (padding, dropped prompts) are not live.
 */
import type { Backend } from './backend';
import type { RunConfig } from './config';
import { composeBatch, type RowPick } from './compose';
import { PAD, type EpisodeBatch, type TaskEnv } from './envs';
import type { Plan } from './plan';
import { createRng, hashUniform } from './rng';
import { copyRows } from './rowCopy';
import { ORIGINS } from './origins';
import { darsExtra, groupAllEqual, pfppoCounts, pfppoWeights } from './selection';

export interface RolloutLayout {
  N: number;
  L: number;
  Tp: number;
  promptLen: number;
  actionLen: number;
  obsLen: number;
  maxTurns: number;
}

/** The host copy of a batch's tokens as the update will see them. */
export interface RollState {
  ep: EpisodeBatch;
  /** [N * L] token sequences. */
  seq: Int32Array;
  /** [N * Tp] 1 on policy tokens that enter the loss. */
  mask: Float32Array;
  /** [N * Tp] the action tokens written at each policy slot (PAD where unused), for replays. */
  actions: Int32Array;
}

export interface Collected extends RollState {
  /** [N] first row of each row's group, and the group's size. */
  groupStart: Uint32Array;
  groupSize: Uint32Array;
  /** [N] 1 where the row holds a trajectory the update trains on. */
  live: Uint8Array;
  /** [N] how many times PF-PPO drew the row (1 without it). */
  mult: Float32Array;
  /** [N] PF-PPO's draw weight of each row (null without it). */
  drawWeight: Float64Array | null;
  /** [N] index into ORIGINS: sampled by the policy, or corrected, hinted or extra rollouts. */
  origin: Uint8Array;
  /** Policy performance on its own first-round rollouts (before filtering, hints or corrections). */
  firstPass: { reward: number; success: number };
  /** Trajectories rolled out this iteration (generation cost of filtering, DARS, corrections). */
  rollouts: number;
  /** ReGFT's fine-tuning stage: train with advantage = reward (1 on kept rollouts). */
  sft: boolean;
}

export interface CollectContext {
  cfg: RunConfig;
  plan: Plan;
  env: TaskEnv;
  backend: Backend;
  layout: RolloutLayout;
}

/** The sampling key of a rollout round: every round of an iteration draws different tokens. */
export const roundKey = (iter: number, round: number): number => (iter + round * 0x100000) >>> 0;

function newState(ep: EpisodeBatch, l: RolloutLayout): RollState {
  const seq = new Int32Array(l.N * l.L).fill(PAD);
  copyRows(seq, 0, l.L, ep.prompt, 0, l.promptLen, l.promptLen, l.N);
  return { ep, seq, mask: new Float32Array(l.N * l.Tp), actions: new Int32Array(l.N * l.Tp).fill(PAD) };
}

/**
 * Rolls out the `active` rows of `st` (all when null) in lockstep; other rows keep their tokens.
 * `force(n, turn)` may return the tokens row n must play at `turn` instead of sampled ones.
 */
export async function rollOut(
  backend: Backend,
  l: RolloutLayout,
  st: RollState,
  key: number,
  active: Uint8Array | null,
  force?: (n: number, turn: number) => Int32Array | null,
): Promise<number> {
  const { ep } = st;
  const { N, L, Tp, actionLen, obsLen, promptLen } = l;
  let count = 0;
  for (let n = 0; n < N; n++) {
    if (active && !active[n]) ep.done[n] = 1;
    else count++;
  }
  backend.writeSequences(st.seq);
  const w = actionLen + obsLen;
  const block = new Int32Array(N * w);
  for (let turn = 0; turn < l.maxTurns; turn++) {
    if (ep.done.every((d) => d === 1)) break;
    const actions = await backend.sampleTurn(turn, key);
    if (force) {
      for (let n = 0; n < N; n++) {
        if (ep.done[n]) continue;
        const f = force(n, turn);
        if (f) actions.set(f, n * actionLen);
      }
    }
    const { actionMask, obs } = ep.step(turn, actions);
    const { seq, mask, actions: taken } = st;
    const start = promptLen + turn * w;
    for (let n = 0; n < N; n++) {
      const b = n * w;
      const s = n * L + start;
      if (active && !active[n]) {
        for (let k = 0; k < w; k++) block[b + k] = seq[s + k]!;
        continue;
      }
      const t = n * Tp + turn * actionLen;
      for (let a = 0; a < actionLen; a++) {
        const keep = actionMask[n * actionLen + a]!;
        const tok = keep ? actions[n * actionLen + a]! : PAD;
        block[b + a] = tok;
        seq[s + a] = tok;
        mask[t + a] = keep;
        taken[t + a] = tok;
      }
      // Index loops, not subarray views: two views per row and turn were ~50k objects a rollout at
      // 8,192 rollouts, for the garbage collector (BENCHMARKS.md, the host side of a rollout).
      for (let o = 0; o < obsLen; o++) {
        const x = obs[n * obsLen + o]!;
        block[b + actionLen + o] = x;
        seq[s + actionLen + o] = x;
      }
    }
    backend.writeTurn(turn, block);
  }
  return count;
}

/** Turns taken by row n (turns with a policy token). */
export function turnsTaken(mask: Float32Array, n: number, l: Pick<RolloutLayout, 'Tp' | 'actionLen' | 'maxTurns'>): number {
  let t = 0;
  for (let turn = 0; turn < l.maxTurns; turn++) {
    for (let a = 0; a < l.actionLen; a++) if (mask[n * l.Tp + turn * l.actionLen + a]) t = turn + 1;
  }
  return t;
}

function composeStates(picks: ReadonlyArray<{ st: RollState; n: number }>, group: number, l: RolloutLayout): RollState {
  const ep = composeBatch(picks.map(({ st, n }) => ({ ep: st.ep, n }) satisfies RowPick), group);
  const out: RollState = { ep, seq: new Int32Array(l.N * l.L), mask: new Float32Array(l.N * l.Tp), actions: new Int32Array(l.N * l.Tp) };
  picks.forEach(({ st, n }, i) => {
    out.seq.set(st.seq.subarray(n * l.L, (n + 1) * l.L), i * l.L);
    out.mask.set(st.mask.subarray(n * l.Tp, (n + 1) * l.Tp), i * l.Tp);
    out.actions.set(st.actions.subarray(n * l.Tp, (n + 1) * l.Tp), i * l.Tp);
  });
  return out;
}

function meanOf(a: ArrayLike<number>, rows: number[]): number {
  return rows.length ? rows.reduce((s, n) => s + a[n]!, 0) / rows.length : 0;
}

/** What the rounds of one iteration share: the layout, the task draws, the rollout, and the group table they edit. */
interface Rounds {
  l: RolloutLayout;
  B: number;
  G: number;
  cap: number;
  N: number;
  iter: number;
  /** 0 .. N - 1. */
  all: number[];
  /** The tasks of round `round` (round 0 draws the same tasks as a run without these methods). */
  tasks(round: number): EpisodeBatch;
  roll(s: RollState, key: number, active: Uint8Array | null, force?: (n: number, turn: number) => Int32Array | null): Promise<void>;
  groupStart: Uint32Array;
  groupSize: Uint32Array;
  live: Uint8Array;
  origin: Uint8Array;
}

export async function collectBatch(ctx: CollectContext, iter: number): Promise<Collected> {
  const { cfg, plan, env, backend, layout: l } = ctx;
  const B = cfg.batch;
  const cap = plan.groupCap;
  const N = l.N;
  const base = createRng(cfg.seed).fork(iter);
  // Plain loops, not Array.from / Uint32Array.from with a callback: those were ~1 ms of a
  // 8,192-rollout iteration's host work (BENCHMARKS.md, the host side of a rollout).
  const all = new Array<number>(N);
  for (let n = 0; n < N; n++) all[n] = n;
  let rollouts = 0;
  // The state whose tokens the backend holds: a rollout leaves exactly the host copy on the device.
  let onDevice: RollState | null = null;
  const groupStart = new Uint32Array(N);
  for (let n = 0; n < N; n++) groupStart[n] = Math.floor(n / cap) * cap;
  const r: Rounds = {
    l, B, G: cfg.group, cap, N, iter, all,
    tasks: (round) => env.sample(B, cap, round === 0 ? createRng(cfg.seed).fork(iter) : base.fork(0x5eed + round), iter - 1),
    async roll(s, key, active, force) {
      rollouts += await rollOut(backend, l, s, key, active, force);
      onDevice = s;
    },
    groupStart,
    groupSize: new Uint32Array(N).fill(cap),
    live: new Uint8Array(N).fill(1),
    origin: new Uint8Array(N),
  };

  let { st, first, firstRows } = plan.extraRollouts
    ? await extraRollouts(r, plan.extraRollouts)
    : plan.dynamicSampling && iter >= plan.dynamicSampling.from
      ? await filteredRounds(r, plan.dynamicSampling.maxGenBatches)
      : await plainRound(r);
  // The policy's own performance: the first round, before filtering, hints or corrections.
  const firstPass = { reward: meanOf(first.ep.reward, firstRows), success: meanOf(first.ep.success, firstRows) };
  const sft = plan.hintedSft !== null && iter <= plan.hintedSft.iters;
  if (plan.hintedSft && sft) st = await hintedRollouts(r, st, plan.hintedSft);
  else if (plan.errorCorrection) st = await correctedRollouts(r, st, plan.errorCorrection, cfg.seed);

  const { live } = r;
  for (let n = 0; n < N; n++) if (!live[n]) st.mask.fill(0, n * l.Tp, (n + 1) * l.Tp);
  const mult = new Float32Array(N).fill(1);
  let drawWeight: Float64Array | null = null;
  if (plan.resample) {
    const counts = pfppoCounts(st.ep.reward, live, r.G, plan.resample, base.fork(0x9f));
    mult.set(counts);
    drawWeight = pfppoWeights(st.ep.reward, live, r.G, plan.resample);
  }
  // A batch assembled from several rounds or re-rolled rows is not on the device yet.
  if (st !== onDevice) backend.writeSequences(st.seq);
  return { ...st, groupStart, groupSize: r.groupSize, live, mult, drawWeight, origin: r.origin, firstPass, rollouts, sft };
}

/** One round of G rollouts per prompt. */
async function plainRound(r: Rounds): Promise<{ st: RollState; first: RollState; firstRows: number[] }> {
  const st = newState(r.tasks(0), r.l);
  await r.roll(st, roundKey(r.iter, 0), null);
  return { st, first: st, firstRows: r.all };
}

/** DARS: G rollouts per prompt first, then the schedule's extra rollouts for hard prompts, then its post-filter. */
async function extraRollouts(r: Rounds, o: NonNullable<Plan['extraRollouts']>): Promise<{ st: RollState; first: RollState; firstRows: number[] }> {
  const { B, G, cap, N, all } = r;
  const st = newState(r.tasks(0), r.l);
  const stage1 = Uint8Array.from(all, (n) => (n % cap < G ? 1 : 0));
  await r.roll(st, roundKey(r.iter, 0), stage1);
  const firstRows = all.filter((n) => stage1[n]);
  const extra = new Uint8Array(N);
  for (let p = 0; p < B; p++) {
    const rows = all.slice(p * cap, p * cap + G);
    const dn = darsExtra(meanOf(st.ep.success, rows), G, o);
    for (let k = G; k < G + dn; k++) {
      extra[p * cap + k] = 1;
      r.origin[p * cap + k] = ORIGINS.indexOf('extra');
    }
    for (let k = 0; k < cap; k++) r.groupSize[p * cap + k] = k < G + dn ? G + dn : 1;
    for (let k = G + dn; k < cap; k++) {
      r.groupStart[p * cap + k] = p * cap + k;
      r.live[p * cap + k] = 0;
      r.origin[p * cap + k] = ORIGINS.indexOf('unused');
    }
  }
  if (extra.some((x) => x)) {
    for (let n = 0; n < N; n++) if (extra[n]) st.ep.done[n] = 0;
    await r.roll(st, roundKey(r.iter, 1), extra);
  }
  // Post-filter: prompts whose combined accuracy is 0 or at least `upper` are dropped.
  for (let p = 0; p < B; p++) {
    const size = r.groupSize[p * cap]!;
    const acc = meanOf(st.ep.success, all.slice(p * cap, p * cap + size));
    if (acc === 0 || acc >= o.upper) for (let k = 0; k < size; k++) r.live[p * cap + k] = 0;
  }
  return { st, first: st, firstRows };
}

/** DAPO / SAMPO: keep groups whose rewards differ; new rounds until B groups or the round limit. */
async function filteredRounds(r: Rounds, maxGenBatches: number): Promise<{ st: RollState; first: RollState; firstRows: number[] }> {
  const { B, G, N, all } = r;
  const keep: Array<{ st: RollState; n: number }> = [];
  let round0: RollState | null = null;
  const spare: Array<{ st: RollState; n: number }> = [];
  for (let round = 0; round < maxGenBatches && keep.length < N; round++) {
    const s = newState(r.tasks(round), r.l);
    await r.roll(s, roundKey(r.iter, round), null);
    round0 ??= s;
    for (let g = 0; g < B; g++) {
      const rows = all.slice(g * G, (g + 1) * G).map((n) => ({ st: s, n }));
      if (!groupAllEqual(s.ep.reward, g * G, G)) keep.push(...rows);
      else spare.push(...rows);
    }
  }
  // Still short after the last round: fill with all-equal groups (as SAMPO does).
  const picks = [...keep.slice(0, N), ...spare.slice(0, Math.max(0, N - keep.length))];
  return { st: composeStates(picks, G, r.l), first: round0!, firstRows: all };
}

/**
 * ReGFT: hard prompts are rolled out again with a reference prefix; the correct rollouts (hinted
 * or found unaided) are the fine-tuning data.
 */
async function hintedRollouts(r: Rounds, st: RollState, o: NonNullable<Plan['hintedSft']>): Promise<RollState> {
  const { B, G, N, all } = r;
  const hard = new Uint8Array(N);
  for (let g = 0; g < B; g++) {
    const rows = all.slice(g * G, (g + 1) * G);
    if (meanOf(st.ep.success, rows) <= o.hardRate) for (const n of rows) hard[n] = 1;
  }
  if (hard.some((x) => x)) {
    const st2 = newState(r.tasks(0), r.l);
    const hint = o.hintTurns;
    await r.roll(st2, roundKey(r.iter, 1), hard, (n, turn) => (turn < hint ? st2.ep.oracle!(n, turn) : null));
    st = composeStates(all.map((n) => ({ st: hard[n] ? st2 : st, n })), G, r.l);
    for (let n = 0; n < N; n++) if (hard[n]) r.origin[n] = ORIGINS.indexOf('hint');
  }
  for (let n = 0; n < N; n++) if (!st.ep.success[n]) r.live[n] = 0;
  return st;
}

/** EDGE-GRPO GEC: some wrong rollouts are finished (inject) or replaced (replace) by the reference. */
async function correctedRollouts(r: Rounds, prev: RollState, o: NonNullable<Plan['errorCorrection']>, seed: number): Promise<RollState> {
  const { G, N, all, l } = r;
  const mode = new Uint8Array(N);
  for (let n = 0; n < N; n++) {
    if (prev.ep.success[n]) continue;
    const u = hashUniform(seed, r.iter, n, 0x6ec);
    mode[n] = u < o.inject ? 1 : u < o.inject + o.replace ? 2 : 0;
  }
  if (!mode.some((x) => x)) return prev;
  const st2 = newState(r.tasks(0), l);
  const turns = Uint32Array.from(all, (n) => turnsTaken(prev.mask, n, l));
  const force = (n: number, turn: number): Int32Array | null => {
    if (mode[n] === 1 && turn + 1 < turns[n]!) {
      return prev.actions.slice(n * l.Tp + turn * l.actionLen, n * l.Tp + (turn + 1) * l.actionLen);
    }
    return st2.ep.oracle!(n, turn);
  };
  await r.roll(st2, roundKey(r.iter, 1), Uint8Array.from(mode, (m) => (m ? 1 : 0)), force);
  for (let n = 0; n < N; n++) if (mode[n]) r.origin[n] = ORIGINS.indexOf(mode[n] === 1 ? 'gec_inject' : 'gec_replace');
  return composeStates(all.map((n) => ({ st: mode[n] ? st2 : prev, n })), G, l);
}
