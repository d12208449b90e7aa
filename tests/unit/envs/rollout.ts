/** Test helper: drives a task the way the trainer does, with a seeded policy that follows the grammar. */
import { PAD, type EpisodeBatch, type TaskEnv } from '../../../workers/core/envs/types';
import { createRng, type Rng } from '../../../workers/core/rng';

/** Tokens the grammar allows after `prev`. */
export function allowedAfter(env: TaskEnv, prev: number): number[] {
  const V = env.vocab.length;
  const out: number[] = [];
  for (let t = 0; t < V; t++) if (env.grammar[prev * V + t]) out.push(t);
  return out;
}

/** Token texts the grammar allows after the token named `prev`. */
export function allowedNames(env: TaskEnv, prev: string): string[] {
  return allowedAfter(env, env.vocab.indexOf(prev)).map((t) => env.vocab[t]!);
}

/**
 * Rolls a batch out with a uniform policy over grammar-allowed tokens (or `choose`), returning the
 * batch and each trajectory's token sequence as the trainer writes it (masked slots as PAD).
 */
export function rollout(
  env: TaskEnv,
  batch: EpisodeBatch,
  rng: Rng = createRng(1),
  choose?: (n: number, turn: number, slot: number, allowed: number[]) => number,
): { batch: EpisodeBatch; seqs: number[][]; turnsRun: number } {
  const { promptLen, actionLen, obsLen, maxTurns } = env.layout;
  const N = batch.size;
  const seqs = Array.from({ length: N }, (_, n) => Array.from(batch.prompt.subarray(n * promptLen, (n + 1) * promptLen)));
  let turnsRun = 0;
  for (let turn = 0; turn < maxTurns; turn++) {
    if (batch.done.every((d) => d === 1)) break;
    const actions = new Int32Array(N * actionLen);
    for (let n = 0; n < N; n++) {
      let prev = seqs[n]![seqs[n]!.length - 1]!;
      for (let a = 0; a < actionLen; a++) {
        const allowed = allowedAfter(env, prev);
        const tok = choose ? choose(n, turn, a, allowed) : allowed[rng.int(allowed.length)]!;
        actions[n * actionLen + a] = tok;
        prev = tok;
      }
    }
    const res = batch.step(turn, actions);
    turnsRun++;
    for (let n = 0; n < N; n++) {
      for (let a = 0; a < actionLen; a++) seqs[n]!.push(res.actionMask[n * actionLen + a] ? actions[n * actionLen + a]! : PAD);
      for (let o = 0; o < obsLen; o++) seqs[n]!.push(res.obs[n * obsLen + o]!);
    }
  }
  return { batch, seqs, turnsRun };
}

/** Binomial check: |k/n - p| within z standard errors (z = 5: a false alarm about 1 in 3.5 million). */
export function withinBinomial(k: number, n: number, p: number, z = 5): boolean {
  return Math.abs(k / n - p) <= z * Math.sqrt((p * (1 - p)) / n) + 1e-12;
}
