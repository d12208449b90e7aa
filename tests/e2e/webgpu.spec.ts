/**
 * Training on WebGPU. Here the adapter is SwiftShader (a fallback adapter), which the app's 'auto'
 * mode runs on the CPU, so the test picks the WebGPU backend explicitly and keeps the batch small.
 */
import { expect, test } from '@playwright/test';
import { chartPoints, collectPageErrors, SCREENS_DIR, waitIdle } from './util';

test('trains on WebGPU, pauses, and charts the run', async ({ page }) => {
  const errors = collectPageErrors(page);
  await page.goto('/');
  await expect(page.getByRole('status')).toHaveText(/^(WebGPU|CPU fallback): /, { timeout: 60_000 });

  await page.getByLabel('prompts per batch', { exact: true }).fill('4');
  await page.getByLabel('group size', { exact: true }).fill('4');
  await page.getByLabel('Backend').selectOption('gpu');
  // Compiling the kernels takes seconds on SwiftShader: the line says so, not the CPU fallback it left.
  await expect(page.getByRole('status')).toHaveText('Starting WebGPU: compiling its kernels…');
  await expect(page.getByRole('status')).toHaveText(/^WebGPU: /, { timeout: 60_000 });
  await waitIdle(page);
  await expect(page.getByRole('alert')).toHaveCount(0);

  const t0 = Date.now();
  await page.getByRole('button', { name: 'Start' }).click();
  await expect.poll(() => chartPoints(page, 'chart-reward'), { timeout: 120_000, intervals: [500] }).toBeGreaterThanOrEqual(3);
  test.info().annotations.push({ type: 'timing', description: `3 iterations on WebGPU in ${Date.now() - t0} ms` });

  await page.getByRole('button', { name: 'Pause' }).click();
  await waitIdle(page);
  const n = await chartPoints(page, 'chart-reward');
  await page.waitForTimeout(3000);
  expect(await chartPoints(page, 'chart-reward')).toBe(n);
  await expect(page.getByTestId('iter')).toHaveText(String(n));
  for (const id of ['chart-groups_all_equal_frac', 'chart-entropy', 'chart-loss']) {
    expect(await chartPoints(page, id)).toBe(n);
  }
  expect(await chartPoints(page, 'chart-adv-hist')).toBeGreaterThan(0);
  await expect(page.getByTestId('last-metrics')).toContainText('reward');
  await expect(page.getByRole('alert')).toHaveCount(0);
  expect(errors).toEqual([]);

  await page.screenshot({ path: `${SCREENS_DIR}webgpu-training.png`, fullPage: true });
});
