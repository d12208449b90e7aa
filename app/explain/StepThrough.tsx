/**
 * Step-through, one stage at a time (workers/explain/stages.ts), forward and back, each stage
 * showing what the batch held once it was done, every number explainable.
 *
 * Two modes. Reviewing the last iteration: its batch dump, the state after the update (the
 * gradient norm and the update show the metric row's values and say what the dump lacks). Live,
 * with the run paused: "Play the next iteration" runs one iteration on the worker that hands over
 * the batch at each stage (api.stepThrough: after the rewards, after the advantage, after every
 * optimizer step), and the stages walk those batches, the per-step ones once per epoch and
 * minibatch. The group view, the inspector and the Explain dialog read the stage's batch meanwhile
 * (it is the store's batch); leaving puts the iteration's final batch back.
 */
import { useEffect, useMemo } from 'react';
import { explainBatch, ITERATION_STAGES, stageWords, unexplainable, type Ref, type StageName } from '../../workers/meta';
import type { BatchDump } from '../../workers/formats/batchDump';
import { currentBatch, useAppStore } from '../store';
import { ExplainNum } from './ExplainDialog';
import { dumpAt, useExplainStore, type LiveIteration } from './explainStore';

function fmt(v: number, digits = 3): string {
  // NaN in a stage's batch: not computed yet at that point.
  if (Number.isNaN(v)) return '–';
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

/** A live optimizer step's gradient norm and update (the stage dump's `stage.step`). */
function LiveStep({ stage, batch }: { stage: 'gradnorm' | 'update'; batch: BatchDump }) {
  const s = batch.stage!.step!;
  const maxNorm = batch.config.maxGradNorm;
  if (stage === 'gradnorm') {
    return (
      <p data-testid="step-through-gradnorm">
        Gradient norm of optimizer step {s.index + 1}, over every parameter's gradient of minibatch {s.minibatch + 1}'s loss:{' '}
        <ExplainNum r={{ kind: 'opt_update', step: s.index, q: 'grad_norm' }} label={`gradient norm of optimizer step ${s.index + 1}: explain`}>
          {fmt(s.grad_norm, 4)}
        </ExplainNum>
        {maxNorm > 0 && (
          <>
            ; {s.grad_norm > maxNorm ? `over maxGradNorm ${fmt(maxNorm)}, so the gradient is scaled by ${fmt(maxNorm / s.grad_norm, 4)}` : `within maxGradNorm ${fmt(maxNorm)}, not clipped`}
          </>
        )}
        . The batch holds no gradient, so the explainer shows this number unchecked.
      </p>
    );
  }
  return (
    <div data-testid="step-through-update">
      <p>
        Adam's step {s.index + 1} at learning rate <strong>{fmt(s.lr, 6)}</strong>
        {batch.plan?.essLr ? (
          <>
            {' '}
            (VCPO: scaled by its{' '}
            <ExplainNum r={{ kind: 'opt_step', step: s.index }} label={`ESS of optimizer step ${s.index + 1}: explain`}>
              ESS {fmt(s.ess, 3)}
            </ExplainNum>
            )
          </>
        ) : null}
        : the parameters moved by ‖Δθ‖ ={' '}
        <ExplainNum r={{ kind: 'opt_update', step: s.index, q: 'delta_norm' }} label={`parameter change of optimizer step ${s.index + 1}: explain`}>
          {fmt(s.params.delta_norm, 6)}
        </ExplainNum>{' '}
        (largest entry {fmt(s.params.delta_max, 6)}; ‖θ‖ {fmt(s.params.norm_before, 4)} → {fmt(s.params.norm_after, 4)}).
      </p>
      {s.index + 1 === s.steps && <p className="hint">The last optimizer step: leaving step-through shows the iteration's final batch (the statistics and the finite checks follow this step).</p>}
    </div>
  );
}

function StageBody({ stage, batch }: { stage: StageName; batch: BatchDump }) {
  const focus = useAppStore((s) => s.focus);
  const row = useAppStore((s) => s.series.find((r) => r.iter === batch.iter));
  const live = batch.stage?.step ?? null;
  // A live optimizer step trains one minibatch: the focused group if it is in it, else its first.
  const inStep = (n: number) => live === null || (batch.trajs[n]!.minibatch ?? 0) === live.minibatch;
  const focused = shownGroup(batch, focus);
  const g = live === null || batch.trajs.some((t, n) => t.group === focused && inStep(n)) ? focused : batch.trajs.find((_, n) => inStep(n))?.group ?? 0;
  const members = batch.trajs.map((_, n) => n).filter((n) => batch.trajs[n]!.group === g && batch.trajs[n]!.origin !== 'unused' && inStep(n));
  const steps = batch.ess_minibatch?.length ?? 0;
  if (live && (stage === 'gradnorm' || stage === 'update')) return <LiveStep stage={stage} batch={batch} />;
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
        {live && ` · minibatch ${live.minibatch + 1}`}
        {stage === 'loss' && !batch.stage && (
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

/** Shows the live position's batch in the page's views, and ends live step-through when the run moves on. */
function useLiveBatch(live: LiveIteration | null, pos: number, stage: StageName | null): void {
  const endLive = useExplainStore((s) => s.endLive);
  const lastIter = useAppStore((s) => s.series[s.series.length - 1]?.iter ?? 0);
  useEffect(() => {
    if (!live) return;
    const app = useAppStore.getState();
    if (lastIter !== live.iter) return endLive();
    if (stage === null) {
      // Leaving: the iteration's final batch, as after Step.
      useAppStore.setState({ batch: live.dumps[live.dumps.length - 1]!, batchEpoch: app.metricsEpoch });
      return endLive();
    }
    useAppStore.setState({ batch: dumpAt(live, pos), batchEpoch: app.metricsEpoch });
  }, [live, pos, stage, lastIter, endLive]);
}

function positionLabel(live: LiveIteration, i: number): string {
  const p = live.positions[i]!;
  const label = ITERATION_STAGES.find((s) => s.name === p.name)!.label;
  if (p.step === null) return label;
  const st = live.dumps[2 + p.step]!.stage!.step!;
  return `${label}, epoch ${st.epoch + 1}, minibatch ${st.minibatch + 1}${st.turn ? `, turn stage ${st.turn + 1}` : ''}`;
}

export function StepThroughPanel() {
  const stage = useExplainStore((s) => s.stage);
  const setStage = useExplainStore((s) => s.setStage);
  const live = useExplainStore((s) => s.live);
  const pos = useExplainStore((s) => s.pos);
  const goTo = useExplainStore((s) => s.goTo);
  const playNext = useAppStore((s) => s.stepThrough);
  const canPlay = useAppStore((s) => s.phase === 'idle' && !s.imported && s.configured);
  const batch = useAppStore(currentBatch);
  useLiveBatch(live, pos, stage);
  const explainable = useMemo(() => (batch && !unexplainable(batch) ? explainBatch(batch) : null), [batch]);
  if (stage === null) return null;
  const i = ITERATION_STAGES.findIndex((s) => s.name === stage);
  const cur = ITERATION_STAGES[i]!;
  const n = live ? live.positions.length : ITERATION_STAGES.length;
  const at = live ? pos : i;
  const go = (k: number) => (live ? goTo(k) : setStage(ITERATION_STAGES[k]!.name));
  const step = live?.positions[pos]?.step ?? null;
  return (
    <section
      className="panel step-through"
      aria-label={`Step through iteration ${batch?.iter ?? ''}`}
      data-testid="step-through"
      data-stage={stage}
      data-live={live ? 'true' : 'false'}
      data-step={step ?? ''}
    >
      <header className="panel-head">
        <h2>
          Step through iteration {batch?.iter ?? '–'}
          {live ? ' (live)' : ''}
        </h2>
        <button type="button" disabled={at === 0} onClick={() => go(at - 1)}>
          Back
        </button>
        <button type="button" disabled={at === n - 1} onClick={() => go(at + 1)}>
          Forward
        </button>
        {!live && (
          <button type="button" disabled={!canPlay} onClick={() => void playNext()} title="Runs the next iteration on the worker, stopping at each stage; the run counts it as one step.">
            Play the next iteration
          </button>
        )}
        <button type="button" onClick={() => setStage(null)}>
          Close
        </button>
      </header>
      {live ? (
        <ol className="st-stages st-live" aria-label="Stages of the live iteration">
          {live.positions.map((p, k) => (
            <li key={k}>
              <button type="button" className="link-button" aria-current={k === pos ? 'step' : undefined} onClick={() => goTo(k)} title={positionLabel(live, k)}>
                {p.step === null ? ITERATION_STAGES.find((s) => s.name === p.name)!.label : `${p.name === 'ratios' ? `step ${p.step + 1}: ` : ''}${ITERATION_STAGES.find((s) => s.name === p.name)!.label}`}
              </button>
            </li>
          ))}
        </ol>
      ) : (
        <ol className="st-stages" aria-label="Stages of one iteration">
          {ITERATION_STAGES.map((s) => (
            <li key={s.name}>
              <button type="button" className="link-button" aria-current={s.name === stage ? 'step' : undefined} onClick={() => setStage(s.name)}>
                {s.label}
              </button>
            </li>
          ))}
        </ol>
      )}
      <p className="st-doc">
        <strong>{live ? positionLabel(live, pos) : cur.label}.</strong> {cur.doc}
        {live && batch?.stage && ` The batch shown stands ${stageWords(batch.stage)}.`}
        {!live && cur.perStep && cur.fromDump && ' The batch dump holds the last optimizer step\u2019s; play the next iteration to see every step\u2019s.'}
        {!live && !cur.fromDump && ' The batch dump does not keep this stage\u2019s numbers; play the next iteration to see them live.'}
      </p>
      {!batch && <p className="hint">Pause the run (or load the batch) to step through its last iteration.</p>}
      {batch && !explainable && <p className="hint">{unexplainable(batch)}</p>}
      {batch && explainable && <StageBody stage={stage} batch={batch} />}
    </section>
  );
}
