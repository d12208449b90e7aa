/**
 * A method's disease regime, above the Compare view (./whyStore.ts): the disease in a sentence, the
 * regime, and its two "what you should see" lines, each measured here on the mean over the lessons'
 * seeds and checked with the lessons' rule (workers/content/lessons.ts checkClaimOnSeeds), with the
 * charts of the runs they compare over those seeds (mean and min-max band): the pathology first,
 * then the cure. Runs A and B of the Compare below are the baseline and the method on the first seed.
 */
import { checkClaimOnSeeds, lessonSeeds, methodDef, statText, whyLessonById, whyOf, whyRunLabel, type Lesson, type RunResult, type WhyRegime, type WhyRunId } from '../../workers/meta';
import { SeedsCharts } from '../lessons/SeedsChart';
import { useWhyStore, whyBySeed } from './whyStore';
import '../lessons/LessonPanel.css';
import './WhyPanel.css';

const fmt = (x: number) => (!Number.isFinite(x) ? '—' : Math.abs(x) >= 10 ? x.toFixed(1) : x.toFixed(3));

function RowLine({ regime, lesson, row }: { regime: WhyRegime; lesson: Lesson; row: 'disease' | 'cure' }) {
  const results = useWhyStore((s) => s.results);
  const seeds = lessonSeeds(lesson);
  const spec = row === 'disease' ? regime.disease : regime.cureRow;
  const claim = lesson.claims.find((c) => c.id === row)!;
  const [a, b] = [claim.a, claim.b].map((x) => (x as { run: WhyRunId }).run) as [WhyRunId, WhyRunId];
  const got = (run: WhyRunId) => seeds.filter((seed) => results[run]?.[seed] !== undefined).length;
  const measured = got(a) === seeds.length && got(b) === seeds.length;
  const k = measured ? checkClaimOnSeeds(lesson, claim, whyBySeed(results, seeds)) : null;
  const state = k ? (k.ok ? 'ok' : 'fail') : 'pending';
  const mark = state === 'ok' ? '✓' : state === 'fail' ? '✗' : '…';
  // In words, the first run named against the second: "GRPO diseased at least 0.25 above GRPO healthy".
  const above = row === 'disease' ? spec.dir > 0 : spec.dir < 0;
  const side = `${whyRunLabel(regime, a)} at least ${spec.margin} ${above ? 'above' : 'below'} ${whyRunLabel(regime, b)}`;
  return (
    <li className={`lesson-claim ${state}`} data-testid={`why-claim-${row}`} data-state={state} data-a={k && Number.isFinite(k.a) ? k.a : ''} data-b={k && Number.isFinite(k.b) ? k.b : ''}>
      <span className="claim-mark" aria-hidden="true">
        {mark}
      </span>
      <span>
        {statText(spec.label, spec.stat)}, mean over seeds {seeds.join(', ')}:{' '}
        <span className="num">
          {k ? `${whyRunLabel(regime, a)} ${fmt(k.a)}, ${whyRunLabel(regime, b)} ${fmt(k.b)}` : `measuring: ${Math.min(got(a), got(b))} of ${seeds.length} seeds`}
        </span>{' '}
        (the line says {side}; {state === 'ok' ? 'it holds' : state === 'fail' ? 'it does not hold' : 'not measured yet'})
      </span>
    </li>
  );
}

export function WhyPanel() {
  const method = useWhyStore((s) => s.method);
  const results = useWhyStore((s) => s.results);
  const training = useWhyStore((s) => s.training);
  const errors = useWhyStore((s) => s.errors);
  const regime = method ? whyOf(method) : undefined;
  const lesson = method ? whyLessonById(`why-${method}`) : undefined;
  if (!regime || !lesson) return null;
  const name = methodDef(regime.method).name;
  const byRun = results as Record<string, Record<number, RunResult>>;
  return (
    <section className="panel why-panel" aria-labelledby="why-title" data-testid="why-panel" data-method={regime.method} data-found={regime.found}>
      <div className="panel-head">
        <h2 id="why-title">Why {name} exists</h2>
        <button type="button" className="mini" onClick={() => useWhyStore.getState().closeWhy()} aria-label={`Close why ${name} exists`}>
          Close
        </button>
      </div>
      <p className="lesson-summary">{regime.why}</p>
      {!regime.found && (
        <p className="why-none" data-testid="why-none">
          No disease was found for {name} on these toys: what follows is the closest attempt, and its lines do not show the paper's failure and cure.
        </p>
      )}
      <p className="hint">
        Regime: {regime.regime}; {regime.iters} iterations per run. In the Compare below, run A is {whyRunLabel(regime, 'sick')} and run B is {name}, both on seed {lessonSeeds(lesson)[0]}: start them to watch one seed.
      </p>
      <ol className="lesson-steps">
        {lesson.steps.map((step, i) => (
          <li key={step.run} className="lesson-step current" data-testid={`why-step-${i + 1}`}>
            <p className="lesson-step-text">{step.text}</p>
            <p className="lesson-see">
              <strong>What you should see:</strong> {step.see}
            </p>
            <ul className="lesson-claims" aria-label={`Measured for step ${i + 1}`}>
              <RowLine regime={regime} lesson={lesson} row={i === 0 ? 'disease' : 'cure'} />
            </ul>
            <SeedsCharts lesson={lesson} step={step} byRun={byRun} />
          </li>
        ))}
      </ol>
      {regime.note && <p className="hint">Note: {regime.note}</p>}
      {regime.tried && (
        <details className="why-tried">
          <summary>What was tried</summary>
          <p>{regime.tried}</p>
        </details>
      )}
      <p className="hint" role="status" data-testid="why-pool" data-training={training.length}>
        {training.length > 0 ? `Training ${training.join(', ')} (run/seed) on the CPU backend…` : ''}
      </p>
      {errors.map((e, i) => (
        <p key={i} className="error">
          {e}
        </p>
      ))}
      <p className="hint">
        Each run trains on seeds {lessonSeeds(lesson).join(', ')} (the lessons' seeds) in workers of its own; a line's numbers are the mean over those seeds and ✓
        means it holds there, as the lessons check theirs. The committed check over seeds 1-8 and held-out seeds, with intervals, is{' '}
        <code>npm run -s why -- --method {regime.method}</code> (docs/METHODS_RESULTS.md).
      </p>
    </section>
  );
}

/** The method card's line: why the method exists, and the click that opens its regime. */
export function WhyLine({ method }: { method: string }) {
  const regime = whyOf(method);
  if (!regime) return null;
  const open = () => useWhyStore.getState().openWhy(method);
  return (
    <p className="why-line" data-testid={`why-line-${method}`}>
      <strong>Why it exists:</strong> {regime.why}
      {!regime.found && <> No disease was found for it on these toys.</>}{' '}
      <button type="button" className="link-button" onClick={open}>
        {regime.found ? 'Show the disease and the cure' : 'Show what was tried'}
      </button>
    </p>
  );
}
