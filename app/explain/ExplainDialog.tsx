/**
 * The Explain dialog: a clicked number's derivation as the run's methods composed it, top to bottom,
 * with this batch's values substituted and every input clickable (Back returns), and whether the
 * value recomputed from the batch equals the trainer's (workers/explain/, docs/EXPLAIN.md).
 * Non-modal, beside the page, so another number can be clicked while it is open.
 */
import { useEffect, useMemo, useRef, type ReactNode } from 'react';
import { compositionOf, explain, explainBatch, refTitle, unexplainable, type ExplainBatch, type Explanation, type Input, type Ref, type Step } from '../../workers/meta';
import type { BatchDump } from '../../workers/formats/batchDump';
import { currentBatch, useAppStore } from '../store';
import { useExplainStore, type ExplainSource } from './explainStore';
import { useLabDump } from './labSource';
import { setLabel } from '../batchLab/labModel';
import { usePendingExplain } from './pending';
import './explain.css';

function fmt(v: number | string | undefined | null): string {
  if (v === undefined || v === null) return '–';
  if (typeof v === 'string') return v;
  if (!Number.isFinite(v)) return String(v);
  if (Number.isInteger(v)) return String(v);
  const a = Math.abs(v);
  return a !== 0 && (a < 1e-4 || a >= 1e6) ? v.toExponential(4) : String(Number(v.toPrecision(6)));
}

/** A number of the page that opens its explanation. Its text is the number as the view shows it. */
export function ExplainNum({ r, source, children, className = '', label }: { r: Ref; source?: ExplainSource; children: ReactNode; className?: string; label?: string }) {
  const open = useExplainStore((s) => s.open);
  return (
    <button
      type="button"
      className={`explain-num ${className}`}
      title="Explain this number"
      aria-label={label}
      data-explain={JSON.stringify(r)}
      onClick={(e) => {
        e.stopPropagation();
        open({ source: source ?? { kind: 'batch', iter: currentBatch(useAppStore.getState())?.iter ?? 0 }, ref: r });
      }}
    >
      {children}
    </button>
  );
}

const STATUS_TEXT: Record<Explanation['status'], string> = {
  checked: "equals the trainer's value to float32 rounding",
  mismatch: "differs from the trainer's value",
  derived: "derived from the batch's checked numbers; the dump holds no trainer value to compare it with",
  input: 'a number the batch starts from',
  unavailable: 'cannot be derived from this batch',
};

function InputChip({ input }: { input: Input }) {
  const follow = useExplainStore((s) => s.follow);
  const text = (
    <>
      <span className="chip-label">{input.label}</span> <span className="chip-value">{fmt(input.value)}</span>
    </>
  );
  return (
    <li className={`chip ${input.own ? 'own' : ''}`}>
      {input.ref ? (
        <button type="button" className="chip-button" onClick={() => follow(input.ref!)} aria-label={`${input.label} ${fmt(input.value)}${input.own ? ' (this row)' : ''}: explain`}>
          {text}
        </button>
      ) : (
        <span className="chip-plain">{text}</span>
      )}
      {input.own && <span className="chip-own"> this row</span>}
      {input.note && <span className="chip-note"> {input.note}</span>}
    </li>
  );
}

function StepItem({ step }: { step: Step }) {
  const hasValue = step.value !== undefined && step.value !== '';
  return (
    <li className="explain-step">
      <div className="step-label">{step.label}</div>
      {step.formula && <code className="step-formula">{step.formula}</code>}
      {(step.subst || hasValue) && (
        <div className="step-subst">
          {step.subst && <code>{step.subst}</code>}
          {hasValue && (
            <>
              {step.subst ? ' = ' : '= '}
              <strong>{fmt(step.value)}</strong>
            </>
          )}
          {step.trainer !== undefined && (
            <span className={`step-check ${step.ok ? 'ok' : 'bad'}`}>
              {' '}
              (trainer {fmt(step.trainer)} {step.ok ? '✓' : '✗'})
            </span>
          )}
        </div>
      )}
      {step.inputs && step.inputs.length > 0 && (
        <ul className="chips" aria-label={`inputs of: ${step.label}`}>
          {step.inputs.map((i, k) => (
            <InputChip key={k} input={i} />
          ))}
        </ul>
      )}
    </li>
  );
}

/** The batch a source points into, explained-ready, or why there is none. */
function useSourceBatch(source: ExplainSource | null, hist: boolean): { b: ExplainBatch | null; why: string | null } {
  const batch = useAppStore(currentBatch);
  const lab = useLabDump(source?.kind === 'lab' ? source : null);
  const dump: BatchDump | null = source?.kind === 'lab' ? (lab.lab?.dump ?? null) : batch;
  const b = useMemo(() => {
    if (!dump || unexplainable(dump)) return null;
    const l = source?.kind === 'lab' ? lab.lab : null;
    return explainBatch(dump, l ? { weight: l.weight, grad: l.grad, notes: l.notes } : null);
  }, [dump, lab.lab, source?.kind]);
  if (!source) return { b: null, why: null };
  if (source.kind === 'lab' && lab.why) return { b: null, why: lab.why };
  if (!dump) return { b: null, why: 'The batch is not loaded: pause the run (or load the batch) to explain its numbers.' };
  // A heatmap cell names its own iteration, and says itself when that batch is gone.
  if (source.kind === 'batch' && dump.iter !== source.iter && !hist) return { b: null, why: `The batch of iteration ${source.iter} was replaced by iteration ${dump.iter}'s: click a number of the new batch.` };
  return { b, why: unexplainable(dump) };
}

