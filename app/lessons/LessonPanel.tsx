/**
 * The lesson side panel, laid out for a screen in front of a class: the step navigation at the top,
 * then the current step in full (its text, the live charts it tells you to watch, the progress of
 * its seeds, "what you should see" with the numbers measured here) and the other steps folded to
 * one line each, so after Next or Previous the step is on screen without scrolling. Each step loads
 * its run as a share link and runs it to the iteration the claims measure.
 */
import { useEffect, useMemo, useRef, useState } from 'react';
import { checkClaimOnSeeds, decodeShareLink, describeClaim, lessonById, lessonRun, lessonSeeds, methodDef, type Claim, type Lesson, type LessonStep } from '../../workers/meta';
import { copyText } from '../exporters';
import { LiveChart } from '../panels/MetricsCharts';
import { useAppStore } from '../store';
import { shareLinkFor } from '../urlSync';
import { allSeedsIn, bySeed, runOnScreen, runsOf, useLessonCapture, useLessonResults } from './lessonResults';
import { SeedsCharts } from './SeedsChart';
import { useSeedPool, watchSeedPool } from './seedPool';
import { lessonStepHash } from './links';
import { progressFraction, progressText, stepProgress } from './stepProgress';
import './LessonPanel.css';

/** Loads step `index` (0-based): its link's config, runs to its iteration count, keeps presenter mode. */
export function loadLessonStep(lesson: Lesson, index: number): void {
  const s = useAppStore.getState();
  const hash = lessonStepHash(lesson, index, { present: s.presenter, backend: s.backend === 'auto' ? undefined : s.backend });
  s.applyLink(decodeShareLink(hash), false);
}

const fmt = (x: number) => (!Number.isFinite(x) ? '—' : Math.abs(x) >= 10 ? x.toFixed(1) : Math.abs(x) >= 0.01 || x === 0 ? x.toFixed(3) : x.toPrecision(2));

function ClaimLine({ lesson, claim }: { lesson: Lesson; claim: Claim }) {
  const byRun = useLessonResults((s) => s.results[lesson.id]);
  const runs = runsOf([claim.a, claim.b]);
  // Measured once every run it compares has every lesson seed: the tests' check on the mean over them.
  const measured = runs.every((r) => allSeedsIn(lesson, byRun, r));
  const k = measured ? checkClaimOnSeeds(lesson, claim, bySeed(lesson, byRun)) : null;
  const state = k ? (k.ok ? 'ok' : 'fail') : 'pending';
  const mark = state === 'ok' ? '✓' : state === 'fail' ? '✗' : '…';
  const words = state === 'ok' ? 'holds on the mean over the seeds' : state === 'fail' ? 'does not hold on the mean over the seeds' : 'not measured yet';
  const seeds = lessonSeeds(lesson);
  const got = Math.min(...runs.map((r) => seeds.filter((seed) => byRun?.[r]?.[seed] !== undefined).length));
  const values = !k ? `measuring: ${got} of ${seeds.length} seeds` : typeof claim.b === 'number' ? `${fmt(k.a)} (${claim.op === '>' ? '≥' : '≤'} ${claim.b})` : `${fmt(k.a)} vs ${fmt(k.b)}`;
  return (
    <li
      className={`lesson-claim ${state}`}
      data-testid={`lesson-claim-${claim.id}`}
      data-state={state}
      data-a={k && Number.isFinite(k.a) ? k.a : ''}
      data-b={k && Number.isFinite(k.b) ? k.b : ''}
      title={`${describeClaim(lesson, claim)}, on the mean over seeds ${seeds.join(', ')}`}
    >
      <span className="claim-mark" aria-hidden="true">
        {mark}
      </span>
      <span>
        {claim.see}: <span className="num">{values}</span>
        <span className="visually-hidden"> ({words})</span>
      </span>
    </li>
  );
}

function PaperLinks({ lesson }: { lesson: Lesson }) {
  return (
    <p className="lesson-papers">
      Papers:{' '}
      {lesson.methods.map((id, i) => {
        const m = methodDef(id);
        return (
          <span key={id}>
            {i > 0 && ', '}
            <a href={`https://arxiv.org/abs/${m.paper}`} target="_blank" rel="noreferrer">
              {m.name} (arXiv:{m.paper})
            </a>
          </span>
        );
      })}
    </p>
  );
}

