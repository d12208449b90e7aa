/**
 * What the active methods do to one training iteration, resolved once per run from the config:
 * the hook of each stage (docs/METHODS.md 6). The trainer and both backends read this, never the
 * method list. A method's entry in workers/core/methods/ edits the plan in its `plan` hook; this file
 * only starts from the config and runs the hooks, and names no method.
 *
 * Where a method sets a value the config also has (a clip range, the KL coef, the loss
 * aggregation), the method's value wins while it is active; methods that would set the same value
 * differently are declared as conflicting in the registry.
 */
import { ADVANTAGE_DEFAULTS, type AdvantageOptions } from '../../kernels/advantage/options';
import type { RolloutCorrectionConfig } from '../../kernels/loss/rolloutCorrection';
import type { KlType, LossAgg, RunConfig } from './config';
import { methodRegistry, type MethodDef } from './methods';

/**
 * The importance ratio of the loss and what bounds it, by mode: each mode's own parameters under
 * their own names (docs/METHODS.md 6, the ratio hook).
 */
export type RatioPlan =
  /** PPO's token ratio r, clipped to [1 - clipLow, 1 + clipHigh]; for A < 0 the loss is capped at -A dualClip. */
  | { mode: 'token'; clipLow: number; clipHigh: number; dualClip: number }
  /** One ratio per trajectory (GSPO), per step (SAMPO) or per turn stage (SeeUPO, last turn first), clipped as the token ratio. */
  | { mode: 'sequence' | 'step' | 'turn'; clipLow: number; clipHigh: number }
  /** GMPO: each token's log-ratio clipped to [-logClipLow, logClipHigh] (log-space bounds), then the geometric mean. */
  | { mode: 'geometric'; logClipLow: number; logClipHigh: number }
  /** CISPO: the IS weight itself clipped to [1 - weightLow, 1 + weightHigh], its gradient stopped (a tolerant clip). */
  | { mode: 'cispo'; weightLow: number; weightHigh: number }
  /** SAPO: no clip, a soft gate of temperature tauPos where A > 0 and tauNeg elsewhere (a tolerant clip). */
  | { mode: 'sapo'; tauPos: number; tauNeg: number };
export type RatioMode = RatioPlan['mode'];

/**
 * The loss kernel's three numbers of a ratio plan (kernels/loss/ppoLoss.ts clipLow, clipHigh,
 * dualClip; kernels/loss/seqRatio.ts the first two): each mode's parameters in the slots that mode
 * reads. The one place the modes' meanings share the kernel's slots.
 */
export function ratioSlots(r: RatioPlan): { clipLow: number; clipHigh: number; dualClip: number } {
  // Only the token mode has a dual clip: the others never read the slot.
  const NONE = 1e9;
  switch (r.mode) {
    case 'token':
      return { clipLow: r.clipLow, clipHigh: r.clipHigh, dualClip: r.dualClip };
    case 'sequence':
    case 'step':
    case 'turn':
      return { clipLow: r.clipLow, clipHigh: r.clipHigh, dualClip: NONE };
    case 'geometric':
      return { clipLow: r.logClipLow, clipHigh: r.logClipHigh, dualClip: NONE };
    case 'cispo':
      return { clipLow: r.weightLow, clipHigh: r.weightHigh, dualClip: NONE };
    case 'sapo':
      return { clipLow: r.tauPos, clipHigh: r.tauNeg, dualClip: NONE };
  }
}

/**
 * Where the log-ratio log(pi / pi_old) is clipped, for the charts' shading: log(1 - low) and
 * log(1 + high) for the ratio clips and CISPO's weight, GMPO's log-space bounds, nowhere for SAPO.
 */
export function logRatioBounds(r: RatioPlan): [number, number] {
  if (r.mode === 'sapo') return [-Infinity, Infinity];
  if (r.mode === 'geometric') return [-r.logClipLow, r.logClipHigh];
  const [low, high] = r.mode === 'cispo' ? [r.weightLow, r.weightHigh] : [r.clipLow, r.clipHigh];
  return [low < 1 ? Math.log(1 - low) : -Infinity, Math.log(1 + high)];
}