export function ExplainDialog() {
  const target = useExplainStore((s) => s.target);
  const back = useExplainStore((s) => s.back);
  const { close, goBack } = useExplainStore.getState();
  const series = useAppStore((s) => s.series);
  const { b, why } = useSourceBatch(target?.source ?? null, target?.ref.kind === 'hist');
  const ref = useRef<HTMLElement>(null);
  usePendingExplain();

  const e = useMemo(() => {
    if (!target || !b) return null;
    return explain(b, target.ref, {
      histCounts: (hist, iter) => {
        const row = series.find((r) => r.iter === iter);
        // Rows of older runs have no sampler histogram: the cell is then derived, not checked.
        const counts = row ? (hist === 'adv' ? row.adv_hist : hist === 'ratio' ? row.ratio_hist : row.mismatch_hist) : undefined;
        return counts?.length ? counts : null;
      },
    });
  }, [target, b, series]);

  useEffect(() => {
    if (target) ref.current?.focus();
  }, [target]);

  if (!target) return null;
  const title = b ? refTitle(b.dump, target.ref) : 'a number';
  const lab = target.source.kind === 'lab' ? target.source : null;
  return (
    <section
      className="explain-dialog panel"
      role="dialog"
      aria-modal="false"
      aria-labelledby="explain-title"
      data-testid="explain-dialog"
      data-status={e?.status ?? 'unavailable'}
      tabIndex={-1}
      ref={ref}
      onKeyDown={(ev) => {
        if (ev.key === 'Escape') close();
      }}
    >
      <header className="explain-head">
        <h2 id="explain-title">
          Explain: {title}
          {lab ? ` (batch lab, ${setLabel(lab.methods)})` : ''}
        </h2>
        <div className="explain-actions">
          <button type="button" className="mini" disabled={back.length === 0} onClick={goBack}>
            Back
          </button>
          <button type="button" className="mini" onClick={close} aria-label="Close the explanation">
            Close
          </button>
        </div>
      </header>
      {!e && <p className="hint">{why ?? 'Nothing to explain.'}</p>}
      {e && b && (
        <>
          <p className={`explain-status ${e.status}`} data-testid="explain-status">
            {e.value !== null && e.status !== 'input' && (
              <>
                <strong data-testid="explain-value">{fmt(e.value)}</strong>:{' '}
              </>
            )}
            {e.status === 'input' && e.trainer !== null && (
              <>
                <strong data-testid="explain-value">{fmt(e.trainer)}</strong>:{' '}
              </>
            )}
            {lab && (e.status === 'checked' || e.status === 'mismatch') ? STATUS_TEXT[e.status].replace("the trainer's value", "the batch lab's value") : STATUS_TEXT[e.status]}
            {e.status === 'checked' || e.status === 'mismatch' ? ` (${fmt(e.trainer)})` : ''}
            {e.unavailable ? `: ${e.unavailable}.` : '.'}
          </p>
          {e.method && <p className="explain-method">{e.method}</p>}
          {target.ref.kind === 'token' && (
            <details className="explain-composition">
              <summary>How this run composes its methods</summary>
              <ul>
                {compositionOf(b).map((line) => (
                  <li key={line}>{line}</li>
                ))}
              </ul>
            </details>
          )}
          {e.steps.length > 0 && (
            <ol className="explain-steps" aria-label="Derivation, top to bottom">
              {e.steps.map((s, i) => (
                <StepItem key={i} step={s} />
              ))}
            </ol>
          )}
          {e.notes.length > 0 && (
            <ul className="explain-notes">
              {e.notes.map((n) => (
                <li key={n}>{n}</li>
              ))}
            </ul>
          )}
          {target.ref.kind === 'token' && <TokenLinks r={target.ref} lab={target.source.kind === 'lab'} />}
        </>
      )}
    </section>
  );
}

/** The token's other numbers, one click away. */
function TokenLinks({ r, lab }: { r: Extract<Ref, { kind: 'token' }>; lab: boolean }) {
  const follow = useExplainStore((s) => s.follow);
  // The lab's numbers per token; the trainer's dump's.
  const qs = lab ? (['adv', 'weight', 'grad'] as const) : (['adv', 'ratio', 'clip', 'kl', 'weight', 'loss', 'grad'] as const);
  return (
    <p className="explain-more">
      This token's{' '}
      {qs.map((q, i) => (
        <span key={q}>
          {i > 0 && ', '}
          <button type="button" className="link-button" aria-current={q === r.q || undefined} onClick={() => follow({ ...r, q })}>
            {q === 'adv' ? 'advantage' : q === 'weight' ? 'aggregation weight' : q === 'grad' ? 'gradient weight' : q}
          </button>
        </span>
      ))}
      .
    </p>
  );
}
