/**
 * OTB: the optimal token baseline (kernel `tokenBaseline.wgsl`; docs/METHODS.md 5.13, verl
 * `compute_multi_turn_optimal_token_baseline_advantage`), one thread per row. Positions are
 * re-indexed over each trajectory's masked rows (p = 0, 1, ... skips observation gaps):
 *   w_{n,p} = 1 - 2 pi_old + sum_v pi_old,v^2     (logit-gradient proxy, kernels/stats/trajStats.ts gradProxy)
 *   W_{n,p} = sum_{q <= p} w_{n,q}                 (cumulative path variance)
 *   B*_p    = sum_m W_{m,p} R_m / (sum_m W_{m,p} + 1e-8)   over the group members m with a position p
 *   A_{n,p} = R_n - B*_p                          (G_{n,p} = R_n: the outcome return); a group of one: A = R.
 * The baseline is taken around the row's own return: B*_p = R_n + sum_m W (R_m - R_n) / (sum W + 1e-8),
 * i.e. verl's form with the 1e-8 guard acting as a pseudo-weight on R_n. It differs from verl's by
 * 1e-8 R_n / (sum W + 1e-8), and makes a group of equal returns give exactly 0 (verl leaves
 * 1e-8 R / (sum W + 1e-8) there; at sum W = 0 it gives A = R where this gives 0).
 * Masked-out rows are 0. `zeroTail` is verl's handle_zero_tail, on by default in its multi-turn
 * version (volcengine/verl@b178a3cd verl/trainer/ppo/core_algos.py:884, 983-993): where a group's
 * longest trajectory alone has positions (past the second-longest one's length), its baseline is 0,
 * so A = R_n there instead of R_n - R_n = 0. The rollout-IS factor on w is not applied.
 */
import { defineKernel, uniformLayout, type BufferArg } from '../pipeline';
import { defineStages } from '../stages';
import tokenBaselineWGSL from './tokenBaseline.wgsl?raw';
import { gradProxy } from '../stats/trajStats';

export interface TokenBaselineInputs {
  /** [N] outcome reward R_n */
  reward: Float32Array;
  /** [N] first trajectory of n's group (kernels/advantage/advantage.ts groupLayout) */
  groupStart: Uint32Array;
  /** [N] */
  groupSize: Uint32Array;
  /** [N * Tp] 0/1 */
  mask: Float32Array;
  /** [N * Tp] log pi_old of the sampled token */
  logpOld: Float32Array;
  /** [N * Tp] sum_v pi_old,v^2 */
  sumP2Old: Float32Array;
}

/** What tokenBaselineWCpu holds at the positions past a trajectory's last masked row (W >= 0). */
export const NO_POSITION = -1;

/**
 * Each trajectory's cumulative W by position, [N * Tp]: entry n Tp + p is W_{n,p}, the sum of w
 * over its first p + 1 masked rows, and NO_POSITION from its number of masked rows on (pass 1 of
 * the GPU version, tokenBaseline.wgsl tokenBaselineW).
 */
export function tokenBaselineWCpu(inp: Pick<TokenBaselineInputs, 'mask' | 'logpOld' | 'sumP2Old'>, N: number, Tp: number): Float64Array {
  const W = new Float64Array(N * Tp).fill(NO_POSITION);
  for (let n = 0; n < N; n++) {
    let acc = 0;
    let p = 0;
    for (let j = 0; j < Tp; j++) {
      const i = n * Tp + j;
      if (inp.mask[i] === 0) continue;
      acc += gradProxy(inp.logpOld[i]!, inp.sumP2Old[i]!);
      W[n * Tp + p++] = acc;
    }
  }
  return W;
}

