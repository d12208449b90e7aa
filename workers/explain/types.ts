/**
 * What an explanation is: the number it explains (a `Ref`), the steps of its derivation with this
 * batch's values substituted, and whether the value the explainer computed from the batch's inputs
 * equals the value the trainer used. Plain data, so the page renders it and the tests compare it.
 */

/** Per-token quantities of the batch dump, and the aggregation weight the dump does not hold. */
export const TOKEN_QUANTITIES = ['adv', 'ratio', 'clip', 'loss', 'kl', 'weight', 'grad', 'logp', 'logp_old', 'logp_ref', 'logp_rollout', 'entropy', 'entropy_old', 'sum_p2_old', 'value', 'ret'] as const;
export type TokenQuantity = (typeof TOKEN_QUANTITIES)[number];

export { LINK_QUANTITIES, type LinkQuantity } from '../formats/explainLinkNames';

/** The per-iteration histograms a heatmap cell explains: advantages, log IS ratios, the sampler's log-ratios. */
export type HistName = 'adv' | 'ratio' | 'mismatch';


/** A number of the batch that can be explained. `traj` is the index in the dump's trajectories, `tok` in its token list. */
export type Ref =
  | { kind: 'token'; q: TokenQuantity; traj: number; tok: number }
  | { kind: 'reward'; traj: number }
  | { kind: 'turn_reward'; traj: number; turn: number }
  | { kind: 'group'; group: number }
  | { kind: 'opt_step'; step: number }
  /** Step-through: an optimizer step's gradient norm, or the size of its parameter change. */
  | { kind: 'opt_update'; step: number; q: 'grad_norm' | 'delta_norm' }
  | { kind: 'batch_loss' }
  | { kind: 'hist'; hist: HistName; iter: number; bin: number };

/** One value a step reads, shown beside it; clickable where it has a ref of its own. */
export interface Input {
  label: string;
  value: number | string;
  ref?: Ref;
  /** The row the explained number belongs to (marked in lists of a group's values). */
  own?: boolean;
  note?: string;
}

export interface Step {
  label: string;
  /** Which quantity of the dump this step computes, where it computes one (its trainer value is then shown beside it). */
  key?: 'ratio' | 'clip' | 'kl' | 'loss' | 'grad' | 'adv' | 'turn_reward';
  /** The formula as implemented, in symbols. */
  formula?: string;
  /** The same with this batch's numbers in place of the symbols. */
  subst?: string;
  /** What the explainer computed. */
  value?: number | string;
  /** The trainer's value where the dump holds this intermediate, and whether the two agree. */
  trainer?: number;
  ok?: boolean;
  inputs?: Input[];
}

/**
 * checked: the explainer's value equals the trainer's (to float32 rounding);
 * mismatch: it does not (the explanation shows both);
 * derived: computed from checked inputs, with no value of the trainer's to compare (the dump lacks it);
 * input: a number the batch starts from (a model output, a task's reward), with where it comes from;
 * unavailable: the dump lacks what the derivation needs (`unavailable` says what), no formula shown.
 */
export type Status = 'checked' | 'mismatch' | 'derived' | 'input' | 'unavailable';

export interface Explanation {
  ref: Ref;
  title: string;
  /** Which hooks made it (e.g. "GRPO: group-normalized outcome (docs/METHODS.md 4.2)"). */
  method: string;
  value: number | null;
  trainer: number | null;
  status: Status;
  steps: Step[];
  notes: string[];
  unavailable?: string;
}

/**
 * One of the batch lab's re-scored sets as an explainable batch: the frozen batch with the inputs
 * the lab read (every log-prob at the current parameters, so each ratio is 1; one minibatch), the
 * set's plan, its advantages in `adv`, and per trajectory and token the lab's aggregation weight and
 * gradient weight d(loss)/d(logp), which the explainer checks as it checks the trainer's numbers.
 */
export interface LabDump {
  dump: import('../formats/batchDump').BatchDump;
  methods: string[];
  weight: number[][];
  grad: number[][];
  /** What the lab does differently from training for this set (said beside its explanations). */
  notes: string[];
}

/** A stable text key of a ref (React keys, the dialog's history). */
export function refKey(r: Ref): string {
  switch (r.kind) {
    case 'token':
      return `token:${r.q}:${r.traj}:${r.tok}`;
    case 'reward':
      return `reward:${r.traj}`;
    case 'turn_reward':
      return `turn_reward:${r.traj}:${r.turn}`;
    case 'group':
      return `group:${r.group}`;
    case 'opt_step':
      return `opt_step:${r.step}`;
    case 'opt_update':
      return `opt_update:${r.step}:${r.q}`;
    case 'batch_loss':
      return 'batch_loss';
    case 'hist':
      return `hist:${r.hist}:${r.iter}:${r.bin}`;
  }
}
