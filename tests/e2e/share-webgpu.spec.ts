/**
 * A share link reproduces a run on WebGPU too: the same link (backend=gpu) opened twice on the same
 * adapter gives the same numbers, iteration by iteration.
 */
import { expect, test, type Page } from '@playwright/test';
import { readFileSync } from 'node:fs';
import { SCALAR_METRICS } from '../../workers/core/metrics';
import { collectPageErrors } from './util';

const LINK = '/#v=1&seed=6&batch=2&group=4&model.hidden=16&backend=gpu&step=3';

async function metricsOf(page: Page): Promise<Array<Record<string, number>>> {
  await page.goto(LINK);
  await expect(page.getByTestId('backend-status')).toHaveText(/^WebGPU: /, { timeout: 60_000 });
  await expect(page.getByTestId('iter')).toHaveText('3', { timeout: 120_000 });
  await expect(page.getByTestId('phase')).toHaveText(/paused at step 3/);
  await page.getByText('Export', { exact: true }).click();
  const [dl] = await Promise.all([page.waitForEvent('download'), page.getByRole('menuitem', { name: 'Metrics as JSON' }).click()]);
  return JSON.parse(readFileSync(await dl.path(), 'utf8')) as Array<Record<string, number>>;
}

test('the same link on the same WebGPU adapter gives the same numbers', async ({ page, context }) => {
  const errors = collectPageErrors(page);
  const a = await metricsOf(page);
  const other = await context.newPage();
  const b = await metricsOf(other);
  expect(a).toHaveLength(3);
  for (let i = 0; i < 3; i++) {
    for (const m of SCALAR_METRICS) if (m !== 'ms') expect(b[i]![m], `${m} at iteration ${i + 1}`).toBe(a[i]![m]);
  }
  await expect(page.getByRole('alert')).toHaveCount(0);
  expect(errors).toEqual([]);
});
