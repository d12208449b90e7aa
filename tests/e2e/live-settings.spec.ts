/** Changing settings mid-run: carried into the run from the next iteration, or a named reset. */
import { expect, test } from '@playwright/test';
import { chartPoints, expectContiguous, SCREENS_DIR, startAndWait, waitRebuilt } from './util';

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

  await page.getByText("The task's own settings").click();
  const values = page.getByLabel('values', { exact: true });
  await values.fill('12');
  await values.press('Enter');
  await expect(page.getByTestId('recovery-notice')).toContainText(/alters the model’s shape|alters the model's shape/);
  await expect(page.getByTestId('recovery-notice')).toContainText('reset');
  await expect.poll(() => chartPoints(page, 'chart-reward')).toBe(0);
});

test('each task can be picked, shows its own knobs, and trains', async ({ page }) => {
  await page.goto('/#v=1&batch=2&group=4');
  await page.getByLabel('Backend').selectOption('cpu');
  await page.getByText("The task's own settings").click();
  for (const [task, title, knob] of [
    ['tools', /tool use/, 'judge noise'],
    ['roles', /two roles/, 'executor reward scale'],
    ['sequence', /sequence matching/, 'sequence length'],
  ] as const) {
    await page.getByLabel('task', { exact: true }).selectOption(task);
    await expect(page.getByRole('heading', { name: title })).toBeVisible();
    await expect(page.getByLabel(knob, { exact: true })).toBeVisible();
    await expect(page.getByLabel('hops', { exact: true })).toHaveCount(0);
    // Past the 250 ms settings debounce, and the rebuilt run idle.
    await waitRebuilt(page);
    await expect(page.getByTestId('iter')).toHaveText('0');
    await page.getByRole('button', { name: 'Step' }).click();
    await expect(page.getByTestId('iter'), `one iteration of ${task}`).toHaveText('1', { timeout: 30_000 });
  }
});