/** Whether a ratio mode reads segment log-ratios (the seqRatio kernel runs before the loss). */
export const usesSeqRatio = (m: RatioMode): m is 'sequence' | 'geometric' | 'turn' | 'step' =>
  m === 'sequence' || m === 'geometric' || m === 'turn' || m === 'step';

export interface Plan {
  /** The config the task is built from (environment-stage methods set task knobs). */
  envConfig: RunConfig;
  /**
   * Advantage kernel options; `otb` runs the token-baseline kernel instead (`zeroTail`: its
   * handle_zero_tail); `trueGradNorm`: trajStats' g2 is each trajectory's own gradient norm squared
   * (kernels/model/trajGradNorm.ts) rather than the closed-form proxy (VCPO).
   */
  advantage: AdvantageOptions & { otb: boolean; zeroTail: boolean; trueGradNorm?: boolean };
  /** Whiten advantages over the batch after the estimator. */
  whiten: boolean;
  ratio: RatioPlan;
  kl: { coef: number; type: KlType };
  lossAgg: LossAgg;
  /** The loss aggregation's sequences are steps (turns), not trajectories (GiGPO/SAMPO). */
  stepRows: boolean;
  /** Reward stage: per-turn information gain from teacher-forced answer log-probs. */
  infoGain: { igType: 'prob_diff' | 'log_prob_diff' } | null;
  /** Turn rewards come from the task (checklist turn rewards). */
  taskTurnRewards: boolean;
  /** Turn rewards are step rewards and anchor keys are the observations before each turn. */
  anchors: boolean;
  /** Filtering: drop all-equal groups and refill, from iteration `from`. */
  dynamicSampling: { maxGenBatches: number; from: number } | null;
  /** Sampling: a second, targeted round of rollouts for hard prompts. */
  extraRollouts: { schedule: 'ET' | 'HW'; nMax: number; useStd: boolean; upper: number } | null;
  /** Sampling: some wrong rollouts are finished or replaced by the reference. */
  errorCorrection: { inject: number; replace: number } | null;
  /** Sampling: a fine-tuning stage on hinted rollouts before RL (filtering starts after it). */
  hintedSft: { iters: number; hintTurns: number; hardRate: number } | null;
  /** Filtering: rows resampled by the reliability of their reward. */
  resample: { weighting: 'pow' | 'max_min' | 'max_random'; pow: number; scope: 'group' | 'batch' } | null;
  /** Optimizer: the learning rate scaled by the effective sample size. */
  essLr: { rule: 'sqrt' | 'linear'; baseEss: number } | null;
  /** Optimizer: reference and Adam resets every this many iterations (0: never). */
  refResetEvery: number;
  /** Rollouts come from the policy this many updates old. */
  staleness: number;
  /** GAE advantages from a critic table (replaces the advantage kernel). */
  critic: { size: number; gamma: number; lambda: number; lr: number } | null;
  /** Trajectories per prompt the buffers hold (the group size, or more for extra rollouts). */
  groupCap: number;
  /**
   * IS weights, rejection and veto of the sampler's tokens against the trainer's old log-probs
   * (docs/METHODS.md 5.19; kernels/loss/rolloutCorrection.ts), composed by the correction
   * entries' hooks; null: none.
   */
  rolloutCorrection: RolloutCorrectionConfig | null;
}

/** Each part of the plan in words, for saying why two methods conflict (both set the same part). */
export const PLAN_PART_NAMES: Record<keyof Plan, string> = {
  envConfig: 'the task',
  advantage: 'the advantage',
  whiten: 'advantage whitening',
  ratio: 'the importance ratio and its clip',
  kl: 'the KL penalty',
  lossAgg: 'how token losses are averaged',
  stepRows: 'what counts as a sequence in the loss',
  infoGain: 'the per-turn rewards',
  taskTurnRewards: 'the per-turn rewards',
  anchors: 'the per-turn rewards',
  dynamicSampling: 'which groups are kept (dynamic sampling)',
  extraRollouts: 'how many rollouts a prompt gets',
  errorCorrection: 'which rollouts are corrected',
  hintedSft: 'a fine-tuning stage before RL',
  resample: 'which rollouts are trained on',
  essLr: 'the learning rate',
  refResetEvery: 'the reference policy',
  staleness: 'how stale the rollouts are',
  critic: 'the advantage',
  groupCap: 'how many rollouts a prompt gets',
  rolloutCorrection: 'how the sampler’s tokens are reweighted or rejected',
};

