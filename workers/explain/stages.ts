/**
 * The stages of one training iteration as step-through walks them (docs/EXPLAIN.md "Step through"),
 * and the share link's `stage=NAME`. Plain data, for the page and the link's validation.
 *
 * Each stage names what the batch holds once it is done. `fromDump` says whether the batch dump
 * (the iteration's state after its update) lets the page show that stage's numbers; the others
 * need the engine to stop between its stages and hand over that stage's values, which the dump
 * does not keep (each optimizer step's gradient norm, the parameters before and after).
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
}

export const ITERATION_STAGES = [
  { name: 'sample', label: 'Sample', doc: 'B prompts drawn, G rollouts each, played turn by turn: the policy samples each turn\'s tokens, the task answers (sampling-stage methods act here).', fields: ['text', 'tokens.tok', 'tokens.turn', 'origin', 'kept'], fromDump: true },
  { name: 'rewards', label: 'Rewards', doc: "Each rollout's outcome reward, and the turn rewards the methods define (IGPO's information gain, CM2's checklist, GiGPO's step rewards).", fields: ['reward', 'turn_rewards', 'p_answer', 'checklist'], fromDump: true },
  { name: 'advantages', label: 'Advantages', doc: 'The estimator turns rewards into a per-token advantage (then batch whitening where the method asks for it).', fields: ['tokens.adv'], fromDump: true },
  { name: 'ratios', label: 'Ratios and clips', doc: 'Each optimizer step recomputes the log-probs and takes the ratio to the old policy, then clips it; the dump holds the last step\'s.', fields: ['tokens.logp', 'tokens.ratio', 'tokens.clip'], fromDump: true },
  { name: 'loss', label: 'Loss', doc: 'Each token\'s clipped surrogate plus the KL term, weighted by the loss aggregation, summed into the minibatch\'s loss.', fields: ['tokens.loss', 'tokens.kl', 'loss'], fromDump: true },
  { name: 'gradnorm', label: 'Gradient norm', doc: "Backward through the model, then the global gradient norm of each optimizer step (clipped at maxGradNorm): the metric row holds the last step's.", fields: [], fromDump: false },
  { name: 'update', label: 'Update', doc: "Adam moves the parameters (VCPO scales each step's learning rate by the ESS); the next iteration's old policy is the result.", fields: ['lr', 'ess_minibatch', 'lr_minibatch'], fromDump: false },
] as const satisfies readonly (IterationStage & { name: StageName })[];

// The link's stage names (formats/explainLinkNames.ts) are these, in this order (tests/unit/explainLink.test.ts).
export { STAGE_NAMES, type StageName };

export function stageByName(name: string): IterationStage | undefined {
  return ITERATION_STAGES.find((s) => s.name === name);
}
