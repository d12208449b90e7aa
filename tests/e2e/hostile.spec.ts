/**
 * What a hostile or careless user can do to the built page with a file, a link or a dead worker:
 * none of it may blank the page, freeze it, or silently shorten a run. One test per fault.
 */
import { expect, test, type Page } from '@playwright/test';
import { readFileSync } from 'node:fs';
import { chartPoints, collectPageErrors, SCREENS_DIR } from './util';

async function download(page: Page, item: string | RegExp): Promise<{ name: string; text: string }> {
  await page.getByText('Export', { exact: true }).click();
  const [dl] = await Promise.all([page.waitForEvent('download'), page.getByRole('menuitem', { name: item }).click()]);
  return { name: dl.suggestedFilename(), text: readFileSync(await dl.path(), 'utf8') };
}

/** A small CPU run stepped once, and its run file (a valid base to make hostile). */
async function stepOnce(page: Page): Promise<Record<string, any>> {
  await page.goto('/#v=1&batch=2&group=4&model.hidden=8');
  await page.getByLabel('Backend').selectOption('cpu');
  await page.getByRole('button', { name: 'Step' }).click();
  await expect(page.getByTestId('iter')).toHaveText('1', { timeout: 60_000 });
  return JSON.parse((await download(page, /Whole run as JSON/)).text);
}

async function importRun(page: Page, name: string, run: unknown): Promise<void> {
  await page.getByTestId('import-file').setInputFiles({ name, mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(run)) });
}

/** The longest a main-thread task took since `since` (a PerformanceObserver installed by `watchLongTasks`). */
async function watchLongTasks(page: Page): Promise<() => Promise<number>> {
  await page.evaluate(() => {
    const w = window as unknown as { __longest: number };
    w.__longest = 0;
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) w.__longest = Math.max(w.__longest, e.duration);
    }).observe({ type: 'longtask', buffered: false });
  });
  return () => page.evaluate(() => (window as unknown as { __longest: number }).__longest);
}

