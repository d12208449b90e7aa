/** The shape of a method entry: data the UI, the config schema, the URL and the CLI all read. */
import type { ParamSpec, ParamValue } from './params';

export type Stage =
  | 'environment'
  | 'sampling'
  | 'reward'
  | 'filtering'
  | 'advantage'
  | 'ratio'
  | 'loss'
  | 'optimizer';

export interface MethodDef {
  id: string;
  name: string;
  /** arXiv id of the paper. */
  paper: string;
  idea: string;
  stage: Stage;
  /** Ids of methods that cannot be active together with this one. */
  conflicts: readonly string[];
  params: Readonly<Record<string, ParamSpec>>;
  /**
   * It supplies the advantage estimator. A run has exactly one; switching another estimator on
   * replaces it (the UI swaps them; the config refuses two at once, naming both).
   */
  estimator?: true;
  /** The tasks it needs (its data exists only there); absent: every task. */
  tasks?: readonly string[];
  /** Where the implementation follows an inferred reading of the paper (METHODS.md 7), what it is. */
  inferred?: string;
  /**
   * How this method maps onto real frameworks' options, for "Take it to a real run"
   * (workers/frameworkExport.ts). `null` says the framework has no such method; leaving it out
   * says no mapping was written yet (both are listed as having no equivalent).
   */
  frameworks?: { verl?: FrameworkMapping | null; trl?: FrameworkMapping | null };
}

/** A framework option value: written as Hydra override text (verl) or a Python literal (TRL). */
export type FrameworkValue = number | boolean | string | readonly number[];

/** One method's options in one framework, given its parameter values. */
export type FrameworkMapping = (params: Readonly<Record<string, ParamValue>>) => {
  /** Options to set: the framework's option name, its value, and the method's params it carries. */
  set: Array<{ key: string; value: FrameworkValue; from: string[] }>;
  /** Params that already match what the framework does (nothing to set), with why. */
  matches?: Array<{ param: string; reason: string }>;
  /** Params that cannot be expressed there, with why. */
  unsupported?: Array<{ param: string; reason: string }>;
};
