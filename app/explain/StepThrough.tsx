/**
 * Step-through of the last iteration, one stage at a time (workers/explain/stages.ts), forward and
 * back, each stage showing what the batch held once it was done, every number explainable.
 *
 * What this is built on today: the batch dump, the state after the iteration's update. The stages
 * whose numbers the dump keeps (sample, rewards, advantages, the last optimizer step's ratios and
 * clips, the loss) are shown from it; the gradient norm and the update show the metric row's
 * values and say what the dump lacks. Playing the *next* iteration live, stopping between its
 * stages (each epoch and minibatch, on either backend), needs the engine to walk a declared table
 * of its update's stages and hand each one's values over; the stage names here are the ones such a
 * table is to be checked against.
 */
import { useMemo } from 'react';
import { explainBatch, ITERATION_STAGES, unexplainable, type Ref, type StageName } from '../../workers/meta';
import type { BatchDump } from '../../workers/formats/batchDump';
import { currentBatch, useAppStore } from '../store';
import { ExplainNum } from './ExplainDialog';
import { useExplainStore } from './explainStore';

function fmt(v: number, digits = 3): string {
  if (!Number.isFinite(v)) return String(v);
  return v !== 0 && Math.abs(v) < 10 ** -digits ? v.toExponential(1) : Number.isInteger(v) ? String(v) : v.toFixed(digits);
}

export function StepThroughButton() {
  const stage = useExplainStore((s) => s.stage);
  const setStage = useExplainStore((s) => s.setStage);
  const idle = useAppStore((s) => s.phase === 'idle');
  return (
    <button type="button" className="mini step-through-open" aria-pressed={stage !== null} disabled={!idle && stage === null} onClick={() => setStage(stage === null ? 'sample' : null)}>
      {/* No "Step" in the label: the run's Step button is found by that word. */}
      {stage === null ? 'Stages of this iteration' : 'Close the stages'}
    </button>
  );
}

/** The group the stage tables show: the focused one, or the focused trajectory's, else group 0. */
function shownGroup(batch: BatchDump, focus: ReturnType<typeof useAppStore.getState>['focus']): number {
  if (focus?.kind === 'group') return focus.index;
  if (focus?.kind === 'traj') return batch.trajs[focus.index]?.group ?? 0;
  return 0;
}

function TokenRow({ n, batch, q }: { n: number; batch: BatchDump; q: 'adv' | 'ratio' | 'loss' }) {
  const t = batch.trajs[n]!;
  return (
    <>
      {t.tokens.map((k, j) => {
        const v = q === 'adv' ? k.adv : q === 'ratio' ? k.ratio : k.loss;
        const r: Ref = { kind: 'token', q, traj: n, tok: j };
        return (
          <span key={j} className={`st-token ${q === 'ratio' && k.clip !== 0 ? 'clipped' : ''}`}>
            <code>{k.text}</code>{' '}
            <ExplainNum r={r} label={`${q} of token ${j} of trajectory ${n}: explain`}>
              {fmt(v, q === 'loss' ? 5 : 3)}
            </ExplainNum>
            {q === 'ratio' && k.clip !== 0 && (
              <>
                {' '}
                <ExplainNum r={{ ...r, q: 'clip' }} label={`clip of token ${j} of trajectory ${n}: explain`}>
                  {k.clip < 0 ? 'low' : 'high'}
                </ExplainNum>
              </>
            )}
          </span>
        );
      })}
    </>
  );
}