/** The plan of a run with only the config's own settings: what every hook starts from. */
function basePlan(cfg: RunConfig): Plan {
  return {
    envConfig: cfg,
    // GRPO as verl runs it (the base entry's hook sets the group statistics), no step weight.
    advantage: { ...ADVANTAGE_DEFAULTS, stepWeight: 0, otb: false, zeroTail: false, trueGradNorm: false },
    whiten: false,
    ratio: { mode: 'token', clipLow: cfg.clipLow, clipHigh: cfg.clipHigh, dualClip: cfg.dualClip },
    kl: { coef: cfg.klCoef, type: cfg.klType },
    lossAgg: cfg.lossAgg,
    stepRows: false,
    infoGain: null,
    taskTurnRewards: false,
    anchors: false,
    dynamicSampling: null,
    extraRollouts: null,
    errorCorrection: null,
    hintedSft: null,
    resample: null,
    essLr: null,
    refResetEvery: 0,
    staleness: cfg.staleness,
    critic: null,
    groupCap: cfg.group,
    rolloutCorrection: null,
  };
}

/** The entries whose hooks run for `cfg`, in the order they run: base, estimator, the rest. */
export function hookOrder(cfg: RunConfig): MethodDef[] {
  const all = Object.values(methodRegistry);
  const active = all.filter((d) => cfg.methods.includes(d.id));
  return [...all.filter((d) => d.base), ...active.filter((d) => d.estimator && !d.base), ...active.filter((d) => !d.estimator && !d.base)];
}

export function resolvePlan(cfg: RunConfig): Plan {
  const plan = basePlan(cfg);
  for (const def of hookOrder(cfg)) def.plan?.(plan, cfg.methodParams[def.id]!, cfg);
  // A fine-tuning stage comes first; filtering starts after it (DAPO after ReGFT, as in the paper).
  if (plan.dynamicSampling && plan.hintedSft) plan.dynamicSampling.from = Math.max(plan.dynamicSampling.from, plan.hintedSft.iters + 1);
  if (plan.extraRollouts) plan.groupCap = plan.extraRollouts.nMax;
  return plan;
}

/**
 * The parts of the plan a method's hook changes, against the plan of the config's own settings
 * (the base entry's hook run): what the method acts on, by plan key.
 */
export function planPartsOf(cfg: RunConfig, id: string): Array<keyof Plan> {
  const params = cfg.methodParams;
  const start = basePlan(cfg);
  for (const d of Object.values(methodRegistry)) if (d.base) d.plan?.(start, params[d.id]!, cfg);
  const after = structuredClone(start);
  const def = Object.hasOwn(methodRegistry, id) ? methodRegistry[id] : undefined;
  if (def?.plan && params[id]) def.plan(after, params[id], cfg);
  return (Object.keys(start) as Array<keyof Plan>).filter((k) => JSON.stringify(start[k]) !== JSON.stringify(after[k]));
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
  // SAPO's gate has no clip: the config's range is unused while it is on.
  const slots = ratioSlots(p.ratio);
  check('clipLow', cfg.clipLow, p.ratio.mode === 'sapo' ? 'unused (soft gate)' : slots.clipLow);
  check('clipHigh', cfg.clipHigh, p.ratio.mode === 'sapo' ? 'unused (soft gate)' : slots.clipHigh);
  check('klCoef', cfg.klCoef, p.kl.coef);
  check('lossAgg', cfg.lossAgg, p.lossAgg);
  for (const k of Object.keys(cfg.env) as Array<keyof RunConfig['env']>) check(`env.${k}`, cfg.env[k], p.envConfig.env[k]);
  return out;
}
