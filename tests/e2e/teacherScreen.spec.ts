/**
 * The screen a teacher points at, in the built page: the Group view true under DARS and IGPO, the
 * estimator as one choice with Undo, Share with step= and Compare in the link, iterations/s on
 * the run line, and the default page on one 1366x900 screen. Screenshots go to test-results/screens/.
 */
import { expect, test, type Page } from '@playwright/test';
import { lessonById, lessonRun } from '../../workers/content/lessons';
import { collectPageErrors, iterShown, removeWebGpu, SCREENS_DIR, waitIdle } from './util';

test.beforeEach(async ({ page, context }) => {
  await removeWebGpu(page, context);
});

async function ready(page: Page, link: string): Promise<void> {
  await page.goto(link);
  await expect(page.getByTestId('backend-status')).toHaveText(/^CPU/, { timeout: 60_000 });
  await waitIdle(page);
}

async function steps(page: Page, n: number): Promise<void> {
  for (let i = 1; i <= n; i++) {
    await page.getByRole('button', { name: 'Step' }).click();
    await expect(page.getByTestId('iter')).toHaveText(String(i), { timeout: 30_000 });
    await waitIdle(page);
  }
}

test('the Group view: one row per prompt under DARS, extras marked; IGPO ties are not collapse', async ({ page }) => {
  const errors = collectPageErrors(page);
  await ready(page, '/#v=1&batch=4&group=4&methods=grpo,dars');
  await steps(page, 2);
  const view = page.getByTestId('group-view');
  const rows = view.locator('tbody tr');
  await expect(rows).toHaveCount(4);
  await expect(view.getByTestId('group-counts')).toContainText(/extra rollouts? \(DARS\) in their prompt's group/);
  // No row is a lone unused slot: every row starts with the prompt's own 4 rollouts.
  for (const r of await rows.all()) expect(await r.locator('button.cell[data-origin="policy"]').count()).toBe(4);
  await expect(view.locator('button.cell[data-origin="unused"]')).toHaveCount(0);
  await expect(view.locator('button.cell[data-origin="extra"]').first()).toBeVisible();
  await view.screenshot({ path: `${SCREENS_DIR}group-view-dars.png` });

  await ready(page, '/#v=1&batch=6&group=4&methods=igpo');
  await steps(page, 1);
  const igpo = page.getByTestId('group-view');
  await expect(igpo.locator('tbody tr')).toHaveCount(6);
  // Groups whose outcomes tie still have IGPO's turn-reward advantages: marked as ties, not as collapse.
  const tied = igpo.locator('tbody tr[data-state="tied"]');
  await expect(tied.first()).toBeVisible();
  await expect(tied.first().locator('.row-note')).toHaveText('rewards tie, A ≠ 0');
  await tied.first().locator('th button').click();
  const advs = await page.getByTestId('group-detail').locator('tbody tr td:nth-of-type(2)').allTextContents();
  expect(advs.some((a) => Math.abs(Number(a)) > 1e-3), advs.join(' ')).toBe(true);
  await igpo.screenshot({ path: `${SCREENS_DIR}group-view-igpo.png` });
  expect(errors).toEqual([]);
});

test('the estimator is one choice: a swap is said with Undo, conflicts by the cards’ names', async ({ page }) => {
  await ready(page, '/#v=1&batch=4&group=4');
  const picker = page.getByTestId('estimator-picker');
  await expect(picker.getByRole('radio', { name: 'GRPO', exact: true })).toBeChecked();
  await picker.getByRole('radio', { name: 'VCPO', exact: true }).check();
  await expect(picker.getByTestId('method-notice')).toContainText('VCPO replaced GRPO as the advantage estimator');
  await picker.screenshot({ path: `${SCREENS_DIR}estimator-swap.png` });
  await picker.getByRole('button', { name: 'Undo' }).click();
  await expect(picker.getByRole('radio', { name: 'GRPO', exact: true })).toBeChecked();
  await expect(picker.getByTestId('method-notice')).toHaveCount(0);
  await expect(page).toHaveURL(/#v=1&batch=4&group=4$/);
});

test('Share copies step= once past iteration 0; Compare rides in the link and restores from it', async ({ page, context }) => {
  await context.grantPermissions(['clipboard-read', 'clipboard-write']);
  await ready(page, '/#v=1&batch=4&group=4&seed=5');
  await steps(page, 2);
  await page.getByRole('button', { name: 'Share' }).click();
  const dialog = page.getByRole('dialog', { name: 'Share link' });
  await expect(dialog.getByRole('textbox', { name: 'Share link' })).toHaveValue(/&step=2(&|$)/);
  await expect(dialog.getByTestId('share-status')).toHaveText('Link copied to the clipboard.');
  expect(await page.evaluate(() => navigator.clipboard.readText())).toMatch(/&step=2(&|$)/);
  await dialog.screenshot({ path: `${SCREENS_DIR}share-step.png` });
  await dialog.getByRole('button', { name: 'Close' }).click();

  await page.getByRole('tab', { name: 'Compare' }).click();
  await expect(page).toHaveURL(/&compare=seed:5;batch:4;group:4\|seed:5;batch:4;group:4$/);
  const link = page.url();
  const withB = `${link.slice(0, link.lastIndexOf('|'))}|seed:5;batch:4;group:4;methods:rloo`;
  const fresh = await context.newPage();
  await removeWebGpu(fresh, context);
  await fresh.goto(withB.replace(/^https?:\/\/[^/]+/, ''));
  await expect(fresh.getByRole('tab', { name: 'Compare' })).toHaveAttribute('aria-selected', 'true');
  const view = fresh.getByRole('tabpanel', { name: 'Compare' });
  await expect(view).toContainText('RLOO');
  await expect(fresh).toHaveURL(/compare=seed:5;batch:4;group:4\|seed:5;batch:4;group:4;methods:rloo$/);
  await view.screenshot({ path: `${SCREENS_DIR}compare-from-link.png` });
});

test('the run line shows wall-clock iterations per second while training', async ({ page }) => {
  await ready(page, '/#v=1&batch=4&group=4');
  await page.getByRole('button', { name: 'Start' }).click();
  await expect(page.getByTestId('iter-rate')).toHaveText(/· \d+(\.\d)? it\/s/, { timeout: 30_000 });
  await page.locator('.iter-line').screenshot({ path: `${SCREENS_DIR}iter-rate.png` });
  await page.getByRole('button', { name: 'Pause' }).click();
  await waitIdle(page);
  await expect(page.getByTestId('iter-rate')).toHaveCount(0);
});

/** Whether the element's box lies inside the first screen of a viewport `height` px tall. */
async function onFirstScreen(page: Page, testId: string, height: number): Promise<boolean> {
  const box = await page.getByTestId(testId).boundingBox();
  return box !== null && box.y >= 0 && box.y + box.height <= height;
}

test('the default page fits one 1366x900 screen; everything else is one click away', async ({ page }) => {
  await ready(page, '/');
  const height = await page.evaluate(() => document.documentElement.scrollHeight);
  expect(height).toBeLessThanOrEqual(1100);
  // The pickers, Start and the key pictures are on the first screen.
  for (const id of ['chart-reward', 'chart-adv-heatmap', 'chart-ratio-heatmap', 'chart-groups_all_equal_frac', 'estimator-picker']) {
    expect(await onFirstScreen(page, id, 900), id).toBe(true);
  }
  await expect(page.getByRole('button', { name: 'Start' })).toBeInViewport();
  await expect(page.getByLabel('task', { exact: true })).toBeInViewport();
  await page.screenshot({ path: `${SCREENS_DIR}one-screen-1366.png`, fullPage: true });
  // One click opens the rest: all methods, the other charts, the batch lab.
  await page.locator('summary', { hasText: 'All methods' }).click();
  await expect(page.getByRole('checkbox', { name: 'DAPO', exact: true })).toBeVisible();
  await page.getByTestId('more-charts').locator('summary').click();
  await expect(page.getByTestId('chart-entropy')).toBeVisible();
  await page.getByTestId('batch-lab-disclosure').locator('summary').click();
  await expect(page.getByRole('region', { name: 'Batch lab' })).toBeVisible();
  console.log(`default page height at 1366x900: ${height} px`);
});

test('the ratio charts say why they are a spike at 1 epoch, and one click fills them', async ({ page }) => {
  await ready(page, '/#v=1&batch=4&group=4');
  const hint = page.getByTestId('on-policy-hint');
  await expect(hint).toContainText('Importance-sampling (IS) ratios are all 1 here (on-policy)');
  await hint.screenshot({ path: `${SCREENS_DIR}on-policy-hint.png` });
  await hint.getByRole('button', { name: '2 epochs per batch' }).click();
  await expect(page.getByLabel('epochs', { exact: true })).toHaveValue('2');
  await expect(hint).toHaveCount(0);
  await expect(page).toHaveURL(/epochs=2/);
});

test('presenter mode at 1280x720: the lesson’s key chart and the Group view on the first screen', async ({ page }) => {
  await page.setViewportSize({ width: 1280, height: 720 });
  await ready(page, '/#v=1&lesson=collapse:1&present=1&hide=task,methods,export,frameworks');
  const panel = page.getByTestId('lesson-panel');
  await panel.getByRole('button', { name: 'Load step 1' }).click();
  // Step 1 trains its run to the lesson's iteration count.
  const collapse = lessonById('collapse')!;
  const iters = lessonRun(collapse, collapse.steps[0]!.run).iters;
  await expect(page.getByTestId('iter')).toHaveText(String(iters), { timeout: 120_000 });
  await waitIdle(page);
  await expect(page.getByTestId('reward-matrix')).toBeVisible({ timeout: 30_000 });
  // Playwright scrolled the step's button into view to click it; the screen a class sees is the top.
  await page.evaluate(() => window.scrollTo(0, 0));
  expect(await onFirstScreen(page, 'chart-reward', 720)).toBe(true);
  await page.screenshot({ path: `${SCREENS_DIR}presenter-1280.png` });
  expect(await onFirstScreen(page, 'group-view', 720)).toBe(true);
});

/**
 * Arms a watcher in the page that, on the first frame the run line says "paused" (at iteration
 * `iter` when given), waits two frames (the commit that follows has painted) and reads every chart's
 * latest iteration (its data-last-iter) by test id. Read at once, not polled: the staggered updates
 * would catch up within their period and hide a chart left behind.
 */
async function armPausedRead(page: Page, iter?: number): Promise<void> {
  await page.evaluate((want) => {
    const w = window as unknown as { __pausedIters?: Promise<Record<string, number>> };
    w.__pausedIters = new Promise((resolve) => {
      const read = () => {
        const out: Record<string, number> = {};
        for (const f of document.querySelectorAll('.charts figure.chart[data-last-iter]')) out[f.getAttribute('data-testid')!] = Number(f.getAttribute('data-last-iter'));
        out['iter-shown'] = Number(document.querySelector('[data-testid="iter"]')?.textContent?.match(/\d+/)?.[0] ?? NaN);
        resolve(out);
      };
      const check = () => {
        const paused = /paused/.test(document.querySelector('[data-testid="phase"]')?.textContent ?? '');
        const at = Number(document.querySelector('[data-testid="iter"]')?.textContent?.match(/\d+/)?.[0] ?? NaN);
        if (paused && (want === null || at === want)) requestAnimationFrame(() => requestAnimationFrame(read));
        else requestAnimationFrame(check);
      };
      requestAnimationFrame(check);
    });
  }, iter ?? null);
}

const pausedRead = (page: Page) => page.evaluate(() => (window as unknown as { __pausedIters: Promise<Record<string, number>> }).__pausedIters);

test('paused, or after one step, every chart shows the same latest iteration', async ({ page }) => {
  await ready(page, '/#v=1&batch=4&group=4');
  await page.getByRole('button', { name: 'Start' }).click();
  await expect.poll(() => iterShown(page), { timeout: 60_000 }).toBeGreaterThanOrEqual(12);
  await armPausedRead(page);
  await page.getByRole('button', { name: 'Pause' }).click();
  const paused = await pausedRead(page);
  const iter = paused['iter-shown']!;
  // The key charts, the latest-iteration histograms and every chart under "More charts".
  expect(Object.keys(paused).length).toBeGreaterThanOrEqual(9);
  expect(paused).toEqual(Object.fromEntries(Object.keys(paused).map((k) => [k, iter])));
  await waitIdle(page);
  await page.getByTestId('more-charts').locator('summary').click();
  await page.locator('.charts').screenshot({ path: `${SCREENS_DIR}paused-charts-one-iteration.png` });

  await armPausedRead(page, iter + 1);
  await page.getByRole('button', { name: 'Step' }).click();
  const stepped = await pausedRead(page);
  expect(stepped).toEqual(Object.fromEntries(Object.keys(paused).map((k) => [k, iter + 1])));
});
