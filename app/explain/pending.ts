/**
 * A share link's `explain=ITER.TRAJ.TOKEN` waits until the page holds iteration ITER's batch (with
 * `step=ITER` the page trains there and pauses), then opens. A value the batch cannot hold (a
 * trajectory or token it does not have), or an iteration the run went past without its batch
 * being loaded, is named in the link notice; the rest of the link has applied already.
 */
import { useEffect } from 'react';
import { explainText, refProblem, type ExplainLink, type Ref } from '../../workers/meta';
import { currentBatch, useAppStore } from '../store';
import { useExplainStore } from './explainStore';

function report(link: ExplainLink, message: string): void {
  useAppStore.setState((s) => ({ linkProblems: [...s.linkProblems, { key: 'explain', value: explainText(link), message }] }));
}

export function usePendingExplain(): void {
  const pending = useExplainStore((s) => s.pending);
  const batch = useAppStore(currentBatch);
  const lastIter = useAppStore((s) => s.series[s.series.length - 1]?.iter ?? 0);
  const idle = useAppStore((s) => s.phase === 'idle');
  useEffect(() => {
    if (!pending) return;
    const { setPending, open } = useExplainStore.getState();
    if (batch && batch.iter === pending.iter) {
      const ref: Ref = { kind: 'token', q: pending.q, traj: pending.traj, tok: pending.tok };
      const problem = refProblem(batch, ref);
      setPending(null);
      if (problem) report(pending, problem);
      else {
        open({ source: { kind: 'batch', iter: batch.iter }, ref });
        useAppStore.getState().setFocus({ kind: 'traj', index: pending.traj });
      }
      return;
    }
    // Paused past it: that iteration's batch was replaced without being shown.
    if (idle && lastIter > pending.iter) {
      setPending(null);
      report(pending, `the run is at iteration ${lastIter}, past ${pending.iter}, whose batch is gone (add step=${pending.iter} to the link to pause there)`);
    }
  }, [pending, batch, lastIter, idle]);
}
