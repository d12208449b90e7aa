/**
 * The shape of a method entry. An entry is the whole method: its data (the UI, the config schema,
 * the share link and the CLI read it) and its behaviour, a hook that says what it changes in each
 * stage of the one shared trainer (workers/core/plan.ts composes the hooks of the active methods).
 */
import type { RunConfig } from '../config';
import type { Plan } from '../plan';
import type { ParamSpec, ParamValues } from './params';

export type Stage =
  | 'environment'
  | 'sampling'
  | 'reward'
  | 'filtering'
  | 'advantage'
  | 'ratio'
  | 'loss'
  | 'optimizer';

/** The training pathologies the playground detects (app/alarms.ts); a method may remedy some. */
export type Pathology = 'collapse' | 'ess' | 'grad' | 'entropy';

export type ParamSpecs = Readonly<Record<string, ParamSpec>>;

export interface MethodDef<P extends ParamSpecs = ParamSpecs> {
  id: string;
  name: string;
  /** arXiv id of the paper. */
  paper: string;
  idea: string;
  stage: Stage;
  /** Ids of methods that cannot be active together with this one. */
  conflicts: readonly string[];
  /**
   * Why, in words, for conflicts whose reason is not that both set the same part of the plan
   * (the config's refusal says it; absent: the parts each sets).
   */
  conflictReasons?: Readonly<Record<string, string>>;
  params: P;
  /**
   * It supplies the advantage estimator. A run has exactly one; switching another estimator on
   * replaces it (the UI swaps them; the config refuses two at once, naming both).
   */
  estimator?: true;
  /**
   * Its parameters hold the group statistics every run starts from (std or not, which std, the
   * epsilon), so its hook runs first in every run, active or not; another estimator then replaces
   * what it needs. Exactly one entry has it.
   */
  base?: true;
  /** The tasks it needs (its data exists only there); absent: every task. */
  tasks?: readonly string[];
  /** Where the implementation follows an inferred reading of the paper (docs/METHODS.md 7), what it is. */
  inferred?: string;
  /**
   * What the method does to one iteration: it edits the plan in place. Hooks run base first, then
   * the active estimator, then the other active methods in registry order; methods that would set
   * the same value differently are declared as conflicting instead.
   */
  plan?(plan: Plan, params: ParamValues<P>, cfg: RunConfig): void;
  /**
   * How this method maps onto real frameworks' options, for "Take it to a real run"
   * (workers/formats/frameworkExport.ts). `null` says the framework has no such method (listed as having
   * no equivalent, with `noEquivalent` as the reason when given).
   */
  frameworks?: { verl: FrameworkMapping<P> | null; trl: FrameworkMapping<P> | null; noEquivalent?: string };
  /** Pathologies it addresses, with the short description the alarms panel shows. */
  remedies?: Partial<Record<Pathology, string>>;
  /** What the batch lab cannot show of it (it acts while sampling, or between iterations). */
  labNote?: string;
  /** Its advantages need not vanish when a group's outcome rewards tie (per-turn rewards, a critic). */
  signalOnTies?: true;
  /** What `npm run -s sweep:methods` runs it on and expects (docs/METHODS_RESULTS.md). */
  sweep?: SweepRegime;
}

/**
 * A method's rows in the method sweep (cli/sweepMethods.ts names the toys and metrics): the method
 * against plain GRPO on a toy, the metric its mechanism should move and which way, and an outcome row
 * (success) on the regime where its paper's premise holds.
 */
export interface SweepRegime {
  toy: string;
  /** The method set of the method run (`grpo,<id>` for a method that is not an estimator). */
  methods: string;
  /** Knobs of the method run only (the baseline is GRPO on the toy). */
  set?: Record<string, string>;
  /** Knobs of the baseline only. */
  baseSet?: Record<string, string>;
  metric: string;
  /** +1: the method should raise it, -1 lower it, 0: no effect predicted (reference curve). */
  dir: 1 | -1 | 0;
  claim: string;
  also?: string[];
  outcome: { toy: string; dir: 1 | -1 | 0; claim: string };
}

/** A framework option value: written as Hydra override text (verl) or a Python literal (TRL). */
export type FrameworkValue = number | boolean | string | readonly number[];

export interface FrameworkMapped {
  /** Options to set: the framework's option name, its value, and the playground keys it carries. */
  set: Array<{
    key: string;
    value: FrameworkValue;
    from: string[];
    /**
     * The separator of an option that several methods extend (verl's comma lists of rollout_rs
     * options and their thresholds): their values join in the order the methods are active.
     */
    chain?: string;
  }>;
  /** Params that already match what the framework does (nothing to set), with why. */
  matches?: Array<{ param: string; reason: string }>;
  /** Params that cannot be expressed there, with why. */
  unsupported?: Array<{ param: string; reason: string }>;
}

/**
 * One method's options in one framework, given its parameter values. Declared through a method so
 * that an entry with specific params is still a MethodDef of the general shape.
 */
export type FrameworkMapping<P extends ParamSpecs = ParamSpecs> = { map(params: ParamValues<P>): FrameworkMapped }['map'];

/** Typed entry: the hook and the mappings get the value types of the entry's own params. */
export function defineMethod<const P extends ParamSpecs>(def: MethodDef<P>): MethodDef<P> {
  return def;
}
