/**
 * Faults provoked in the real page (through window.__playgroundDebug): a crashed worker, a hung
 * worker, a NaN, and (WebGPU project) a lost device. The page must say what happened, keep its
 * charts, and go on without losing or repeating an iteration.
 */
import { expect, test, type Page } from '@playwright/test';
import { chartPoints, SCREENS_DIR } from './util';

async function iterShown(page: Page): Promise<number> {
  return Number((await page.getByTestId('iter').textContent())?.match(/\d+/)?.[0] ?? NaN);
}

async function startAndWait(page: Page, backend: 'cpu' | 'gpu', points: number): Promise<void> {
  await page.goto('/#v=1&batch=4&group=4');
  await page.getByLabel('Backend').selectOption(backend);
  await expect(page.getByTestId('backend-status')).toHaveText(backend === 'gpu' ? /^WebGPU/ : /^CPU/, { timeout: 60_000 });
  await page.getByRole('button', { name: 'Start' }).click();
  await expect.poll(() => chartPoints(page, 'chart-reward'), { timeout: 120_000 }).toBeGreaterThanOrEqual(points);
}

/** Every iteration shown once: the last iteration equals the number of points. */
async function expectContiguous(page: Page): Promise<void> {
  await expect.poll(async () => (await iterShown(page)) === (await chartPoints(page, 'chart-reward'))).toBe(true);
}

test.describe('webgpu faults', () => {
  test('a lost GPU device: a notice and a marker, and the run continues with every iteration once', async ({ page }) => {
    await startAndWait(page, 'gpu', 3);
    await page.evaluate(() => window.__playgroundDebug!('lose-device'));
    await expect(page.getByTestId('recovery-notice')).toContainText('The GPU device was lost', { timeout: 60_000 });
    const at = await chartPoints(page, 'chart-reward');
    await expect.poll(() => chartPoints(page, 'chart-reward'), { timeout: 120_000 }).toBeGreaterThanOrEqual(at + 3);
    await page.getByRole('button', { name: 'Pause' }).click();
    await expectContiguous(page);
    expect(Number(await page.getByTestId('chart-reward').getAttribute('data-markers'))).toBe(1);
    await page.screenshot({ path: `${SCREENS_DIR}reliability-device-lost.png`, fullPage: true });
  });
});
