/**
 * Lessons, driven as a teacher would on the CPU backend: open each lesson at its last step by its
 * step link (which runs to the iteration its lines measure), and check that every "what you should
 * see" line is measured on the page, on the mean over the lesson's seeds
 * (the seed on screen and the others trained beside it), and holds, as in the unit test's headless
 * runs; each step shows its metrics as the mean over the seeds with a min-max band. Presenter mode hides the panels the lesson does not need,
 * keeps the charts of the step on screen and puts the lesson in large type. Screenshots: test-results/screens/lesson-<id>.png (the page),
 * lesson-<id>-panel.png (the whole panel), lesson-<id>-presenter.png (dark theme),
 * lesson-step-seeds.png (one step with its seed bands) and lesson-seeds-bands-svg.png /
 * lesson-seeds-bands-recharts.png (one step's charts on each chart engine).
 */
import { expect, test, type Page } from '@playwright/test';
import { stepCharts } from '../../app/lessons/charts';
import { lessonStepHash } from '../../app/lessons/links';
import { isDumpStat, lessonRun, LESSONS, lessonSeeds, type Lesson } from '../../workers/content/lessons';
import { collectPageErrors, iterShown, removeWebGpu, SCREENS_DIR, waitIdle } from './util';

/** A run's min-max band on either chart engine: the SVG chart's path, or Recharts' ranged Area's path. */
const BAND = 'path.xy-band, .xy-band path';

test.beforeEach(async ({ page, context }) => {
  await removeWebGpu(page, context);
});

async function ready(page: Page, link = '/#v=1&batch=4&group=4'): Promise<void> {
  await page.goto(link);
  await expect(page.getByTestId('backend-status')).toHaveText(/^CPU/, { timeout: 60_000 });
  await waitIdle(page);
}

/** Waits until step `i` (0-based) has run and every line of it is measured; returns the states. */
async function stepMeasured(page: Page, lesson: Lesson, i: number): Promise<void> {
  const step = lesson.steps[i]!;
  const run = lessonRun(lesson, step.run);
  const panel = page.getByTestId('lesson-panel');
  await expect(panel).toHaveAttribute('data-step', String(i + 1));
  for (const id of step.claims) {
    const line = panel.getByTestId(`lesson-claim-${id}`);
    await expect(line, `${lesson.id} step ${i + 1}: ${id}`).not.toHaveAttribute('data-state', 'pending', { timeout: 150_000 });
    await expect(line, `${lesson.id} step ${i + 1}: ${id} holds`).toHaveAttribute('data-state', 'ok');
  }
  // The step's charts: each metric its lines read, the mean over the lesson's seeds with a min-max band per run.
  const metrics = new Set(step.claims.flatMap((id) => {
    const c = lesson.claims.find((x) => x.id === id)!;
    return [c.a, c.b].flatMap((x) => (typeof x === 'object' && !isDumpStat(x) ? [x.metric] : []));
  }));
  const charts = panel.getByTestId(`lesson-step-${i + 1}`).locator('[data-testid^="lesson-seeds-chart-"]');
  await expect(charts).toHaveCount(metrics.size);
  for (const chart of await charts.all()) {
    await expect(chart).toHaveAttribute('data-seeds', String(lessonSeeds(lesson).length));
    const runs = (await chart.getAttribute('data-runs'))!.split(',');
    expect(runs).toContain(step.run);
    // One band per run (of no height where every seed has the same value: it is not "visible" then).
    await expect(chart.locator(BAND)).toHaveCount(runs.length);
  }
  await waitIdle(page);
  expect(await iterShown(page)).toBe(run.iters);
  await expect(panel.getByTestId(`lesson-step-${i + 1}`)).toHaveAttribute('aria-current', 'step');
  await expect(panel.getByRole('button', { name: `Run step ${i + 1} again` })).toBeVisible();
}

