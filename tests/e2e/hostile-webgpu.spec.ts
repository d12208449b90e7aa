/** WebGPU faults outside a step: a device lost while paused, then Export → Batch. */
import { expect, test } from '@playwright/test';
import { readFileSync } from 'node:fs';
import { collectPageErrors, startAndWait } from './util';

test('9. a device lost while paused: Export → Batch writes the batch through a new device, with a notice, not a raw mapAsync error', async ({ page }) => {
  // Recovery builds a new device and compiles the run's kernels again: on SwiftShader, beside the other
  // spec files' work, that alone has taken over two minutes.
  test.setTimeout(420_000);
  const errors = collectPageErrors(page);
  await startAndWait(page, 'gpu', 3);
  await page.getByRole('button', { name: 'Pause' }).click();
  await expect(page.getByRole('button', { name: 'Start', exact: true })).toBeEnabled({ timeout: 60_000 });
  const iter = Number(await page.getByTestId('iter').textContent());
  await page.evaluate(() => window.__playgroundDebug!('lose-device'));
  await page.getByText('Export', { exact: true }).click();
  const [dl] = await Promise.all([page.waitForEvent('download', { timeout: 300_000 }), page.getByRole('menuitem', { name: /Batch as JSON/ }).click()]);
  const dump = JSON.parse(readFileSync(await dl.path(), 'utf8'));
  expect(dump.iter).toBe(iter);
  await expect(page.getByRole('alert').filter({ hasText: 'mapAsync' })).toHaveCount(0);
  await expect(page.getByText(/The GPU device was lost while writing the batch/)).toBeVisible();
  expect(errors).toEqual([]);
});
