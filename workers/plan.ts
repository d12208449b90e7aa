/**
 * What the active methods do to one training iteration, resolved once per run from the config:
 * the hook of each stage (METHODS.md 6). The trainer and both backends read this, never the
 * method list, so a method is data in workers/methods/ plus the stage behaviour it selects here.
 *
 * Where a method sets a value the config also has (DAPO's clip, ProRL's KL coef, GSPO's loss
 * aggregation), the method's value wins while it is active; methods that would set the same value
 * differently are declared as conflicting in the registry.
 */
import type { AdvantageOptions } from '../kernels/advantage/advantage';
import type { KlType, LossAgg, RunConfig } from './config';
import type { MethodId } from './methods';

export type RatioMode = 'token' | 'sequence' | 'geometric' | 'turn';

export interface Plan {
  /** The config the task is built from (environment-stage methods set task knobs). */
  envConfig: RunConfig;
  /** Advantage kernel options; `otb` runs the token-baseline kernel instead. */
  advantage: AdvantageOptions & { otb: boolean };
  /** REINFORCE++: whiten advantages over the batch after the estimator. */
  whiten: boolean;
  ratio: { mode: RatioMode; clipLow: number; clipHigh: number; dualClip: number };
  kl: { coef: number; type: KlType };
  lossAgg: LossAgg;
  /** Reward stage: IGPO's information-gain turn rewards (teacher-forced answer log-probs). */
  igpo: { igType: 'prob_diff' | 'log_prob_diff' } | null;
  /** Turn rewards come from the task (CM2's checklist turn rewards). */
  taskTurnRewards: boolean;
  /** GiGPO (SAMPO): turn rewards are step rewards and anchor keys are the observations before each turn. */
  anchors: boolean;
  /** Filtering: drop all-equal groups and refill (DAPO, SAMPO), from iteration `from`. */
  dynamicSampling: { maxGenBatches: number; from: number } | null;
  /** Sampling: DARS's extra rollouts for hard prompts. */
  dars: { schedule: 'ET' | 'HW'; nMax: number; useStd: boolean; upper: number } | null;
  /** Sampling: EDGE-GRPO's guided error correction. */
  gec: { inject: number; replace: number } | null;
  /** Sampling: ReGFT's reference-guided fine-tuning stage before RL. */
  regft: { iters: number; hintTurns: number; hardRate: number } | null;
  /** Filtering: PF-PPO's reward-reliability resampling. */
  pfppo: { weighting: 'pow' | 'max_min' | 'max_random'; pow: number; scope: 'group' | 'batch' } | null;
  /** Optimizer: VCPO's ESS-scaled learning rate. */
  essLr: { rule: 'sqrt' | 'linear'; baseEss: number } | null;
  /** Optimizer: ProRL's reference and Adam resets. */
  refResetEvery: number;
  /** Rollouts come from the policy this many updates old. */
  staleness: number;
  /** PPO: GAE advantages from a critic table (replaces the advantage kernel). */
  critic: { size: number; gamma: number; lambda: number; lr: number } | null;
  /** Trajectories per prompt the buffers hold (the group size, or DARS's N_max). */
  groupCap: number;
}

/** Entries of PPO's critic table (policy contexts are hashed into it). */
export const CRITIC_TABLE_SIZE = 4096;

const on = (cfg: RunConfig, id: MethodId): boolean => (cfg.methods as string[]).includes(id);