for (const lesson of LESSONS) {
  test(`lesson ${lesson.id}: its last step runs and every line holds; presenter mode`, async ({ page }) => {
    // Every step trains its run on each lesson seed (two runs per core on a 2-core machine).
    test.setTimeout(900_000);
    const errors = collectPageErrors(page);
    // The last step only: every step's claims are checked headless on the lesson seeds
    // (tests/unit/lessonClaims*.lesson.test.ts), collapse is walked step by step, forward and back, by
    // tests/e2e/teacher.spec.ts, and the menu is driven by the step-link test below.
    const last = lesson.steps.length - 1;
    await ready(page, `/${lessonStepHash(lesson, last)}`);
    const panel = page.getByTestId('lesson-panel');
    await expect(panel.getByRole('listitem').filter({ has: page.getByRole('button', { name: /^(Load|Run) step/ }) })).toHaveCount(lesson.steps.length);
    // One paper link per method of the lesson, with the question, one click away.
    await panel.locator('summary', { hasText: 'The question, and the papers' }).click();
    await expect(panel.getByRole('link', { name: /\(arXiv:\d{4}\.\d{4,5}\)$/ })).toHaveCount(lesson.methods.length);

    await stepMeasured(page, lesson, last);
    // The address is the last step's link.
    expect(new URL(page.url()).hash).toContain(`lesson=${lesson.id}:${lesson.steps.length}`);
    await expect(panel.getByText('Take-away:')).toBeVisible();
    // A value on the page: the current (last) step's first line shows its measured number; the
    // other steps are folded to one line each.
    const first = panel.getByTestId(`lesson-claim-${lesson.steps[lesson.steps.length - 1]!.claims[0]}`);
    await expect(panel.locator('.lesson-step.folded')).toHaveCount(lesson.steps.length - 1);
    expect(Number(await first.getAttribute('data-a'))).not.toBeNaN();
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: `${SCREENS_DIR}lesson-${lesson.id}.png` });
    await panel.screenshot({ path: `${SCREENS_DIR}lesson-${lesson.id}-panel.png` });

    // Presenter mode: large type, the lesson's hide= panels gone (and in the link), only its charts.
    await page.getByRole('button', { name: 'Dark theme' }).click();
    await panel.getByRole('button', { name: 'Presenter mode' }).click();
    await expect(panel.getByRole('button', { name: 'Presenter mode' })).toHaveAttribute('aria-pressed', 'true');
    await expect(page.locator('html')).toHaveAttribute('data-type', 'large');
    if (lesson.hide.includes('methods')) await expect(page.getByRole('heading', { name: 'Methods', exact: true })).toHaveCount(0);
    await expect(page.getByTestId('hidden-note')).toBeVisible();
    const visibleCharts = await page
      .locator('.charts figure.chart')
      .evaluateAll((els) => els.filter((e) => getComputedStyle(e).display !== 'none').map((e) => e.getAttribute('data-testid')));
    // The charts of the step on screen (the last): those its text names, else those its lines read.
    expect(visibleCharts.sort()).toEqual(stepCharts(lesson, lesson.steps[lesson.steps.length - 1]!).map((c) => `chart-${c}`).sort());
    await expect.poll(() => new URL(page.url()).hash).toContain('present=1');
    expect(new URL(page.url()).hash).toContain(`hide=${lesson.hide.join(',')}`);
    await page.screenshot({ path: `${SCREENS_DIR}lesson-${lesson.id}-presenter.png`, fullPage: true });
    // Leaving presenter mode shows every panel again.
    await panel.getByRole('button', { name: 'Presenter mode' }).click();
    await expect(page.getByTestId('hidden-note')).toHaveCount(0);
    await expect(page.locator('html')).toHaveAttribute('data-type', 'normal');
    expect(errors).toEqual([]);
  });
}

test('a lesson step trains on the lesson’s seeds: its lines on their mean, its charts with a min-max band', async ({ page }) => {
  const lesson = LESSONS.find((l) => l.id === 'collapse')!;
  const errors = collectPageErrors(page);
  await ready(page, `/${lessonStepHash(lesson, 0)}`);
  await stepMeasured(page, lesson, 0);
  const step = page.getByTestId('lesson-step-1');
  // Each band is as wide as the seeds disagree: a closed path, not a line.
  const band = step.locator('[data-testid^="lesson-seeds-chart-"] path.xy-band').first();
  expect(await band.getAttribute('d')).toMatch(/^M.*Z$/);
  // Without ?charts= the lesson charts are on VIEW_ENGINE.lesson's engine, the SVG chart (tests/unit/chartEngine.test.ts).
  await expect(step.locator('.recharts-wrapper')).toHaveCount(0);
  await expect(page.getByTestId('lesson-progress')).toHaveAttribute('data-done', 'true');
  await step.screenshot({ path: `${SCREENS_DIR}lesson-seeds-bands.png` });
  expect(errors).toEqual([]);
});

test('the lesson charts draw on the engine ?charts= names, each run with its min-max band in its colour, once in the tooltip', async ({ page }) => {
  test.setTimeout(300_000);
  const lesson = LESSONS.find((l) => l.id === 'collapse')!;
  const errors = collectPageErrors(page);
  const fills: Record<string, string[]> = {};
  for (const engine of ['svg', 'recharts'] as const) {
    await ready(page, `/?charts=${engine}${lessonStepHash(lesson, 0)}`);
    await stepMeasured(page, lesson, 0);
    const step = page.getByTestId('lesson-step-1');
    const charts = step.locator('[data-testid^="lesson-seeds-chart-"]');
    // Recharts draws in a .recharts-wrapper; the SVG chart has none. Counted in the seeds' charts
    // only: the live charts the step names above them are drawn by the same engine.
    await expect(charts.locator('.recharts-wrapper')).toHaveCount(engine === 'recharts' ? await charts.count() : 0);
    const bands = charts.locator(BAND);
    await expect(bands).toHaveCount(await charts.count());
    for (const b of await bands.all()) {
      expect(await b.getAttribute('d')).toMatch(/^M.*Z$/);
      expect(Number(await b.getAttribute('fill-opacity'))).toBeCloseTo(0.18, 5);
    }
    fills[engine] = await bands.evaluateAll((bs) => bs.map((b) => b.getAttribute('fill') ?? ''));
    // The band's run is in the tooltip once (its line), not again for the band.
    const chart = charts.first();
    await chart.scrollIntoViewIfNeeded();
    const box = (await chart.locator('svg').first().boundingBox())!;
    await page.mouse.move(box.x + box.width * 0.6, box.y + box.height * 0.4);
    const runs = (await chart.getAttribute('data-runs'))!.split(',');
    const items = engine === 'svg' ? chart.locator('.xy-tooltip p:not(.xy-tooltip-title)') : chart.locator('.recharts-tooltip-item');
    await expect(items).toHaveCount(runs.length);
    await expect(items.first()).toContainText(lessonRun(lesson, runs[0]!).label);
    await step.screenshot({ path: `${SCREENS_DIR}lesson-seeds-bands-${engine}.png` });
    await page.mouse.move(0, 0);
  }
  // Both engines colour each band as its run's line.
  expect(fills.recharts).toEqual(fills.svg);
  expect(errors).toEqual([]);
});

