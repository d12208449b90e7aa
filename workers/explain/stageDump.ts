/**
 * Step-through's dumps (batchDump.ts DumpStage) stand inside an iteration: some of their numbers
 * are not computed yet, or belong to another optimizer step. Here is which numbers of such a dump
 * the explainer can check, and for the others why not, so the dialog never shows a formula over
 * values that were not the ones the trainer used at that point.
 */
import type { DumpStage } from '../formats/batchDump';
import type { ExplainBatch } from './context';
import type { Ref } from './types';

/** Token quantities every optimizer step rewrites for its minibatch's rows. */
const STEP_QUANTITIES: readonly string[] = ['ratio', 'clip', 'loss', 'kl', 'weight', 'grad', 'logp', 'entropy'];

/** Where the dump stands, in words ("after optimizer step 3 of 4 (epoch 2, minibatch 1)"). */
export function stageWords(st: DumpStage): string {
  if (st.point === 'rewards') return 'after sampling and the rewards, before the update';
  if (st.point === 'advantages') return 'after the advantage, before the first optimizer step';
  const s = st.step!;
  return `after optimizer step ${s.index + 1} of ${s.steps} (epoch ${s.epoch + 1}, minibatch ${s.minibatch + 1}${s.turn ? `, turn stage ${s.turn + 1}` : ''})`;
}

/** Why `ref` cannot be checked in `b`'s stage dump, or null (also null for an ordinary dump). */
export function stageProblem(b: ExplainBatch, ref: Ref): string | null {
  const st = b.stage;
  if (!st) return null;
  const at = `this batch stands ${stageWords(st)}`;
  switch (ref.kind) {
    case 'reward':
    case 'turn_reward':
    case 'group':
      return null;
    case 'token': {
      const stepQ = STEP_QUANTITIES.includes(ref.q);
      if (st.point === 'rewards') return `${at}: no log-prob or advantage is computed yet`;
      if (st.point === 'advantages') return stepQ ? `${at}: ratios, clips, KL terms and losses come with the optimizer steps` : null;
      if (!stepQ) return null;
      const s = st.step!;
      const mb = b.dump.trajs[ref.traj]?.minibatch ?? 0;
      if (mb !== s.minibatch) return `${at}, which trains minibatch ${s.minibatch + 1}; trajectory ${ref.traj} is in minibatch ${mb + 1}`;
      return null;
    }
    case 'opt_step':
      if (st.point !== 'step') return `${at}: no optimizer step has run`;
      return ref.step === st.step!.index ? null : `${at}; step ${ref.step + 1}'s log-probs are not in it`;
    case 'opt_update':
      return null;
    case 'batch_loss':
      return `${at}: the batch loss is the last epoch's mean over the minibatches, known once the update ends`;
    case 'hist':
      return `${at}: the metric row's histograms are of the whole update`;
  }
}
