/**
 * The lesson a teacher runs, in the built page on the CPU backend: a step's lines show "…" until its
 * own runs are measured on every seed and never a number of another step (forward, back, and fast
 * Next/Previous/Next), their final numbers are those `npm run -s lessons:check` computes; after Next
 * or Previous the step's text, lines and charts are on screen without scrolling at 1366x900 and in
 * presenter mode at 1280x720, which is one screen; the step says how far its seeds are. A Compare
 * link and an Arena link bring their runs back; the default run at 1,000 iterations raises no alarm
 * once it has converged; metrics have names in words and no text is cut; Escape closes Share; the
 * trajectory header gives per-turn advantages; heatmaps and Compare charts export PNG and SVG.
 * Screenshots: test-results/screens/teacher-*.png.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { expect, test, type Download, type Page } from '@playwright/test';
import { lessonStepHash } from '../../app/lessons/links';
import { stepCharts } from '../../app/lessons/charts';
import { checkClaimOnSeeds, lessonById, lessonRun, lessonSeeds, type Lesson, type RunResult, type SeedResults } from '../../workers/content/lessons';
import { SCALAR_METRICS } from '../../workers/core/metrics';
import { collectPageErrors, iterShown, removeWebGpu, SCREENS_DIR, waitIdle } from './util';
import { cliArgv } from '../helpers/cliNode';

const collapse = lessonById('collapse')!;

test.beforeEach(async ({ page, context }) => {
  await removeWebGpu(page, context);
});

async function ready(page: Page, link: string): Promise<void> {
  await page.goto(link);
  await expect(page.getByTestId('backend-status')).toHaveText(/^CPU/, { timeout: 60_000 });
}

/** Waits until every line of step `n` (1-based) is measured; returns each line's id and numbers. */
async function measured(page: Page, lesson: Lesson, n: number): Promise<Array<{ id: string; state: string; a: number; b: number }>> {
  const step = page.getByTestId(`lesson-step-${n}`);
  await expect(page.getByTestId('lesson-panel')).toHaveAttribute('data-step', String(n));
  for (const id of lesson.steps[n - 1]!.claims) await expect(step.getByTestId(`lesson-claim-${id}`)).not.toHaveAttribute('data-state', 'pending', { timeout: 240_000 });
  return step.locator('[data-testid^="lesson-claim-"]').evaluateAll((ls) =>
    ls.map((l) => ({ id: l.getAttribute('data-testid')!.slice('lesson-claim-'.length), state: l.getAttribute('data-state')!, a: Number(l.getAttribute('data-a')), b: Number(l.getAttribute('data-b')) })),
  );
}

/**
 * Records, in the page, every state and number each lesson line and each progress line shows, as
 * it changes: the lines' whole history, not only where they end.
 */
async function recordLines(page: Page): Promise<void> {
  await page.evaluate(() => {
    const w = window as unknown as { __lines: Array<Record<string, string | null>>; __progress: Array<{ run: string; text: string; step: string | null }> };
    w.__lines = [];
    w.__progress = [];
    const snap = () => {
      const step = document.querySelector('[data-testid="lesson-panel"]')?.getAttribute('data-step') ?? null;
      for (const li of document.querySelectorAll('[data-testid^="lesson-claim-"]')) {
        const rec = { id: li.getAttribute('data-testid'), state: li.getAttribute('data-state'), a: li.getAttribute('data-a'), b: li.getAttribute('data-b'), step };
        const last = [...w.__lines].reverse().find((x) => x.id === rec.id);
        if (!last || last.state !== rec.state || last.a !== rec.a || last.b !== rec.b) w.__lines.push(rec);
      }
      for (const li of document.querySelectorAll('[data-testid="lesson-progress"] li[data-run]')) {
        const rec = { run: li.getAttribute('data-run')!, text: li.textContent ?? '', step };
        const last = [...w.__progress].reverse().find((x) => x.run === rec.run);
        if (!last || last.text !== rec.text || last.step !== rec.step) w.__progress.push(rec);
      }
    };
    new MutationObserver(snap).observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true, attributeFilter: ['data-state', 'data-a', 'data-b', 'data-step'] });
    snap();
  });
}