export function tokenBaselineCpu(inp: TokenBaselineInputs, Tp: number, zeroTail = false): Float32Array {
  const N = inp.reward.length;
  const adv = new Float32Array(N * Tp);
  const W = tokenBaselineWCpu(inp, N, Tp);
  for (let n = 0; n < N; n++) {
    const g0 = inp.groupStart[n]!;
    const G = inp.groupSize[n]!;
    const Rn = inp.reward[n]!;
    let p = 0;
    for (let j = 0; j < Tp; j++) {
      const i = n * Tp + j;
      const m = inp.mask[i]!;
      if (m === 0) continue;
      if (G <= 1) {
        adv[i] = Rn * m;
      } else {
        let num = 0;
        let den = 0;
        let others = 0;
        for (let k = g0; k < g0 + G; k++) {
          const w = W[k * Tp + p]!;
          if (w === NO_POSITION) continue;
          if (k !== n) others++;
          num += w * (Rn - inp.reward[k]!);
          den += w;
        }
        adv[i] = zeroTail && others === 0 ? Rn * m : (num / (den + 1e-8)) * m;
      }
      p++;
    }
  }
  return adv;
}

export const TOKEN_BASELINE_WORKGROUP_SIZE = 64;

/** `struct TokenBaseline` of tokenBaseline.wgsl. */
export const TOKEN_BASELINE_UNIFORM = uniformLayout('TokenBaseline', [
  ['numRows', 'u32'],
  ['tp', 'u32'],
  // verl's handle_zero_tail: baseline 0 where no other member has the position.
  ['zeroTail', 'u32'],
] as const);

export interface TokenBaselineConfig {
  numTraj: number;
  tp: number;
  /** verl's handle_zero_tail (see tokenBaselineCpu). */
  zeroTail?: boolean;
}

const values = (c: TokenBaselineConfig) => ({ numRows: c.numTraj * c.tp, tp: c.tp, zeroTail: c.zeroTail ? 1 : 0 });

/** Pass 1: each trajectory's cumulative W by position into wpos [N * tp] (tokenBaseline.wgsl tokenBaselineW). */
export const tokenBaselineWKernel = defineKernel({
  label: 'tokenBaselineW',
  wgsl: tokenBaselineWGSL,
  file: 'tokenBaseline',
  entryPoint: 'tokenBaselineW',
  workgroupSize: TOKEN_BASELINE_WORKGROUP_SIZE,
  bindings: { mask: 2, logpOld: 3, sumP2Old: 4, wpos: 5 },
  uniform: TOKEN_BASELINE_UNIFORM,
  values,
  workgroups: (c) => Math.ceil(c.numTraj / TOKEN_BASELINE_WORKGROUP_SIZE),
});

/** Pass 2: each row's advantage from its group's W at its position (tokenBaseline.wgsl tokenBaselineRows). */
export const tokenBaselineRowsKernel = defineKernel({
  label: 'tokenBaseline',
  wgsl: tokenBaselineWGSL,
  entryPoint: 'tokenBaselineRows',
  workgroupSize: TOKEN_BASELINE_WORKGROUP_SIZE,
  bindings: { trajIn: 1, mask: 2, wpos: 5, adv: 6 },
  uniform: TOKEN_BASELINE_UNIFORM,
  values,
  workgroups: (c) => Math.ceil((c.numTraj * c.tp) / TOKEN_BASELINE_WORKGROUP_SIZE),
});

/**
 * tokenBaselineCpu on the GPU, two dispatches as the reference's two loops: each trajectory's W by
 * position, then each row from its group's W at its position, O(G) per row (one walk over the
 * group's rows per row before: O(G tp), 0.7 ms on an H200 at 589,824 rows and groups of 64).
 * Buffers: trajIn [N * 4] (kernels/advantage/advantage.ts packTrajIn; the turns word is unused), mask,
 * logpOld, sumP2Old [N * tp], wpos [N * tp] (scratch), adv [N * tp] (output, every row written).
 */
export const tokenBaselineKernel = defineStages<Record<'trajIn' | 'mask' | 'logpOld' | 'sumP2Old' | 'wpos' | 'adv', BufferArg>, TokenBaselineConfig>(
  'tokenBaseline',
  [tokenBaselineWKernel, tokenBaselineRowsKernel],
);
