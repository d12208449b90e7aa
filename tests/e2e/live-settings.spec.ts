/** Changing settings mid-run: carried into the run from the next iteration, or a named reset. */
import { expect, test } from '@playwright/test';
import { chartPoints, expectContiguous, SCREENS_DIR, startAndWait } from './util';

test('a learning-rate change while running applies from the next iteration, marked; a vocabulary change resets, said so', async ({ page }) => {
  await startAndWait(page, 'cpu', 5);
  const lr = page.getByLabel('learning rate', { exact: true });
  await lr.fill('0.02');
  await lr.press('Enter');
  await expect(page.getByTestId('chart-reward')).toHaveAttribute('data-markers', '1', { timeout: 30_000 });
  const at = await chartPoints(page, 'chart-reward');
  // Still running, on the same run: more points, none repeated.
  await expect.poll(() => chartPoints(page, 'chart-reward'), { timeout: 60_000 }).toBeGreaterThanOrEqual(at + 3);
  await expect(page.getByTestId('last-metrics')).toBeVisible();
  await page.getByRole('button', { name: 'Pause' }).click();
  await expectContiguous(page);
  await page.screenshot({ path: `${SCREENS_DIR}live-settings.png`, fullPage: true });

  const values = page.getByLabel('values', { exact: true });
  await values.fill('12');
  await values.press('Enter');
  await expect(page.getByTestId('recovery-notice')).toContainText(/alters the model’s shape|alters the model's shape/);
  await expect(page.getByTestId('recovery-notice')).toContainText('reset');
  await expect.poll(() => chartPoints(page, 'chart-reward')).toBe(0);
});