/** Whether the element is inside the window and not scrolled away inside a scrolling column. */
async function onScreen(page: Page, selector: string): Promise<boolean> {
  return page.locator(selector).first().evaluate((el) => {
    const r = el.getBoundingClientRect();
    if (r.height === 0 || r.top < 0 || r.bottom > innerHeight + 1 || r.left < 0 || r.right > innerWidth + 1) return false;
    for (let p = el.parentElement; p; p = p.parentElement) {
      const cs = getComputedStyle(p);
      if (cs.overflowY === 'visible') continue;
      const b = p.getBoundingClientRect();
      if (r.top < b.top - 1 || r.bottom > b.bottom + 1) return false;
    }
    return true;
  });
}

/** The step's text, its lines and the charts it names (or presenter mode shows for it) are on screen. */
async function stepOnScreen(page: Page, lesson: Lesson, n: number, presenter: boolean): Promise<void> {
  const step = lesson.steps[n - 1]!;
  const at = `[data-testid="lesson-step-${n}"]`;
  expect(await page.evaluate(() => scrollY), 'the page is at its top').toBe(0);
  expect(await onScreen(page, `${at} .lesson-step-text`), `step ${n}: its text`).toBe(true);
  for (const id of step.claims) expect(await onScreen(page, `${at} [data-testid="lesson-claim-${id}"]`), `step ${n}: line ${id}`).toBe(true);
  const charts = presenter ? stepCharts(lesson, step).map((c) => `[data-testid="chart-${c}"]`) : (step.watch ?? []).map((c) => `[data-testid="lesson-chart-${c}"]`);
  for (const c of charts) expect(await onScreen(page, c), `step ${n}: chart ${c}`).toBe(true);
}

/** Every run of `runs` on every lesson seed, trained by `npm run -s lessons:check`'s own child job, two at a time. */
async function lessonsCheck(lesson: Lesson, runs: string[]): Promise<SeedResults[]> {
  const jobs = runs.flatMap((run) => lessonSeeds(lesson).map((seed) => ({ lesson: lesson.id, run, seed })));
  const results: Array<{ run: string; seed: number; result: RunResult }> = [];
  const one = (job: (typeof jobs)[number]) =>
    new Promise<void>((resolve, reject) => {
      // The CLI's own child job, from a bundle of it (tests/helpers/cliNode.ts), without npm's start-up in front.
      const child = spawn(process.execPath, cliArgv('cli/lessonCheck.ts', ['--job', JSON.stringify(job)]), { stdio: ['ignore', 'pipe', 'inherit'] });
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.on('exit', (code) => {
        if (code !== 0) return reject(new Error(`lessons:check --job ${JSON.stringify(job)} exited ${code}`));
        const r = JSON.parse(out.trim().split('\n').pop()!) as { run: string; seed: number; result: RunResult };
        results.push(r);
        resolve();
      });
    });
  const queue = [...jobs];
  await Promise.all([0, 1].map(async () => {
    for (let job = queue.shift(); job; job = queue.shift()) await one(job);
  }));
  return lessonSeeds(lesson).map((seed) => Object.fromEntries(results.filter((r) => r.seed === seed).map((r) => [r.run, r.result])));
}

