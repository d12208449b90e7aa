/**
 * The Batch lab on the CPU backend, on a hard setting (32 values: most groups all fail):
 * two iterations, freeze the batch, add IGPO and Dr. GRPO sets, re-score in the worker, and read
 * the page: in the all-equal group GRPO's gradient weights are all 0 while IGPO's are not. A set the
 * config refuses says why by name and is not re-scored. Screenshots go to
 * test-results/screens/batch-lab*.png (laptop, dark theme, phone).
 */
import { expect, test, type Locator, type Page } from '@playwright/test';
import { collectPageErrors, removeWebGpu, SCREENS_DIR, waitIdle } from './util';

const HARD = '/#v=1&env.values=32&batch=4&group=4';

test.beforeEach(async ({ page, context }) => {
  await removeWebGpu(page, context);
});

async function stepTimes(page: Page, n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    const before = Number(await page.getByTestId('iter').textContent());
    await page.getByRole('button', { name: 'Step' }).click();
    await expect(page.getByTestId('iter')).toHaveText(String(before + 1), { timeout: 30_000 });
    await waitIdle(page);
  }
}

/** The lab's data table as { header, rows } (cells as text). */
async function labTable(lab: Locator): Promise<{ header: string[]; rows: string[][] }> {
  const show = lab.getByRole('button', { name: 'Show the batch lab data as a table' });
  if (await show.count()) await show.click();
  const table = lab.getByTestId('lab-table');
  await expect(table).toBeVisible();
  const header = await table.locator('thead th').allTextContents();
  const rows = await table.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('th, td')].map((c) => c.textContent ?? '')));
  return { header, rows };
}

function column(t: { header: string[]; rows: string[][] }, name: RegExp): number[] {
  const k = t.header.findIndex((h) => name.test(h));
  expect(k, `a column ${name} in ${t.header.join(' | ')}`).toBeGreaterThanOrEqual(0);
  return t.rows.map((r) => Number(r[k]));
}

