/**
 * Faults provoked in the real page (through window.__playgroundDebug): a crashed worker, a hung
 * worker, a NaN, and (WebGPU project) a lost device. The page must say what happened, keep its
 * charts, and go on without losing or repeating an iteration.
 */
import { expect, test } from '@playwright/test';
import { chartPoints, expectContiguous, SCREENS_DIR, startAndWait } from './util';

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