test('the collapse lesson forward, back and fast: only its own runs’ numbers, those of lessons:check, the step on one screen', async ({ page }) => {
  test.setTimeout(1_200_000);
  const errors = collectPageErrors(page);
  await ready(page, `/${lessonStepHash(collapse, 0)}`);
  await recordLines(page);
  const panel = page.getByTestId('lesson-panel');
  const next = panel.getByRole('button', { name: 'Next step' });
  const previous = panel.getByRole('button', { name: 'Previous step' });
  const final: Record<string, { a: number; b: number }> = {};
  const keep = (lines: Awaited<ReturnType<typeof measured>>) => {
    for (const l of lines) {
      expect(l.state, l.id).toBe('ok');
      final[l.id] = { a: l.a, b: l.b };
    }
  };

  // Step 1: the text, the two charts it names and its lines, with its seeds' progress while they train.
  await expect(page.getByTestId('lesson-progress')).toBeVisible();
  keep(await measured(page, collapse, 1));
  await waitIdle(page);
  await stepOnScreen(page, collapse, 1, false);
  await page.screenshot({ path: `${SCREENS_DIR}teacher-lesson-step1.png` });

  // Next, then Previous and Next again as soon as they may be pressed (the seeds still train).
  await next.click();
  await expect(panel).toHaveAttribute('data-step', '2');
  await expect(panel.getByTestId('lesson-progress')).toContainText('Training this step on 4 seeds');
  await page.screenshot({ path: `${SCREENS_DIR}teacher-lesson-step2-training.png` });
  await expect(previous).toBeEnabled({ timeout: 120_000 });
  await previous.click();
  await expect(panel).toHaveAttribute('data-step', '1');
  await expect(next).toBeEnabled({ timeout: 120_000 });
  await next.click();
  keep(await measured(page, collapse, 2));
  await waitIdle(page);
  await stepOnScreen(page, collapse, 2, false);
  await page.screenshot({ path: `${SCREENS_DIR}teacher-lesson-step2.png` });

  await next.click();
  keep(await measured(page, collapse, 3));
  await waitIdle(page);
  await stepOnScreen(page, collapse, 3, false);
  // Back: step 2's lines as they were, on screen again.
  await previous.click();
  keep(await measured(page, collapse, 2));
  await waitIdle(page);
  await stepOnScreen(page, collapse, 2, false);
  await page.screenshot({ path: `${SCREENS_DIR}teacher-lesson-back-step2.png` });
  // Back to step 1: its charts beside its text.
  await previous.click();
  keep(await measured(page, collapse, 1));
  await waitIdle(page);
  await stepOnScreen(page, collapse, 1, false);
  await page.screenshot({ path: `${SCREENS_DIR}teacher-lesson-back-step1.png` });

  // The lines' whole history: never a ✗, never a number but the one they end on.
  const lines = await page.evaluate(() => (window as unknown as { __lines: Array<{ id: string; state: string; a: string; b: string }> }).__lines);
  expect(lines.filter((l) => l.state === 'fail')).toEqual([]);
  for (const l of lines.filter((x) => x.state !== 'pending')) {
    const id = l.id.slice('lesson-claim-'.length);
    expect({ id, a: Number(l.a), b: Number(l.b) }, 'a line showed a number it does not end on').toEqual({ id, ...final[id]! });
  }
  // The progress of a step's run on screen starts at its own iteration 0, not at the last step's 30.
  const progress = await page.evaluate(() => (window as unknown as { __progress: Array<{ run: string; text: string }> }).__progress);
  const firstIgpo = progress.find((p) => p.run === 'igpo');
  expect(firstIgpo?.text).toMatch(/seed 1 on screen, iteration 0 of 30/);

  // The numbers are those of lessons:check on the same runs and seeds.
  const bySeed = await lessonsCheck(collapse, ['grpo', 'igpo', 'edge']);
  for (const n of [1, 2, 3]) {
    for (const id of collapse.steps[n - 1]!.claims) {
      const k = checkClaimOnSeeds(collapse, collapse.claims.find((c) => c.id === id)!, bySeed);
      expect({ id, ok: k.ok, a: k.a, ...(Number.isFinite(k.b) ? { b: k.b } : {}) }).toEqual({ id, ok: true, a: final[id]!.a, ...(Number.isFinite(k.b) ? { b: final[id]!.b } : {}) });
    }
  }
  expect(errors).toEqual([]);
});

test('presenter mode at 1280x720 is one screen; after Next and Previous the step, its lines and its charts are on it', async ({ page }) => {
  test.setTimeout(600_000);
  await page.setViewportSize({ width: 1280, height: 720 });
  const errors = collectPageErrors(page);
  await ready(page, `/${lessonStepHash(collapse, 0, { present: true })}`);
  const panel = page.getByTestId('lesson-panel');
  const height = () => page.evaluate(() => document.documentElement.scrollHeight);
  await measured(page, collapse, 1);
  await waitIdle(page);
  expect(await height()).toBeLessThanOrEqual(720);
  await stepOnScreen(page, collapse, 1, true);
  await page.screenshot({ path: `${SCREENS_DIR}teacher-presenter-step1.png` });
  await panel.getByRole('button', { name: 'Next step' }).click();
  await measured(page, collapse, 2);
  await waitIdle(page);
  expect(await height()).toBeLessThanOrEqual(720);
  await stepOnScreen(page, collapse, 2, true);
  await page.screenshot({ path: `${SCREENS_DIR}teacher-presenter-step2.png` });
  await panel.getByRole('button', { name: 'Previous step' }).click();
  await measured(page, collapse, 1);
  await waitIdle(page);
  expect(await height()).toBeLessThanOrEqual(720);
  await stepOnScreen(page, collapse, 1, true);
  await page.screenshot({ path: `${SCREENS_DIR}teacher-presenter-back-step1.png` });
  expect(errors).toEqual([]);
});