test('a lesson step link opens the panel at that step and runs it; the menu works from the keyboard', async ({ page }) => {
  const lesson = LESSONS.find((l) => l.id === 'turns')!;
  const run = lessonRun(lesson, lesson.steps[1]!.run);
  // The step link as the panel copies it: config, step=N, lesson=<id>:<n>.
  const hash = lessonStepHash(lesson, 1);
  expect(hash).toBe(`#v=1&batch=8&methods=igpo&step=${run.iters}&lesson=turns:2`);
  await ready(page, `/${hash}`);
  const panel = page.getByTestId('lesson-panel');
  await expect(panel).toHaveAttribute('data-step', '2');
  await stepMeasured(page, lesson, 1);
  await expect(page.getByTestId('link-notice')).toHaveCount(0);
  await panel.getByTestId('lesson-step-2').screenshot({ path: `${SCREENS_DIR}lesson-step-seeds.png` });

  // Close it, then open another lesson with the keyboard only.
  await panel.getByRole('button', { name: `Close the lesson ${lesson.title}` }).click();
  await expect(panel).toHaveCount(0);
  const summary = page.locator('summary', { hasText: 'Lessons' });
  await summary.focus();
  await page.keyboard.press('Enter');
  const menu = page.getByRole('menu', { name: 'Lessons' });
  await expect(menu).toBeVisible();
  await page.keyboard.press('Tab');
  await expect(menu.getByRole('menuitem').first()).toBeFocused();
  await page.keyboard.press('Escape');
  await expect(menu).toBeHidden();
  await expect(summary).toBeFocused();

  // On a phone the lesson panel fits the screen (one column, nothing wider than it).
  await page.setViewportSize({ width: 390, height: 844 });
  await page.getByText('Lessons', { exact: true }).click();
  await page.getByRole('menuitem', { name: `2. ${lesson.title}` }).click();
  await expect(page.getByTestId('lesson-panel')).toBeVisible();
  await page.waitForTimeout(300);
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
  await page.screenshot({ path: `${SCREENS_DIR}lesson-phone.png` });
  await waitIdle(page);
  await page.setViewportSize({ width: 1366, height: 900 });

  // A bad lesson in a link is named, and the rest of the link applies.
  await page.goto('/#v=1&batch=4&lesson=nosuch');
  await expect(page.getByTestId('link-notice')).toContainText('unknown lesson');
  await expect(page.getByTestId('lesson-panel')).toHaveCount(0);
});

test('a lesson’s pretrained start comes with the page; another pretrains in the worker, and says which', async ({ page }) => {
  const errors = collectPageErrors(page);
  const fetched: string[] = [];
  page.on('request', (r) => fetched.push(new URL(r.url()).pathname));
  const lesson = LESSONS.find((l) => l.id === 'collapse')!;
  // The lesson's step 1 on its link: the page's run (seed 1) and the seeds in the pool start from
  // the shipped file (workers/formats/shippedStarts.ts), fetched by each worker that needs it.
  await page.goto(`/${lessonStepHash(lesson, 0)}`);
  const line = page.getByTestId('pretrain');
  await expect(line).toContainText(/^Pretrained start: success \d+ %/, { timeout: 60_000 });
  await expect(line).toHaveAttribute('title', /weights shipped with the page/);
  const starts = () => fetched.filter((p) => /\/starts-[\w-]+\.bin$/.test(p)).length;
  expect(starts()).toBeGreaterThanOrEqual(1);
  // A seed no lesson uses: pretrained here (the file is not even fetched), and the line's note says how long it took.
  fetched.length = 0;
  await page.goto('/#v=1&batch=4&group=4&init=pretrained&seed=77');
  await page.reload();
  await page.getByRole('button', { name: 'Step' }).click();
  await expect(line).toContainText(/^Pretrained start: success \d+ %/, { timeout: 60_000 });
  await expect(line).toHaveAttribute('title', /pretraining took \d+\.\d s/);
  expect(starts()).toBe(0);
  expect(errors).toEqual([]);
});