test('freeze a batch, re-score it under GRPO, IGPO and Dr. GRPO: the all-equal group', async ({ page }) => {
  const errors = collectPageErrors(page);
  await page.goto(HARD);
  await expect(page.getByTestId('backend-status')).toHaveText(/^CPU/, { timeout: 60_000 });
  await waitIdle(page);

  await page.getByTestId('batch-lab-disclosure').locator('summary').click();
  const lab = page.getByRole('region', { name: 'Batch lab' });
  const open = lab.getByRole('button', { name: 'Open the batch lab' });
  await open.focus();
  await page.keyboard.press('Enter');
  await expect(lab.getByRole('button', { name: 'Close the batch lab' })).toHaveAttribute('aria-expanded', 'true');

  // Before the first iteration: Freeze is disabled, with the reason as its description.
  const freeze = lab.getByRole('button', { name: 'Freeze the current batch' });
  await expect(freeze).toBeDisabled();
  await expect(freeze).toHaveAccessibleDescription(/at least one iteration/);

  await stepTimes(page, 2);
  await expect(freeze).toBeEnabled();
  await freeze.click();
  await expect(lab.getByTestId('lab-frozen')).toContainText('Frozen: the batch of iteration 2');
  // Freezing re-scores the default set (the run's own, GRPO) at once.
  await expect(lab.getByTestId('lab-column-1')).toBeVisible({ timeout: 30_000 });

  // Add IGPO and Dr. GRPO from the "Add a set" menu; a duplicate is refused with the reason.
  const add = lab.getByLabel('Add a set', { exact: true });
  const addButton = lab.getByRole('button', { name: 'Add the set' });
  await add.selectOption({ label: 'GRPO' });
  await expect(addButton).toBeDisabled();
  await expect(addButton).toHaveAccessibleDescription(/already a set/);
  await add.selectOption({ label: 'IGPO' });
  await addButton.click();
  await add.selectOption({ label: 'Dr. GRPO' });
  await addButton.click();
  await expect(lab.getByTestId('lab-set-2')).toContainText('IGPO');
  await expect(lab.getByTestId('lab-set-3')).toContainText('Dr. GRPO');

  // Re-score, by keyboard.
  const rescore = lab.getByRole('button', { name: 'Re-score' });
  await expect(lab.getByText('The sets changed since the last re-score')).toBeVisible();
  await rescore.focus();
  await page.keyboard.press('Enter');
  await expect(lab.getByTestId('lab-column-3')).toBeVisible({ timeout: 30_000 });
  await expect(lab.getByText('Re-scored iteration 2 under 3 sets')).toBeVisible();

  // The default group is the first all-equal one, labelled as such.
  const group = lab.getByLabel('Group', { exact: true });
  expect(await group.locator('option:checked').textContent()).toMatch(/all equal/);
  await expect(lab.getByLabel('Colour tokens by')).toHaveValue('grad');

  // Gradient weights of the all-equal groups' tokens: GRPO's and Dr. GRPO's all 0 in every one, and
  // IGPO's not in some. (Its reference form normalizes a one-value pool to 0, so a group where a single
  // rollout searched before answering gets no signal from it either: not every all-equal group does.)
  const labels = await group.locator('option').allTextContents();
  let grpo: number[] = [];
  let igpo: number[] = [];
  for (const [index, label] of labels.entries()) {
    if (!/all equal/.test(label)) continue;
    await group.selectOption({ index });
    const t = await labTable(lab);
    const [g, ig, dr] = [column(t, /^Set 1: GRPO$/), column(t, /^Set 2: IGPO$/), column(t, /^Set 3: Dr\. GRPO$/)];
    expect(g.length).toBeGreaterThan(0);
    expect(g.every((v) => v === 0)).toBe(true);
    expect(dr.every((v) => v === 0)).toBe(true);
    if (ig.some((v) => v !== 0 && Number.isFinite(v))) {
      [grpo, igpo] = [g, ig];
      break;
    }
  }
  expect(igpo.some((v) => v !== 0 && Number.isFinite(v))).toBe(true);
  expect(grpo.every((v) => v === 0)).toBe(true);

  // The columns say the same in their summaries and token titles.
  await expect(lab.getByTestId('lab-column-1').getByTestId('lab-summary')).toContainText('Zero gradient: 100% of this group');
  await expect(lab.getByTestId('lab-column-2').getByTestId('lab-summary')).not.toContainText('Zero gradient: 100% of this group');
  const tok = lab.getByTestId('lab-column-2').locator('.lab-tok').first();
  await expect(tok).toHaveAttribute('title', /gradient weight [+-]?\d/);

  // Difference vs the first column: IGPO − GRPO equals IGPO here (GRPO's are 0).
  await lab.getByLabel('Difference vs first column').check();
  await expect(lab.getByTestId('lab-column-2')).toContainText('− set 1');
  const d = await labTable(lab);
  expect(column(d, /^Set 2: IGPO$/)).toEqual(igpo);
  await lab.getByLabel('Difference vs first column').uncheck();

  // Advantages too: IGPO's all-equal group still gets a signal.
  await lab.getByLabel('Colour tokens by').selectOption('adv');
  const a = await labTable(lab);
  expect(column(a, /^Set 1: GRPO$/).every((v) => v === 0)).toBe(true);
  expect(column(a, /^Set 2: IGPO$/).some((v) => v !== 0)).toBe(true);
  await lab.getByTestId('lab-table').scrollIntoViewIfNeeded();
  await page.screenshot({ path: `${SCREENS_DIR}batch-lab-table.png` });
  await lab.getByLabel('Colour tokens by').selectOption('grad');
  await lab.getByRole('button', { name: 'Hide the batch lab data as a table' }).click();

  await lab.scrollIntoViewIfNeeded();
  await lab.screenshot({ path: `${SCREENS_DIR}batch-lab.png` });

  // A set the config refuses: Dr. GRPO + DAPO conflict; the set says why, by name, and its column
  // is not re-scored while the others are.
  await lab.getByTestId('lab-set-3').getByText('Methods of set 3').click();
  await lab.getByRole('group', { name: 'Set 3 methods' }).getByRole('checkbox', { name: 'DAPO', exact: true }).check();
  await expect(lab.getByTestId('lab-set-3')).toContainText(/Set 3 \(Dr\. GRPO \+ DAPO\) is refused: methods: .*conflicts with/);
  await rescore.click();
  await expect(lab.getByRole('region', { name: 'Set 3: Dr. GRPO + DAPO' })).toContainText('Not re-scored: methods:');
  await expect(lab.getByTestId('lab-column-2')).toBeVisible();
  await lab.getByRole('group', { name: 'Set 3 methods' }).getByRole('checkbox', { name: 'DAPO', exact: true }).uncheck();
  await lab.getByTestId('lab-set-3').getByText('Methods of set 3').click();
  await rescore.click();
  await expect(lab.getByTestId('lab-column-3')).toBeVisible();

  // Training on replaces the batch: the lab says so and Re-score waits for a new freeze.
  await stepTimes(page, 1);
  await expect(rescore).toBeDisabled();
  await expect(lab.getByTestId('lab-frozen')).toContainText('went on to iteration 3');
  await freeze.click();
  await expect(lab.getByTestId('lab-frozen')).toContainText('Frozen: the batch of iteration 3');
  await expect(lab.getByTestId('lab-column-3')).toBeVisible({ timeout: 30_000 });

  // Dark theme.
  await page.getByRole('button', { name: 'Dark theme' }).click();
  await expect(page.locator('html')).toHaveAttribute('data-theme', 'dark');
  await lab.scrollIntoViewIfNeeded();
  await lab.screenshot({ path: `${SCREENS_DIR}batch-lab-dark.png` });
  await page.getByRole('button', { name: 'Dark theme' }).click();

  // A phone: the columns stack, nothing wider than the screen.
  await page.setViewportSize({ width: 390, height: 844 });
  await page.waitForTimeout(300);
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
  const c1 = await lab.getByTestId('lab-column-1').boundingBox();
  const c2 = await lab.getByTestId('lab-column-2').boundingBox();
  expect(c1 && c2).toBeTruthy();
  expect(Math.abs(c1!.x - c2!.x)).toBeLessThan(2);
  expect(c2!.y).toBeGreaterThan(c1!.y + c1!.height - 1);
  await lab.getByTestId('lab-column-1').scrollIntoViewIfNeeded();
  await lab.screenshot({ path: `${SCREENS_DIR}batch-lab-phone.png` });
  expect(errors).toEqual([]);
});