/** A download's bytes, after `click`. */
async function downloaded(page: Page, click: () => Promise<void>): Promise<{ name: string; bytes: Buffer }> {
  const [d] = (await Promise.all([page.waitForEvent('download'), click()])) as [Download, void];
  return { name: d.suggestedFilename(), bytes: readFileSync((await d.path())!) };
}

async function exportsPngAndSvg(page: Page, figure: string, title: string): Promise<void> {
  const chart = page.getByTestId(figure);
  const png = await downloaded(page, () => chart.getByRole('button', { name: `Download the ${title} chart as PNG` }).click());
  expect(png.name).toMatch(/\.png$/);
  expect(png.bytes.subarray(1, 4).toString()).toBe('PNG');
  const svg = await downloaded(page, () => chart.getByRole('button', { name: `Download the ${title} chart as SVG` }).click());
  expect(svg.name).toMatch(/\.svg$/);
  expect(svg.bytes.toString()).toMatch(/^<svg[^>]*xmlns="http:\/\/www.w3.org\/2000\/svg"/);
}

test('a Compare link runs both runs to its iteration and draws them; its charts export PNG and SVG', async ({ page }) => {
  test.setTimeout(300_000);
  const errors = collectPageErrors(page);
  await page.goto('/#v=1&compare=|methods:grpo,edge|step:30');
  await expect(page.getByRole('tab', { name: 'Compare' })).toHaveAttribute('aria-selected', 'true');
  const view = page.getByRole('tabpanel', { name: 'Compare' });
  for (const side of ['a', 'b']) {
    await expect(view.getByTestId(`compare-status-${side}`)).toHaveAttribute('data-iter', '30', { timeout: 240_000 });
    await expect(view.getByTestId(`compare-status-${side}`)).toHaveAttribute('data-phase', 'idle');
  }
  const reward = view.getByTestId('compare-reward_mean');
  await expect(reward).toHaveAttribute('data-points-a', '30');
  await expect(reward).toHaveAttribute('data-points-b', '30');
  // Method names, not ids.
  await expect(reward.locator('.recharts-legend-item-text')).toHaveText(['A: GRPO', 'B: GRPO + EDGE-GRPO']);
  await expect(view.getByTestId('compare-diff')).toContainText('methods GRPO → GRPO + EDGE-GRPO');
  // The address keeps the iteration, so the link copied now brings the same picture back.
  await expect.poll(() => decodeURIComponent(new URL(page.url()).hash)).toMatch(/compare=\|methods:grpo,edge\|step:30$/);
  await view.screenshot({ path: `${SCREENS_DIR}teacher-compare-restored.png` });
  await exportsPngAndSvg(page, 'compare-reward_mean', 'Mean reward');
  expect(errors).toEqual([]);
});

const ARENA = 'task=search;iters=15;seeds=1-2;clip=token,cispo;filter=none;advantage=trajectory;aggregation=seq-mean-token-mean;set.batch=4;set.group=4';

