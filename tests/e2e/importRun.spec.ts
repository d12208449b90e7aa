/**
 * "Import run…" with real runs' metric logs (tests/fixtures/runLogs, each in its framework's own
 * format): a TRL trainer_state.json, a verl console log and a W&B CSV export are drawn on the charts,
 * and the playground's alarms fire on them at the steps the logs were written for. A file that is no
 * log is refused in the notice, and what was on screen stays.
 */
import { expect, test, type Page } from '@playwright/test';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { chartPoints, collectPageErrors, removeWebGpu, SCREENS_DIR } from './util';

const FIXTURES = fileURLToPath(new URL('../fixtures/runLogs/', import.meta.url));

test.beforeEach(async ({ page, context }) => {
  await removeWebGpu(page, context);
});

async function importFile(page: Page, name: string, body: string, mimeType = 'text/plain'): Promise<void> {
  await page.getByTestId('import-file').setInputFiles({ name, mimeType, buffer: Buffer.from(body) });
}

/** The alarms listed, as [kind, step], oldest first. */
async function alarmsListed(page: Page): Promise<Array<[string, number]>> {
  const items = page.getByTestId('alarms').locator('li[data-kind]');
  const out: Array<[string, number]> = [];
  for (const li of await items.all()) out.push([(await li.getAttribute('data-kind'))!, Number((await li.textContent())!.match(/at iteration (\d+)/)![1])]);
  return out.reverse();
}

test('Import run… draws and diagnoses a TRL, a verl and a W&B CSV log; a bad file changes nothing', async ({ page }) => {
  const errors = collectPageErrors(page);
  await page.goto('/#v=1&batch=4&group=4');
  await page.getByLabel('Backend').selectOption('cpu');
  await page.getByRole('button', { name: 'Step' }).click();
  await expect(page.getByTestId('iter')).toHaveText('1', { timeout: 60_000 });
  await expect.poll(() => chartPoints(page, 'chart-reward')).toBe(1);

  // A file that is no log: refused in the notice, the live run's chart and iteration untouched.
  await importFile(page, 'notes.txt', 'hello\nthis is not a run log\n');
  const notice = page.getByTestId('import-errors');
  await expect(notice).toContainText('Could not import “notes.txt”: nothing was changed.');
  await expect(notice).toContainText("not a run log this reads: expected TRL's trainer_state.json");
  await expect(page.getByTestId('iter')).toHaveText('1');
  expect(await chartPoints(page, 'chart-reward')).toBe(1);
  await expect(page.getByTestId('imported-banner')).toHaveCount(0);
  await notice.getByRole('button', { name: 'Dismiss' }).click();

  // TRL: 60 steps of a run that stalls (most rollouts fail); a gradient spike at 22, all-equal groups from 38, entropy collapse at 46.
  await importFile(page, 'trainer_state.json', readFileSync(`${FIXTURES}trl_trainer_state.json`, 'utf8'), 'application/json');
  const banner = page.getByTestId('imported-banner');
  await expect(banner).toContainText('Viewing a TRL run from “trainer_state.json”');
  await expect(banner).toContainText('60 steps (1 to 60)');
  await expect(page.getByTestId('imported-log-mapped')).toContainText('groups_all_equal_frac ← frac_reward_zero_std');
  await expect(banner).toContainText('1 value is NaN or infinite');
  await expect.poll(() => chartPoints(page, 'chart-reward')).toBe(60);
  await expect.poll(() => chartPoints(page, 'chart-entropy')).toBe(60);
  await expect.poll(() => alarmsListed(page)).toEqual([['grad', 22], ['collapse', 38], ['entropy', 46]]);
  await expect(page.getByTestId('chart-entropy')).toHaveAttribute('data-alarms', '1');
  await expect(page.getByTestId('chart-grad_norm')).toHaveAttribute('data-alarms', '1');
  // The metrics a log lacks are left out of the run's summary line, not shown as NaN.
  await expect(page.getByText(/^reward 0\.385 · success 38\.5% · all-equal groups 0\.90 · entropy 0\.050 · loss -0\.0095$/)).toBeVisible();
  await page.getByText(/^More charts:/).click();
  await page.screenshot({ path: `${SCREENS_DIR}import-trl.png`, fullPage: true });

  // A malformed log while the TRL run is shown: refused, the TRL run stays.
  await importFile(page, 'cut.jsonl', '{"step":1,"data":{"actor/entropy":1}}\n{broken\n{"step":3,"data":{}}\n');
  await expect(notice).toContainText('Could not import “cut.jsonl”: nothing was changed.');
  await expect(notice).toContainText('line 2: not JSON');
  await expect(banner).toContainText('trainer_state.json');
  expect(await chartPoints(page, 'chart-reward')).toBe(60);
  await page.screenshot({ path: `${SCREENS_DIR}import-refused.png` });
  await notice.getByRole('button', { name: 'Dismiss' }).click();

  // verl's console output (Ray prefixes, numpy reprs): 40 steps, a gradient spike at 30.
  await importFile(page, 'verl_console.txt', readFileSync(`${FIXTURES}verl_console.txt`, 'utf8'));
  await expect(banner).toContainText("Viewing a verl run from “verl_console.txt” (verl's console log (step:N - key:value lines))");
  await expect(page.getByTestId('imported-log-mapped')).toContainText('grad_norm ← actor/grad_norm');
  await expect.poll(() => chartPoints(page, 'chart-reward')).toBe(40);
  await expect.poll(() => alarmsListed(page)).toEqual([['grad', 30]]);
  await page.screenshot({ path: `${SCREENS_DIR}import-verl.png`, fullPage: true });

  // A W&B CSV export of a TRL run: 30 steps by train/global_step, all-equal groups from step 1.
  await importFile(page, 'wandb_export.csv', readFileSync(`${FIXTURES}wandb_trl_history.csv`, 'utf8'), 'text/csv');
  await expect(banner).toContainText('Viewing a TRL run from “wandb_export.csv” (a W&B CSV export)');
  await expect.poll(() => chartPoints(page, 'chart-reward')).toBe(30);
  await expect.poll(() => alarmsListed(page)).toEqual([['collapse', 1]]);
  await page.screenshot({ path: `${SCREENS_DIR}import-wandb.png`, fullPage: true });

  // Closing goes back to the page's own config, live.
  await banner.getByRole('button', { name: 'Close imported run' }).click();
  await expect(banner).toHaveCount(0);
  expect(errors).toEqual([]);
});