test.describe('hostile files, links and workers', () => {
  test('1. a run file with metrics of 1e308 and -1e308 (or the largest double and 0) is shown, not a blank page', async ({ page }) => {
    const errors = collectPageErrors(page);
    const base = await stepOnce(page);
    const longest = await watchLongTasks(page);
    const row = base.metrics[0];
    const metrics = Array.from({ length: 40 }, (_, i) => ({ ...row, iter: i + 1, reward_mean: i % 2 ? -1e308 : 1e308, loss: i % 2 ? 0 : 1.7976931348623157e308 }));
    await importRun(page, 'extreme.json', { ...base, metrics, batch: null });
    await expect(page.getByTestId('imported-banner')).toContainText('extreme.json');
    await expect.poll(() => chartPoints(page, 'chart-reward')).toBe(40);
    expect(await page.locator('#root').evaluate((r) => r.childElementCount)).toBeGreaterThan(0);
    await page.screenshot({ path: `${SCREENS_DIR}hostile-1e308.png`, fullPage: true });
    expect(await longest()).toBeLessThan(2000);
    expect(errors).toEqual([]);
  });

  test('2. a trajectory of group 4294967294 is refused by path; the page stays responsive', async ({ page }) => {
    const errors = collectPageErrors(page);
    const base = await stepOnce(page);
    const longest = await watchLongTasks(page);
    base.batch.trajs[0].group = 4294967294;
    await importRun(page, 'group.json', base);
    const notice = page.getByTestId('import-errors');
    await expect(notice).toContainText('batch.trajs[0].group');
    expect(await longest()).toBeLessThan(2000);
    expect(errors).toEqual([]);
  });

  test('3. a worker killed after a Step (as out of memory): the next Step ends in the notice with the restart offer', async ({ page }) => {
    test.setTimeout(120_000);
    await stepOnce(page);
    await page.evaluate(() => window.__playgroundDebug!('terminate'));
    await page.getByRole('button', { name: 'Step' }).click();
    const failure = page.getByTestId('worker-failure');
    await expect(failure).toContainText('stopped responding', { timeout: 40_000 });
    await expect(page.getByRole('button', { name: 'Start', exact: true })).toBeEnabled();
    await failure.getByRole('button', { name: 'Restart from iteration 1' }).click();
    await page.getByRole('button', { name: 'Step' }).click();
    await expect(page.getByTestId('iter')).toHaveText('2', { timeout: 60_000 });
  });

  test('3b. a worker killed while idle: Export → Batch says it could not be written, and Start is not stuck behind it', async ({ page }) => {
    test.setTimeout(120_000);
    await stepOnce(page);
    await page.evaluate(() => window.__playgroundDebug!('terminate'));
    await page.getByText('Export', { exact: true }).click();
    await page.getByRole('menuitem', { name: /Batch as JSON/ }).click();
    await expect(page.getByText(/The batch could not be written: the trainer stopped/)).toBeVisible({ timeout: 40_000 });
    await expect(page.getByTestId('worker-failure')).toBeVisible();
    await expect(page.getByRole('button', { name: 'Start', exact: true })).toBeEnabled();
  });

  test('4. a restart after a mid-run settings change resumes the run that was shown', async ({ page }) => {
    test.setTimeout(180_000);
    const stepTo = async (n: number) => {
      for (let i = Number(await page.getByTestId('iter').textContent()); i < n; i++) {
        await page.getByRole('button', { name: 'Step' }).click();
        await expect(page.getByTestId('iter')).toHaveText(String(i + 1), { timeout: 30_000 });
      }
    };
    const changeLr = async () => {
      const lr = page.getByLabel('learning rate', { exact: true });
      await lr.fill('0.02');
      await lr.press('Enter');
      await expect(page.getByTestId('chart-reward')).toHaveAttribute('data-markers', '1', { timeout: 30_000 });
    };
    const rowsAfter18 = async () => (JSON.parse((await download(page, 'Metrics as JSON')).text) as Array<{ iter: number; ms: number }>).filter((r) => r.iter > 18).map((r) => ({ ...r, ms: 0 }));

    await stepOnce(page);
    await stepTo(13);
    await changeLr();
    await stepTo(22);
    const expected = await rowsAfter18();

    // A fresh page for the run that crashes.
    await page.goto('about:blank');
    await stepOnce(page);
    await stepTo(13);
    await changeLr();
    await stepTo(18);
    await page.evaluate(() => window.__playgroundDebug!('crash'));
    await page.getByTestId('worker-failure').getByRole('button', { name: 'Restart from iteration 18' }).click();
    await expect(page.getByRole('button', { name: 'Start', exact: true })).toBeEnabled({ timeout: 60_000 });
    await stepTo(22);
    expect(await rowsAfter18()).toEqual(expected);
  });

  test('5. exports hold every iteration of a run longer than the charts keep, and say so', async ({ page }) => {
    const base = await stepOnce(page);
    const row = base.metrics[0];
    const metrics = Array.from({ length: 2640 }, (_, i) => ({ ...row, iter: i + 1 }));
    await importRun(page, 'long.json', { ...base, metrics, batch: null });
    await expect(page.getByTestId('imported-banner')).toContainText('long.json');
    const csv = await download(page, 'Metrics as CSV');
    expect(csv.text.trim().split('\n')).toHaveLength(2641);
    const json = await download(page, 'Metrics as JSON');
    expect(JSON.parse(json.text)).toHaveLength(2640);
    const whole = await download(page, 'Whole run as JSON (config, metrics, notes)');
    expect(JSON.parse(whole.text).metrics).toHaveLength(2640);
    await page.getByText('Export', { exact: true }).click();
    await expect(page.getByTestId('export-extent')).toHaveText('Metrics and whole-run files hold all 2,640 iterations.');
  });

  test('6. the trainer worker is served with the CSP as a header (no eval there either)', async ({ page }) => {
    const policies: string[] = [];
    page.on('response', (r) => {
      if (/trainer\.worker[^/]*\.js/.test(r.url())) policies.push(r.headers()['content-security-policy'] ?? '(none)');
    });
    await stepOnce(page);
    expect(policies.length).toBeGreaterThan(0);
    for (const p of policies) {
      expect(p).toMatch(/script-src 'self' 'wasm-unsafe-eval'(;|$)/);
      expect(p).not.toMatch(/'unsafe-eval'/);
    }
  });

  test('7. a link for a 4 GB run asks before anything is built; "Not now" leaves the page light', async ({ page }) => {
    const errors = collectPageErrors(page);
    await page.goto('/#v=1&batch=1024&group=64&model.hidden=512&backend=cpu&step=100000');
    const prompt = page.getByTestId('link-cost-prompt');
    await expect(prompt).toContainText(/large run.*per iteration on the CPU backend and 3\.8 GB of memory, for 100,000 iterations/s);
    await page.screenshot({ path: `${SCREENS_DIR}hostile-link-prompt.png` });
    await page.waitForTimeout(3000);
    await expect(page.getByTestId('iter')).toHaveText('0');
    await prompt.getByRole('button', { name: 'Not now' }).click();
    await expect(prompt).toBeHidden();
    await expect(page.getByTestId('iter')).toHaveText('0');
    expect(errors).toEqual([]);
  });
});