test('an Arena link runs the seeds it had done; cards say not run yet, or how many seeds are done', async ({ page }) => {
  test.setTimeout(300_000);
  const errors = collectPageErrors(page);
  await page.goto(`/#v=1&arena=${ARENA}`);
  const view = page.getByRole('tabpanel', { name: 'Arena' });
  const cards = view.getByTestId('arena-cell');
  await expect(cards).toHaveCount(2);
  for (const card of await cards.all()) {
    await expect(card.getByTestId('arena-seeds')).toHaveText('not run yet');
    await expect(card.getByTestId('arena-crash')).toHaveText('not run yet');
  }
  await page.goto(`/#v=1&arena=${ARENA}|done:1`);
  await page.reload();
  await expect(page.getByRole('tab', { name: 'Arena' })).toHaveAttribute('aria-selected', 'true');
  for (const card of await cards.all()) {
    await expect(card.getByTestId('arena-seeds')).toHaveText('1 of 2 seeds done', { timeout: 240_000 });
    // A crash is said with its reason on the card; no crash only of the seed that ran.
    const crash = (await card.getByTestId('arena-crash').textContent()) ?? '';
    if (crash.startsWith('✖')) await expect(card.getByTestId('arena-why')).toHaveText(/^Why: .+/);
    else expect(crash).toBe('no crash on the 1 seed done');
  }
  await expect(view.getByRole('button', { name: 'Run 2 × 2 runs' })).toBeVisible();
  await expect.poll(() => decodeURIComponent(new URL(page.url()).hash)).toContain('|done:1');
  await view.screenshot({ path: `${SCREENS_DIR}teacher-arena-restored.png` });
  expect(errors).toEqual([]);
});

test('the default run at 1,000 iterations: no alarm once it has converged, one marker per episode, a key for them', async ({ page }) => {
  test.setTimeout(900_000);
  const errors = collectPageErrors(page);
  await ready(page, '/#v=1&step=1000');
  await expect(page.getByTestId('iter')).toHaveText('1000', { timeout: 840_000 });
  await waitIdle(page);
  const alarms = page.getByTestId('alarms');
  const convergedAt = Number(await alarms.getAttribute('data-converged-at'));
  expect(convergedAt).toBeGreaterThan(0);
  await expect(alarms.getByTestId('alarms-converged')).toContainText(`converged at iteration ${convergedAt}`);
  const at = await alarms.locator('li.alarm').evaluateAll((ls) => ls.map((l) => Number(/at iteration (\d+)/.exec(l.textContent ?? '')?.[1])));
  expect(at.filter((i) => i > convergedAt), 'alarms after the run converged').toEqual([]);
  // Each marker on the reward chart is one episode; the key names every kind shown.
  const reward = page.getByTestId('chart-reward');
  expect(Number(await reward.getAttribute('data-alarms'))).toBe(at.length);
  if (at.length > 0) await expect(page.getByTestId('marker-key')).toContainText('(alarm)');
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: `${SCREENS_DIR}teacher-default-1000.png` });
  await alarms.screenshot({ path: `${SCREENS_DIR}teacher-default-1000-alarms.png` });
  expect(errors).toEqual([]);
});

/** Text the page cuts short: an ellipsis or a line clamp that hides some, a select narrower than its choice. */
async function cutText(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const out: string[] = [];
    const ctx = document.createElement('canvas').getContext('2d')!;
    for (const el of document.querySelectorAll<HTMLElement>('body *')) {
      const r = el.getBoundingClientRect();
      if (r.width === 0 || r.height === 0 || r.bottom < 0 || r.top > innerHeight || el.closest('.visually-hidden')) continue;
      const cs = getComputedStyle(el);
      if (cs.visibility === 'hidden') continue;
      const name = `${el.tagName.toLowerCase()}.${el.className}: ${(el.textContent ?? '').trim().slice(0, 60)}`;
      if (el instanceof HTMLSelectElement) {
        ctx.font = `${cs.fontWeight} ${cs.fontSize} ${cs.fontFamily}`;
        const text = el.selectedOptions[0]?.text ?? '';
        // Room for the text: the box less its padding and the arrow (about 20 px).
        const room = el.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight) - 20;
        if (ctx.measureText(text).width > room) out.push(`select ${el.id || el.name}: "${text}"`);
      } else if (cs.textOverflow === 'ellipsis' && el.scrollWidth > el.clientWidth + 1) out.push(name);
      else if (cs.webkitLineClamp !== 'none' && cs.webkitLineClamp !== '' && el.scrollHeight > el.clientHeight + 1) out.push(name);
    }
    return out;
  });
}

