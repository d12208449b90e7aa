/**
 * The stages of one training iteration as step-through walks them (docs/EXPLAIN.md "Step through"),
 * and the share link's `stage=NAME`. Plain data, for the page and the link's validation.
 *
 * Each stage names what the batch holds once it is done, and the engine's update stages
 * (workers/core/update/stages.ts UPDATE_STAGES) it covers, by name: tests/unit/stepThrough.test.ts
 * checks that every stage a run shape enables is covered, for every method. Sampling and the host's
 * rewards run before the update (the trainer's collectBatch and reward stage), so they cover no
 * update stage but IGPO's answer scoring. `fromDump` says whether the ordinary batch dump (the state
 * after the update) shows the stage's numbers; live step-through (trainer stepThrough()) shows every
 * stage's, the ratio, loss, gradient-norm and update stages once per optimizer step.
 */
import { STAGE_NAMES, type StageName } from '../formats/explainLinkNames';

export interface IterationStage {
  name: string;
  label: string;
  /** What the stage computes, in a sentence. */
  doc: string;
  /** The batch dump's fields that hold this stage's result. */
  fields: readonly string[];
  fromDump: boolean;
  /** The engine's update stages whose work this stage shows (one engine stage may feed two: the loss kernel writes ratios and losses). */
  engine: readonly string[];
  /** Once per optimizer step in live step-through, rather than once per iteration. */
  perStep: boolean;
}

export const ITERATION_STAGES = [
  { name: 'sample', label: 'Sample', doc: 'B prompts drawn, G rollouts each, played turn by turn: the policy samples each turn\'s tokens, the task answers (sampling-stage methods act here).', fields: ['text', 'tokens.tok', 'tokens.turn', 'origin', 'kept'], fromDump: true, engine: [], perStep: false },
  { name: 'rewards', label: 'Rewards', doc: "Each rollout's outcome reward, and the turn rewards the methods define (IGPO's information gain, CM2's checklist, GiGPO's step rewards).", fields: ['reward', 'turn_rewards', 'p_answer', 'checklist'], fromDump: true, engine: ['answerScores'], perStep: false },
  { name: 'advantages', label: 'Advantages', doc: "The old, reference (and stale rollout) policies score the sampled tokens; a rollout correction weighs or rejects them against the sampler's; the estimator turns rewards into a per-token advantage (then batch whitening where the method asks for it).", fields: ['tokens.adv', 'tokens.logp_old', 'tokens.logp_ref', 'tokens.is_weight', 'tokens.rs_keep'], fromDump: true, engine: ['refLogprobs', 'rolloutLogprobs', 'oldLogprobs', 'rolloutCorrection', 'trajStats', 'trajGradNorm', 'sftAdvantage', 'criticAdvantage', 'tokenBaseline', 'advantage', 'whiten', 'essScale'], perStep: false },
  { name: 'ratios', label: 'Ratios and clips', doc: 'Each optimizer step recomputes the log-probs and takes the ratio to the old policy, then clips it.', fields: ['tokens.logp', 'tokens.ratio', 'tokens.clip'], fromDump: true, engine: ['stepForward', 'stepTokenStats', 'seqRatio', 'loss'], perStep: true },
  { name: 'loss', label: 'Loss', doc: 'Each token\'s clipped surrogate plus the KL term, weighted by the loss aggregation, summed into the minibatch\'s loss.', fields: ['tokens.loss', 'tokens.kl', 'loss'], fromDump: true, engine: ['loss'], perStep: true },
  { name: 'gradnorm', label: 'Gradient norm', doc: "Backward through the model, then the global gradient norm of the optimizer step (clipped at maxGradNorm).", fields: [], fromDump: false, engine: ['backward', 'optimizer'], perStep: true },
  { name: 'update', label: 'Update', doc: "Adam moves the parameters (VCPO scales each step's learning rate by the ESS); the next iteration's old policy is the result.", fields: ['lr', 'ess_minibatch', 'lr_minibatch'], fromDump: false, engine: ['stepEss', 'optimizer', 'stats', 'mismatchStats', 'negOutShare', 'finiteCheck'], perStep: true },
] as const satisfies readonly (IterationStage & { name: StageName })[];

// The link's stage names (formats/explainLinkNames.ts) are these, in this order (tests/unit/explainLink.test.ts).
export { STAGE_NAMES, type StageName };

export function stageByName(name: string): IterationStage | undefined {
  return ITERATION_STAGES.find((s) => s.name === name);
}

/**
 * Live step-through's positions over an iteration of `steps` optimizer steps: sample, rewards,
 * advantages, then (ratios, loss, gradnorm, update) per step. `step` is null before the first.
 */
export interface StagePosition {
  name: StageName;
  step: number | null;
}

export function stagePositions(steps: number): StagePosition[] {
  const out: StagePosition[] = ITERATION_STAGES.filter((s) => !s.perStep).map((s) => ({ name: s.name, step: null }));
  for (let k = 0; k < steps; k++) for (const s of ITERATION_STAGES) if (s.perStep) out.push({ name: s.name, step: k });
  return out;
}
