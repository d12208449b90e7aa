/**
 * Without WebGPU (flags off, and navigator.gpu deleted in the page and the worker) the app says it
 * falls back to the CPU backend and still trains.
 */
import { expect, test } from '@playwright/test';
import { chartPoints, collectPageErrors, removeWebGpu, SCREENS_DIR, waitIdle } from './util';

test.beforeEach(async ({ page, context }) => {
  await removeWebGpu(page, context);
});

test('falls back to the CPU backend and trains', async ({ page }) => {
  const errors = collectPageErrors(page);
  await page.goto('/');
  await expect(page.getByRole('status')).toHaveText(/^CPU fallback: /, { timeout: 60_000 });

  // WebGPU is really gone: in the page, and in the trainer worker, whose own view the status reports
  // (the worker refuses code from strings, so Playwright cannot evaluate in it).
  expect(await page.evaluate(() => 'gpu' in navigator)).toBe(false);
  expect(page.workers().length).toBeGreaterThan(0);
  await expect(page.getByRole('status')).toContainText('this browser has no WebGPU');

  await waitIdle(page);
  await page.getByRole('button', { name: 'Start' }).click();
  await expect.poll(() => chartPoints(page, 'chart-reward'), { timeout: 120_000, intervals: [250] }).toBeGreaterThanOrEqual(3);
  await page.getByRole('button', { name: 'Pause' }).click();
  await waitIdle(page);
  const n = await chartPoints(page, 'chart-reward');
  await page.waitForTimeout(1500);
  expect(await chartPoints(page, 'chart-reward')).toBe(n);
  await expect(page.getByTestId('iter')).toHaveText(String(n));

  // Step adds exactly one iteration; Reset clears the charts.
  await page.getByRole('button', { name: 'Step' }).click();
  await expect(page.getByTestId('iter')).toHaveText(String(n + 1), { timeout: 30_000 });
  await page.screenshot({ path: `${SCREENS_DIR}cpu-fallback.png`, fullPage: true });
  await page.getByRole('button', { name: 'Reset' }).click();
  await expect(page.getByTestId('iter')).toHaveText('0');
  expect(await chartPoints(page, 'chart-reward')).toBe(0);

  await expect(page.getByRole('alert')).toHaveCount(0);
  expect(errors).toEqual([]);
});

test('forcing the WebGPU backend without WebGPU shows the error', async ({ page }) => {
  await page.goto('/');
  await expect(page.getByRole('status')).toHaveText(/^CPU fallback: /, { timeout: 60_000 });
  await page.getByLabel('Backend').selectOption('gpu');
  await expect(page.getByRole('alert')).toBeVisible({ timeout: 30_000 });
  await expect(page.getByRole('alert')).toContainText(/WebGPU|adapter|gpu/i);
  await page.getByRole('button', { name: 'Dismiss' }).click();
  await expect(page.getByRole('alert')).toHaveCount(0);
});