test('words: metrics by name, IS and ESS spelled out, nothing cut at 1366x900 or 1280x720; Share closes on Escape', async ({ page }) => {
  test.setTimeout(300_000);
  const errors = collectPageErrors(page);
  await ready(page, '/#v=1&batch=4&group=4&step=3');
  await expect(page.getByTestId('iter')).toHaveText('3', { timeout: 60_000 });
  await waitIdle(page);
  const ids = new Set<string>(SCALAR_METRICS);
  // Legends and titles in words (the ids stay in the tables and the tooltips).
  await page.getByTestId('more-charts').locator('summary').click();
  const legends = await page.locator('.charts .recharts-legend-item-text').allTextContents();
  expect(legends.length).toBeGreaterThan(5);
  expect(legends.filter((t) => ids.has(t.trim()))).toEqual([]);
  const titles = await page.locator('.charts figcaption > span:first-child').allTextContents();
  expect(titles.filter((t) => ids.has(t.trim()))).toEqual([]);
  await expect(page.getByTestId('on-policy-hint')).toContainText('Importance-sampling (IS) ratios');
  await expect(page.getByTestId('chart-ess')).toContainText('Effective sample size (ESS)');
  await page.getByTestId('more-charts').locator('summary').click();

  // Nothing cut: the default screen, the Lessons menu, a lesson's panel, at both sizes.
  expect(await cutText(page), 'default screen, 1366x900').toEqual([]);
  await page.getByText('Lessons', { exact: true }).click();
  expect(await cutText(page), 'Lessons menu').toEqual([]);
  await page.keyboard.press('Escape');
  await page.locator('summary', { hasText: 'Export' }).click();
  expect(await cutText(page), 'Export menu').toEqual([]);
  await page.keyboard.press('Escape');
  await page.setViewportSize({ width: 1280, height: 720 });
  expect(await cutText(page), 'default screen, 1280x720').toEqual([]);
  await page.screenshot({ path: `${SCREENS_DIR}teacher-words-1280.png` });
  await page.setViewportSize({ width: 1366, height: 900 });

  // Escape closes the Share popover, as it closes the menus, and gives the focus back.
  await page.getByRole('button', { name: 'Share' }).click();
  const dialog = page.getByRole('dialog', { name: 'Share link' });
  await expect(dialog).toBeVisible();
  await page.keyboard.press('Escape');
  await expect(dialog).toHaveCount(0);
  await expect(page.getByRole('button', { name: 'Share' })).toBeFocused();

  // Heatmaps export PNG and SVG (the SVG draws the cells).
  await exportsPngAndSvg(page, 'chart-adv-heatmap', 'Advantage distribution over iterations');
  expect(errors).toEqual([]);
});

test('the lesson panel at 1280x720 and the trajectory header: per-turn advantages named as per turn', async ({ page }) => {
  test.setTimeout(300_000);
  const errors = collectPageErrors(page);
  const turns = lessonById('turns')!;
  await page.setViewportSize({ width: 1280, height: 720 });
  await ready(page, `/${lessonStepHash(turns, 1)}`);
  await measured(page, turns, 2);
  await waitIdle(page);
  expect(await cutText(page), 'lesson panel, 1280x720').toEqual([]);
  expect(await iterShown(page)).toBe(lessonRun(turns, 'igpo').iters);
  // IGPO gives a multi-turn trajectory's turns different advantages: the header lists them per turn.
  const cells = page.getByTestId('group-view').locator('button.cell');
  await expect(cells.first()).toBeVisible({ timeout: 30_000 });
  let found = false;
  for (let i = 0; i < (await cells.count()) && !found; i++) {
    await page.getByTestId('group-view').locator('button.cell').nth(i).click();
    const view = page.getByTestId('trajectory-view');
    const head = (await view.getByTestId('traj-advantage').textContent()) ?? '';
    if (head.startsWith('advantage per turn: ')) {
      found = true;
      const listed = head.slice('advantage per turn: '.length).split(', ');
      expect(listed.length).toBeGreaterThan(1);
      expect(new Set(listed).size).toBeGreaterThan(1);
      await view.screenshot({ path: `${SCREENS_DIR}teacher-trajectory-per-turn.png` });
    }
    await view.getByRole('button', { name: 'Close the trajectory view' }).click();
  }
  expect(found, 'a trajectory with per-turn advantages').toBe(true);
  expect(errors).toEqual([]);
});