function CopyStepLink({ lesson, index }: { lesson: Lesson; index: number }) {
  const [status, setStatus] = useState<string | null>(null);
  const presenter = useAppStore((s) => s.presenter);
  // Built once per step and mode: the panel re-renders on every training iteration.
  const link = useMemo(() => shareLinkFor(lessonStepHash(lesson, index, { present: presenter })), [lesson, index, presenter]);
  return (
    <span className="lesson-copy">
      <button type="button" className="mini" onClick={() => void copyText(link).then((ok) => setStatus(ok ? 'Link copied.' : 'Copy it from the address bar.'))}>
        Copy link to step {index + 1}
      </button>
      <span role="status" className="hint">
        {status}
      </span>
    </span>
  );
}

/** The step's measurement as it goes: seeds done, the iteration of each seed training, a bar. */
function StepProgress({ lesson, step }: { lesson: Lesson; step: LessonStep }) {
  const byRun = useLessonResults((s) => s.results[lesson.id]);
  const training = useSeedPool((s) => s.training);
  const queued = useSeedPool((s) => s.queued);
  // The rows on screen count only once they are this config's (after Next they are the last step's until it is rebuilt).
  const onScreen = useAppStore((s) => {
    const run = runOnScreen(lesson, s);
    const iter = s.seriesConfig === s.config ? (s.series[s.series.length - 1]?.iter ?? 0) : 0;
    return run ? `${run.id}:${s.config.seed}:${iter}` : null;
  });
  const [runId, seed, iter] = onScreen?.split(':') ?? [];
  const runs = stepProgress(lesson, step, {
    byRun,
    training: training.filter((t) => t.lessonId === lesson.id),
    queued: queued.filter((q) => q.lessonId === lesson.id),
    onScreen: runId !== undefined ? { runId, seed: Number(seed), iter: Number(iter) } : null,
  });
  const seeds = lessonSeeds(lesson).length;
  const done = runs.every((r) => r.done === seeds);
  const fraction = progressFraction(runs);
  return (
    <div className="lesson-progress" role="status" data-testid="lesson-progress" data-done={done} data-fraction={fraction.toFixed(3)}>
      {done ? (
        <p className="hint lesson-progress-done">
          Measured on {seeds} seeds ({lessonSeeds(lesson).join(', ')}): the lines below are their mean.
        </p>
      ) : (
        <>
          <p className="lesson-progress-head">
            <strong>Training this step on {seeds} seeds</strong>
            <progress max={1} value={fraction} aria-label={`Step ${lesson.steps.indexOf(step) + 1}: ${Math.round(fraction * 100)}% of its seeds' iterations done`} />
          </p>
          <ul>
            {runs.map((r) => (
              <li key={r.runId} data-run={r.runId} data-done={r.done}>
                {progressText(r)}
              </li>
            ))}
          </ul>
        </>
      )}
    </div>
  );
}

function PoolErrors() {
  const errors = useSeedPool((s) => s.errors);
  return (
    <>
      {errors.map((e, i) => (
        <p key={i} className="error">
          {e}
        </p>
      ))}
    </>
  );
}

