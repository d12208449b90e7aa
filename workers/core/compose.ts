/**
 * A batch assembled from rows of other batches: dynamic sampling keeps whole groups from several
 * generation rounds, guided error correction and ReGFT swap single rows for re-rolled ones. The
 * result reads like an EpisodeBatch (rewards, per-turn data, text) but cannot be stepped.
 */
import type { EpisodeBatch } from './envs';

export interface RowPick {
  ep: EpisodeBatch;
  n: number;
}

type Arr = Int32Array | Float32Array | Uint8Array;

function gather<T extends Arr>(picks: readonly RowPick[], get: (ep: EpisodeBatch) => T | undefined): T | undefined {
  const first = get(picks[0]!.ep);
  if (!first) return undefined;
  const stride = first.length / picks[0]!.ep.size;
  const out = new (first.constructor as new (n: number) => T)(picks.length * stride);
  picks.forEach(({ ep, n }, i) => {
    const src = get(ep);
    if (!src) throw new Error('compose: batches of different tasks');
    out.set(src.subarray(n * stride, (n + 1) * stride) as never, i * stride);
  });
  return out;
}

/** The rows `picks` (in order) as one batch whose groups are consecutive runs of `group` rows. */
export function composeBatch(picks: readonly RowPick[], group: number): EpisodeBatch {
  if (picks.length === 0) throw new Error('compose: no rows');
  const src = picks[0]!.ep;
  const need = <T extends Arr>(get: (ep: EpisodeBatch) => T) => gather(picks, get)!;
  const checklist = src.checklist ? picks.map(({ ep, n }) => ep.checklist![n]!) : undefined;
  const out: EpisodeBatch = {
    size: picks.length,
    group,
    prompt: need((e) => e.prompt),
    done: need((e) => e.done),
    reward: need((e) => e.reward),
    rewardTrue: need((e) => e.rewardTrue),
    success: need((e) => e.success),
    step() {
      throw new Error('a composed batch cannot be stepped');
    },
    describe: (i) => picks[i]!.ep.describe(picks[i]!.n),
    turns: (i) => picks[i]!.ep.turns(picks[i]!.n),
    oracle: src.oracle ? (i, turn) => picks[i]!.ep.oracle!(picks[i]!.n, turn) : undefined,
    ...(src.answerTokens ? { answerTokens: gather(picks, (e) => e.answerTokens), answerSpan: src.answerSpan } : {}),
    ...(src.turnRewards ? { turnRewards: gather(picks, (e) => e.turnRewards) } : {}),
    ...(src.stepRewards ? { stepRewards: gather(picks, (e) => e.stepRewards) } : {}),
    ...(checklist ? { checklist } : {}),
    ...(src.turnRole ? { turnRole: gather(picks, (e) => e.turnRole) } : {}),
    ...(src.roleReward ? { roleReward: gather(picks, (e) => e.roleReward) } : {}),
    ...(src.info ? { info: src.info } : {}),
  };
  return out;
}
