/**
 * The lesson side panel: the lesson's question, links to the papers, numbered steps (each loads its
 * run as a share link and runs it to the iteration the claims measure), a "what you should see"
 * line per step with the numbers measured here, presenter mode, and a link to the step.
 */
import { useEffect, useMemo, useRef, useState } from 'react';
import { checkClaimOnSeeds, describeClaim, lessonById, lessonSeeds, type Claim, type Lesson } from '../../workers/content/lessons';
import { methodDef } from '../../workers/core/methods';
import { decodeShareLink } from '../../workers/content/shareLink';
import { copyText } from '../exporters';
import { useAppStore } from '../store';
import { shareLinkFor } from '../urlSync';
import { allSeedsIn, bySeed, runOnScreen, runsOf, useLessonCapture, useLessonResults } from './lessonResults';
import { SeedsCharts } from './SeedsChart';
import { useSeedPool, watchSeedPool } from './seedPool';
import { lessonStepHash } from './links';
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
  const waiting = runs.every((r) => byRun?.[r] !== undefined) ? `measuring: ${got} of ${seeds.length} seeds` : 'load the steps it compares';
  const values = !k ? waiting : typeof claim.b === 'number' ? `${fmt(k.a)} (${claim.op === '>' ? '≥' : '≤'} ${claim.b})` : `${fmt(k.a)} vs ${fmt(k.b)}`;
  return (
    <li className={`lesson-claim ${state}`} data-testid={`lesson-claim-${claim.id}`} data-state={state} data-a={k && Number.isFinite(k.a) ? k.a : ''} title={`${describeClaim(lesson, claim)}, on the mean over seeds ${seeds.join(', ')}`}>
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

/** Which seeds are training now, and any that failed. */
function PoolStatus({ lesson }: { lesson: Lesson }) {
  const training = useSeedPool((s) => s.training).filter((k) => k.startsWith(`${lesson.id}/`));
  const errors = useSeedPool((s) => s.errors);
  return (
    <>
      <p className="hint lesson-pool" role="status" data-testid="lesson-pool" data-training={training.length}>
        {training.length > 0 ? `Training seeds ${training.map((k) => k.split('/')[2]).join(', ')} beside the run on screen…` : ''}
      </p>
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
  const lessonId = ref?.id;
  const byRun = useLessonResults((s) => (lessonId ? s.results[lessonId] : undefined));
  useEffect(() => heading.current?.focus(), [lessonId]);
  const lesson = ref ? lessonById(ref.id) : undefined;
  if (!ref || !lesson) return null;
  const { closeLesson, setPresenter, openLesson } = useAppStore.getState();
  const current = ref.step - 1;
  const busy = phase !== 'idle';
  const go = (i: number) => {
    openLesson({ id: lesson.id, step: i + 1 });
    loadLessonStep(lesson, i);
  };

  return (
    <section className="panel lesson-panel" aria-labelledby="lesson-title" data-testid="lesson-panel" data-lesson={lesson.id} data-step={ref.step}>
      <div className="panel-head">
        <h2 id="lesson-title" tabIndex={-1} ref={heading}>
          Lesson: {lesson.title}
        </h2>
        <button type="button" className="mini" onClick={closeLesson} aria-label={`Close the lesson ${lesson.title}`}>
          Close
        </button>
      </div>
      <p className="lesson-summary">{lesson.summary}</p>
      <PaperLinks lesson={lesson} />
      <div className="lesson-tools">
        <button type="button" className="mini-toggle" aria-pressed={presenter} onClick={() => setPresenter(!presenter, lesson.hide)}>
          Presenter mode
        </button>
        <CopyStepLink lesson={lesson} index={current} />
      </div>
      <ol className="lesson-steps">
        {lesson.steps.map((step, i) => {
          const isCurrent = i === current;
          const loaded = onScreen === step.run;
          return (
            <li key={i} className={`lesson-step ${isCurrent ? 'current' : ''}`} aria-current={isCurrent ? 'step' : undefined} data-testid={`lesson-step-${i + 1}`}>
              <p className="lesson-step-text">{step.text}</p>
              <div className="buttons">
                <button type="button" className={isCurrent && !loaded ? 'primary' : ''} disabled={busy} onClick={() => go(i)}>
                  {loaded ? `Run step ${i + 1} again` : `Load step ${i + 1}`}
                </button>
                {!isCurrent && (
                  <button type="button" className="link-button" onClick={() => openLesson({ id: lesson.id, step: i + 1 })}>
                    Read step {i + 1}
                  </button>
                )}
              </div>
              <p className="lesson-see">
                <strong>What you should see:</strong> {step.see}
              </p>
              {(isCurrent || !presenter) && (
                <ul className="lesson-claims" aria-label={`Measured for step ${i + 1}`}>
                  {step.claims.map((id) => (
                    <ClaimLine key={id} lesson={lesson} claim={lesson.claims.find((c) => c.id === id)!} />
                  ))}
                </ul>
              )}
              {isCurrent && <SeedsCharts lesson={lesson} step={step} byRun={byRun} />}
            </li>
          );
        })}
      </ol>
      <div className="buttons lesson-nav">
        <button type="button" disabled={current === 0 || busy} onClick={() => go(current - 1)}>
          Previous step
        </button>
        <button type="button" disabled={current >= lesson.steps.length - 1 || busy} onClick={() => go(current + 1)}>
          Next step
        </button>
      </div>
      {current === lesson.steps.length - 1 && (
        <p className="lesson-takeaway">
          <strong>Take-away:</strong> {lesson.takeaway}
        </p>
      )}
      <PoolStatus lesson={lesson} />
      <p className="hint">
        Each step loads its run from a share link and trains it to the iteration its lines measure on screen; beside it the
        lesson's other seeds (seeds {lessonSeeds(lesson).join(', ')} in all) train on the CPU backend, one worker per core. A line's numbers are the mean over those seeds and ✓ means the line held on that mean, as the tests check it; the
        charts under the step show the mean over the seeds with a band from the lowest to the highest seed.
      </p>
    </section>
  );
}