export function resolvePlan(cfg: RunConfig): Plan {
  const p = cfg.methodParams;
  const grpo = p.grpo;
  const advantage: Plan['advantage'] = {
    estimator: 'group',
    scaleStd: grpo.scaleStd as boolean,
    unbiasedStd: grpo.unbiasedStd as boolean,
    eps: grpo.eps as number,
    byRole: on(cfg, 'drmas'),
    entropyScale: on(cfg, 'edge') && (p.edge.eda as boolean),
    gamma: 1,
    separate: false,
    stepWeight: 0,
    baseline: false,
    klInReward: 0,
    isCap: 0,
    otb: false,
  };
  let whiten = false;
  let lossAgg = cfg.lossAgg;
  const ratio: Plan['ratio'] = { mode: 'token', clipLow: cfg.clipLow, clipHigh: cfg.clipHigh, dualClip: cfg.dualClip };
  const kl: Plan['kl'] = { coef: cfg.klCoef, type: cfg.klType };
  let envConfig = cfg;
  let igpo: Plan['igpo'] = null;
  let taskTurnRewards = false;
  let anchors = false;
  let dynamicSampling: Plan['dynamicSampling'] = null;

  if (on(cfg, 'drgrpo')) {
    advantage.scaleStd = false;
    lossAgg = 'seq-mean-token-sum-norm';
  }
  if (on(cfg, 'rloo')) advantage.estimator = 'rloo';
  if (on(cfg, 'reinforcepp')) {
    Object.assign(advantage, {
      estimator: 'reinforce',
      baseline: p.reinforcepp.baseline as boolean,
      klInReward: p.reinforcepp.klInReward as number,
      gamma: p.reinforcepp.gamma as number,
    });
    whiten = true;
  }
  if (on(cfg, 'igpo')) {
    Object.assign(advantage, { estimator: 'turn', separate: p.igpo.norm === 'separate', gamma: p.igpo.gamma as number });
    igpo = { igType: p.igpo.igType as 'prob_diff' | 'log_prob_diff' };
  }
  if (on(cfg, 'cm2')) {
    envConfig = { ...envConfig, env: { ...envConfig.env, toolReward: 'checklist' } };
    advantage.scaleStd = p.cm2.stdNorm as boolean;
    if (p.cm2.level === 'turn') {
      advantage.estimator = 'turnGroup';
      taskTurnRewards = true;
    }
  }
  if (on(cfg, 'otb')) advantage.otb = true;
  // PPO: GAE over the critic's values, whitened over the batch (verl's masked_whiten).
  if (on(cfg, 'ppo')) whiten = true;
  if (on(cfg, 'vcpo')) {
    Object.assign(advantage, { estimator: 'opob', scaleStd: true, isCap: p.vcpo.isCap as number });
    // VCPO's recipe: no PPO clipping (clip_ratio_low 1.0, high 1e9), seq-mean-token-mean.
    Object.assign(ratio, { clipLow: 1, clipHigh: 10 });
    lossAgg = 'seq-mean-token-mean';
  }
  if (on(cfg, 'dapo')) {
    Object.assign(ratio, { clipLow: p.dapo.clipLow as number, clipHigh: p.dapo.clipHigh as number });
    lossAgg = 'token-mean';
    if (p.dapo.dynamicSampling) dynamicSampling = { maxGenBatches: p.dapo.maxGenBatches as number, from: 1 };
  }
  if (on(cfg, 'gspo')) {
    Object.assign(ratio, { mode: 'sequence', clipLow: p.gspo.clipLow as number, clipHigh: p.gspo.clipHigh as number });
    lossAgg = 'seq-mean-token-mean';
  }
  if (on(cfg, 'gmpo')) {
    Object.assign(ratio, { mode: 'geometric', clipLow: p.gmpo.clip as number, clipHigh: p.gmpo.clip as number });
    lossAgg = 'seq-mean-token-mean';
  }
  if (on(cfg, 'seeupo')) Object.assign(ratio, { mode: 'turn', clipLow: p.seeupo.clip as number, clipHigh: p.seeupo.clip as number });
  if (on(cfg, 'sampo')) {
    Object.assign(ratio, { mode: 'sequence', clipLow: p.sampo.clipLow as number, clipHigh: p.sampo.clipHigh as number });
    lossAgg = 'seq-mean-token-mean';
    Object.assign(advantage, { estimator: 'gigpo', scaleStd: false, stepWeight: p.sampo.stepWeight as number, gamma: p.sampo.gamma as number });
    anchors = true;
    if (p.sampo.filter) dynamicSampling = { maxGenBatches: p.sampo.maxGenBatches as number, from: (p.sampo.coldStart as number) + 1 };
  }
  if (on(cfg, 'prorl')) kl.coef = p.prorl.klCoef as number;
  if (on(cfg, 'zerosearch')) {
    const z = p.zerosearch;
    envConfig = {
      ...envConfig,
      env: { ...envConfig.env, noiseSchedule: 'exp', noiseStart: z.pStart as number, noise: z.pEnd as number, noiseBase: z.base as number, noiseIters: z.iters as number },
    };
  }
  // ReGFT's fine-tuning stage comes first; filtering (DAPO after ReGFT, as in the paper) starts after it.
  if (dynamicSampling && on(cfg, 'regft')) dynamicSampling.from = Math.max(dynamicSampling.from, (p.regft.iters as number) + 1);
  const dars: Plan['dars'] = on(cfg, 'dars')
    ? { schedule: p.dars.schedule as 'ET' | 'HW', nMax: Math.max(p.dars.nMax as number, cfg.group), useStd: p.dars.useStd as boolean, upper: p.dars.upper as number }
    : null;
  if (dars) advantage.scaleStd = dars.useStd;

  return {
    envConfig,
    advantage,
    whiten,
    ratio,
    kl,
    lossAgg,
    igpo,
    taskTurnRewards,
    anchors,
    dynamicSampling,
    dars,
    gec: on(cfg, 'edge') && p.edge.gec ? { inject: p.edge.inject as number, replace: p.edge.replace as number } : null,
    regft: on(cfg, 'regft')
      ? { iters: p.regft.iters as number, hintTurns: p.regft.hintTurns as number, hardRate: p.regft.hardRate as number }
      : null,
    pfppo: on(cfg, 'pfppo')
      ? { weighting: p.pfppo.weighting as 'pow' | 'max_min' | 'max_random', pow: p.pfppo.pow as number, scope: p.pfppo.scope as 'group' | 'batch' }
      : null,
    essLr: on(cfg, 'vcpo') ? { rule: p.vcpo.rule as 'sqrt' | 'linear', baseEss: p.vcpo.baseEss as number } : null,
    refResetEvery: on(cfg, 'prorl') ? (p.prorl.resetEvery as number) : 0,
    staleness: cfg.staleness,
    critic: on(cfg, 'ppo')
      ? { size: CRITIC_TABLE_SIZE, gamma: p.ppo.gamma as number, lambda: p.ppo.lambda as number, lr: p.ppo.valueLr as number }
      : null,
    groupCap: dars ? dars.nMax : cfg.group,
  };
}

/**
 * Config fields the active methods replace, with the value the run uses instead (for the UI: a
 * setting a method overrides is shown as such, so nobody tunes a knob that has no effect).
 */
export function overriddenFields(cfg: RunConfig): Array<{ key: string; value: string | number | boolean }> {
  const p = resolvePlan(cfg);
  const out: Array<{ key: string; value: string | number | boolean }> = [];
  const check = (key: string, configured: unknown, used: string | number | boolean) => {
    if (configured !== used) out.push({ key, value: used });
  };
  check('clipLow', cfg.clipLow, p.ratio.clipLow);
  check('clipHigh', cfg.clipHigh, p.ratio.clipHigh);
  check('klCoef', cfg.klCoef, p.kl.coef);
  check('lossAgg', cfg.lossAgg, p.lossAgg);
  for (const k of Object.keys(cfg.env) as Array<keyof RunConfig['env']>) check(`env.${k}`, cfg.env[k], p.envConfig.env[k]);
  return out;
}
