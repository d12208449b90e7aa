/** The shape of a method entry: data the UI, the config schema, the URL and the CLI all read. */
import type { ParamSpec } from './params';

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
}