function StageBody({ stage, batch }: { stage: StageName; batch: BatchDump }) {
  const focus = useAppStore((s) => s.focus);
  const row = useAppStore((s) => s.series.find((r) => r.iter === batch.iter));
  const g = shownGroup(batch, focus);
  const members = batch.trajs.map((_, n) => n).filter((n) => batch.trajs[n]!.group === g && batch.trajs[n]!.origin !== 'unused');
  const steps = batch.ess_minibatch?.length ?? 0;
  if (stage === 'gradnorm') {
    return (
      <p>
        Gradient norm of the iteration's last optimizer step (the metric row): <strong>{row ? fmt(row.grad_norm, 4) : '–'}</strong>. Not derivable from the batch dump:
        it holds no gradient, and no earlier step's log-probs.
      </p>
    );
  }
  if (stage === 'update') {
    return (
      <>
        <p>
          Learning rate applied: <strong>{fmt(batch.lr, 6)}</strong>. The parameters before and after the update are not in the batch dump, so the update itself
          cannot be shown number by number.
        </p>
        {steps > 0 && (
          <p>
            VCPO scaled each optimizer step's learning rate by its ESS:{' '}
            {Array.from({ length: steps }, (_, s) => (
              <span key={s}>
                {s > 0 && ', '}
                <ExplainNum r={{ kind: 'opt_step', step: s }} label={`optimizer step ${s + 1}: explain`}>
                  step {s + 1}
                </ExplainNum>
              </span>
            ))}
            .
          </p>
        )}
      </>
    );
  }
  return (
    <table className="key-table st-table" data-testid="step-through-table">
      <caption>
        Group {g}
        {stage === 'loss' && (
          <>
            {' '}
            · batch loss{' '}
            <ExplainNum r={{ kind: 'batch_loss' }} label="the batch loss: explain">
              {fmt(batch.loss, 5)}
            </ExplainNum>
          </>
        )}
      </caption>
      <thead>
        <tr>
          <th scope="col">trajectory</th>
          <th scope="col">{stage === 'sample' ? 'turns' : stage === 'rewards' ? 'reward, turn rewards' : stage === 'advantages' ? 'token advantages' : stage === 'ratios' ? 'token ratios (clipped marked)' : 'token losses'}</th>
        </tr>
      </thead>
      <tbody>
        {members.map((n) => {
          const t = batch.trajs[n]!;
          return (
            <tr key={n}>
              <th scope="row">
                #{n}
                {t.kept === false ? ' (not trained)' : t.origin && t.origin !== 'policy' ? ` (${t.origin})` : ''}
              </th>
              <td className="traj-text">
                {stage === 'sample' && t.text}
                {stage === 'rewards' && (
                  <>
                    <ExplainNum r={{ kind: 'reward', traj: n }} label={`reward of trajectory ${n}: explain`}>
                      {fmt(t.reward, 3)}
                    </ExplainNum>
                    {(t.turn_rewards ?? []).map((v, k) => (
                      <span key={k}>
                        {' '}
                        · turn {k + 1}{' '}
                        <ExplainNum r={{ kind: 'turn_reward', traj: n, turn: k }} label={`turn ${k + 1} reward of trajectory ${n}: explain`}>
                          {fmt(v, 3)}
                        </ExplainNum>
                      </span>
                    ))}
                  </>
                )}
                {stage === 'advantages' && <TokenRow n={n} batch={batch} q="adv" />}
                {stage === 'ratios' && <TokenRow n={n} batch={batch} q="ratio" />}
                {stage === 'loss' && <TokenRow n={n} batch={batch} q="loss" />}
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

export function StepThroughPanel() {
  const stage = useExplainStore((s) => s.stage);
  const setStage = useExplainStore((s) => s.setStage);
  const batch = useAppStore(currentBatch);
  const explainable = useMemo(() => (batch && !unexplainable(batch) ? explainBatch(batch) : null), [batch]);
  if (stage === null) return null;
  const i = ITERATION_STAGES.findIndex((s) => s.name === stage);
  const cur = ITERATION_STAGES[i]!;
  return (
    <section className="panel step-through" aria-label={`Step through iteration ${batch?.iter ?? ''}`} data-testid="step-through" data-stage={stage}>
      <header className="panel-head">
        <h2>Step through iteration {batch?.iter ?? '–'}</h2>
        <button type="button" disabled={i === 0} onClick={() => setStage(ITERATION_STAGES[i - 1]!.name)}>
          Back
        </button>
        <button type="button" disabled={i === ITERATION_STAGES.length - 1} onClick={() => setStage(ITERATION_STAGES[i + 1]!.name)}>
          Forward
        </button>
        <button type="button" onClick={() => setStage(null)}>
          Close
        </button>
      </header>
      <ol className="st-stages" aria-label="Stages of one iteration">
        {ITERATION_STAGES.map((s) => (
          <li key={s.name}>
            <button type="button" className="link-button" aria-current={s.name === stage ? 'step' : undefined} onClick={() => setStage(s.name)}>
              {s.label}
            </button>
          </li>
        ))}
      </ol>
      <p className="st-doc">
        <strong>{cur.label}.</strong> {cur.doc}
        {!cur.fromDump && ' The batch dump does not keep this stage\u2019s numbers.'}
      </p>
      {!batch && <p className="hint">Pause the run (or load the batch) to step through its last iteration.</p>}
      {batch && !explainable && <p className="hint">{unexplainable(batch)}</p>}
      {batch && explainable && <StageBody stage={stage} batch={batch} />}
    </section>
  );
}