export function LessonPanel() {
  useLessonCapture();
  useEffect(() => watchSeedPool(), []);
  const ref = useAppStore((s) => s.lesson);
  const presenter = useAppStore((s) => s.presenter);
  const phase = useAppStore((s) => s.phase);
  const onScreen = useAppStore((s) => {
    const l = s.lesson ? lessonById(s.lesson.id) : undefined;
    return l ? (runOnScreen(l, s)?.id ?? null) : null;
  });
  const heading = useRef<HTMLHeadingElement>(null);
  const panel = useRef<HTMLElement>(null);
  const lessonId = ref?.id;
  const stepNo = ref?.step;
  const byRun = useLessonResults((s) => (lessonId ? s.results[lessonId] : undefined));
  useEffect(() => heading.current?.focus(), [lessonId]);
  // After Next or Previous the page shows the top of the panel: the navigation and the new step.
  useEffect(() => {
    const top = panel.current?.getBoundingClientRect().top;
    if (top !== undefined && top < 0) panel.current?.scrollIntoView({ block: 'start' });
  }, [stepNo]);
  const lesson = ref ? lessonById(ref.id) : undefined;
  if (!ref || !lesson) return null;
  const { closeLesson, setPresenter, openLesson } = useAppStore.getState();
  const current = ref.step - 1;
  const busy = phase !== 'idle';
  const go = (i: number) => {
    openLesson({ id: lesson.id, step: i + 1 });
    loadLessonStep(lesson, i);
  };
  const last = lesson.steps.length - 1;

  return (
    <section className="panel lesson-panel" aria-labelledby="lesson-title" data-testid="lesson-panel" data-lesson={lesson.id} data-step={ref.step} ref={panel}>
      <div className="panel-head">
        <h2 id="lesson-title" tabIndex={-1} ref={heading}>
          Lesson: {lesson.title}
        </h2>
        <span className="lesson-head-tools">
          <button type="button" className="mini-toggle" aria-pressed={presenter} onClick={() => setPresenter(!presenter, lesson.hide)}>
            Presenter mode
          </button>
          <button type="button" className="mini" onClick={closeLesson} aria-label={`Close the lesson ${lesson.title}`}>
            Close
          </button>
        </span>
      </div>
      <nav className="lesson-nav" aria-label="Lesson steps">
        <button type="button" disabled={current === 0 || busy} onClick={() => go(current - 1)}>
          Previous step
        </button>
        <span className="lesson-where" data-testid="lesson-where">
          Step {current + 1} of {lesson.steps.length}
        </span>
        <button type="button" className="primary" disabled={current >= last || busy} onClick={() => go(current + 1)}>
          Next step
        </button>
      </nav>
      <details className="lesson-about">
        <summary>The question, and the papers</summary>
        <p className="lesson-summary">{lesson.summary}</p>
        <PaperLinks lesson={lesson} />
      </details>
      <ol className="lesson-steps">
        {lesson.steps.map((step, i) => {
          const isCurrent = i === current;
          const loaded = onScreen === step.run;
          return (
            <li key={i} className={`lesson-step ${isCurrent ? 'current' : 'folded'}`} aria-current={isCurrent ? 'step' : undefined} data-testid={`lesson-step-${i + 1}`}>
              {isCurrent ? (
                <>
                  <p className="lesson-step-text">{step.text}</p>
                  {step.watch && step.watch.length > 0 && (
                    <div className="lesson-watch" data-testid="lesson-watch">
                      {step.watch.map((id) => (
                        <LiveChart key={id} id={id} testId={`lesson-chart-${id}`} />
                      ))}
                    </div>
                  )}
                  <div className={`buttons lesson-step-buttons ${loaded ? 'loaded' : ''}`}>
                    <button type="button" className={!loaded ? 'primary' : 'mini'} disabled={busy} onClick={() => go(i)}>
                      {loaded ? `Run step ${i + 1} again` : `Load step ${i + 1}`}
                    </button>
                    <CopyStepLink lesson={lesson} index={i} />
                  </div>
                  <StepProgress lesson={lesson} step={step} />
                  <p className="lesson-see">
                    <strong>What you should see:</strong> {step.see}
                  </p>
                  <ul className="lesson-claims" aria-label={`Measured for step ${i + 1}`}>
                    {step.claims.map((id) => (
                      <ClaimLine key={id} lesson={lesson} claim={lesson.claims.find((c) => c.id === id)!} />
                    ))}
                  </ul>
                  <SeedsCharts lesson={lesson} step={step} byRun={byRun} />
                  {i === last && (
                    <p className="lesson-takeaway">
                      <strong>Take-away:</strong> {lesson.takeaway}
                    </p>
                  )}
                </>
              ) : (
                <button type="button" className="lesson-step-line" disabled={busy} onClick={() => go(i)} aria-label={`${loaded ? 'Run' : 'Load'} step ${i + 1}: ${lessonRun(lesson, step.run).label}`} title={step.text}>
                  {lessonRun(lesson, step.run).label}
                </button>
              )}
            </li>
          );
        })}
      </ol>
      <PoolErrors />
      <p className="hint lesson-how">
        Each step loads its run from a share link and trains it to the iteration its lines measure on screen; beside it the
        lesson's other seeds (seeds {lessonSeeds(lesson).join(', ')} in all) train on the CPU backend, one worker per core. A line's
        numbers are the mean over those seeds and ✓ means the line held on that mean, as the tests check it; the charts under the
        step show the mean over the seeds with a band from the lowest to the highest seed.
      </p>
    </section>
  );
}
