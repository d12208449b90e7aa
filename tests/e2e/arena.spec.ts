/**
 * The Arena tab on the CPU backend: a link opens it on a small arena (token clip against CISPO, two epochs per batch, 2
 * seeds, 15 iterations, batch 4 x group 4), Run trains the 4 (cell, seed) runs, and the grid shows
 * per cell its success curve, crashes, final success and cost. Sorting by final success orders the
 * cards by the numbers they show; a card opens its run in the Train view. A bad `arena=` is named
 * in the link notice and the rest of the link applies. Screenshots: test-results/screens/arena-*.png.
 */
import { expect, test, type Locator } from '@playwright/test';
import { SCALAR_METRICS } from '../../workers/core/metrics';
import { collectPageErrors, removeWebGpu, SCREENS_DIR } from './util';

/** The diagnosis metric's name (app/arena/arenaStore.ts DIAG_METRIC; that module starts workers, so it is not imported here). */
const DIAG_METRIC = 'neg_out_grad_share';

const SPEC = 'task=search;iters=15;seeds=1-2;clip=token,cispo;filter=none;advantage=trajectory;aggregation=seq-mean-token-mean;set.batch=4;set.group=4;set.epochs=2';
const LINK = `/#v=1&batch=4&group=4&arena=${SPEC}`;

test.beforeEach(async ({ page, context }) => {
  await removeWebGpu(page, context);
});

/** The cards' labels and shown numbers, in grid order. */
async function cards(grid: Locator): Promise<Array<{ label: string; final: number; rollouts: number; crash: string; seeds: string }>> {
  const out = [];
  for (const card of await grid.getByTestId('arena-cell').all()) {
    out.push({
      label: (await card.locator('.arena-cell-label').textContent()) ?? '',
      final: Number((await card.getByTestId('arena-final').textContent())?.replace('%', '')),
      rollouts: Number(await card.getByTestId('arena-rollouts').textContent()),
      crash: (await card.getByTestId('arena-crash').textContent()) ?? '',
      seeds: (await card.locator('.arena-seeds').textContent()) ?? '',
    });
  }
  return out;
}

test('a link opens a small arena; Run fills the grid; it sorts, filters and opens a cell in the Train view', async ({ page }) => {
  const errors = collectPageErrors(page);
  await page.goto(LINK);
  await expect(page.getByRole('tab', { name: 'Arena' })).toHaveAttribute('aria-selected', 'true');
  const view = page.getByRole('tabpanel', { name: 'Arena' });
  await expect(view).toBeVisible();
  await expect(page.getByTestId('link-notice')).toHaveCount(0);

  // The form shows the link's arena.
  await expect(view.getByRole('checkbox', { name: 'CISPO' })).toBeChecked();
  await expect(view.getByRole('checkbox', { name: 'SAPO' })).not.toBeChecked();
  await expect(view.getByLabel('Seeds')).toHaveValue('1, 2');
  await expect(view.getByLabel('Iterations')).toHaveValue('15');
  const grid = view.getByRole('list', { name: 'Cells' });
  await expect(grid.getByTestId('arena-cell')).toHaveCount(2);
  await expect(grid.locator('.arena-cell-label')).toHaveText(['clip=token', 'clip=cispo']);

  // The seeds field reads ranges as a link does, and names what it cannot read.
  const seeds = view.getByLabel('Seeds');
  await seeds.fill('1-3');
  await expect(view.getByRole('button', { name: 'Run 2 × 3 runs' })).toBeVisible();
  await seeds.fill('1, x');
  await expect(view.getByRole('alert')).toContainText('seeds: expected seeds and ranges like 1,2,5-8, got "x"');
  await seeds.fill('1, 2');
  await seeds.blur();
  await expect(view.getByRole('alert')).toHaveCount(0);

  await view.getByRole('button', { name: 'Run 2 × 2 runs' }).click();
  await expect(view.getByRole('button', { name: 'Stop' })).toBeVisible();
  await expect(view.getByTestId('arena-progress')).toHaveText(/4 of 4 runs, 60 of 60 iterations/, { timeout: 150_000 });
  await expect(view.getByRole('button', { name: 'Run 2 × 2 runs' })).toBeVisible();
  await expect(view.getByRole('alert')).toHaveCount(0);

  const shown = await cards(grid);
  expect(shown.map((c) => c.label)).toEqual(['clip=token', 'clip=cispo']);
  for (const c of shown) {
    expect(c.seeds).toBe('2 of 2 seeds done');
    expect(c.final).toBeGreaterThanOrEqual(0);
    expect(c.final).toBeLessThanOrEqual(100);
    // No filtering: every iteration rolls out batch x group = 16 trajectories.
    expect(c.rollouts).toBe(16);
    expect(c.crash).toMatch(/^(no crash on 2 seeds|✖ crashed on [12] of 2 seeds, at iterations? [\d, ]+)$/);
  }
  // The curve: one point per iteration, 15, from the mean over the 2 seeds.
  const points = await grid.getByTestId('arena-cell').first().locator('svg.sparkline:not(.diag) polyline').getAttribute('points');
  expect(points?.trim().split(/\s+/)).toHaveLength(15);
  // The diagnosis peak is a percentage once the trainer reports the metric, a dash before.
  const diagShown = (SCALAR_METRICS as readonly string[]).includes(DIAG_METRIC) ? /^\d+%$/ : /^–$/;
  for (const d of await grid.getByTestId('arena-diag').allTextContents()) expect(d).toMatch(diagShown);
  await view.screenshot({ path: `${SCREENS_DIR}arena-grid.png` });
  // The arena is its own view and keeps the page's one screen at 1366 x 900 (the grid scrolls inside).
  expect(await page.evaluate(() => document.documentElement.scrollHeight)).toBeLessThanOrEqual(900);
  await page.screenshot({ path: `${SCREENS_DIR}arena-page.png` });

  // Sorted by final success, the cards' own numbers descend.
  await view.getByLabel('Sort by').selectOption('success');
  const sorted = await cards(grid);
  expect(sorted.map((c) => c.final)).toEqual([...shown.map((c) => c.final)].sort((a, b) => b - a));
  const crashedCount = shown.filter((c) => c.crash.includes('crashed on')).length;
  await view.getByLabel('Show').selectOption('crashed');
  await expect(grid.getByTestId('arena-cell')).toHaveCount(crashedCount);
  await view.getByLabel('Show').selectOption('all');

  // The link holds the arena while the view is open.
  await expect.poll(() => decodeURIComponent(new URL(page.url()).hash)).toContain(`arena=${SPEC}`);
  // So does the link Share copies.
  await page.getByRole('button', { name: 'Share', exact: true }).click();
  await expect.poll(async () => decodeURIComponent(await page.getByRole('textbox', { name: 'Share link' }).inputValue())).toContain(`arena=${SPEC}`);
  await page.getByRole('dialog', { name: 'Share link' }).getByRole('button', { name: 'Close', exact: true }).click();

  // A card opens its run (first seed) in the Train view.
  await grid.getByRole('button', { name: 'Open clip=cispo in the Train view' }).click();
  await expect(page.getByRole('tab', { name: 'Train' })).toHaveAttribute('aria-selected', 'true');
  await expect(page).toHaveURL(/methods=(cispo,grpo|grpo,cispo)/);
  await expect(page).toHaveURL(/lossAgg=seq-mean-token-mean/);
  await expect(page).not.toHaveURL(/arena=/);
  await expect(page.getByTestId('backend-status')).toHaveText(/^CPU/, { timeout: 60_000 });
  await page.screenshot({ path: `${SCREENS_DIR}arena-opened-cell.png` });
  expect(errors).toEqual([]);
});

test('a bad arena in a link is named in the notice, and the rest of the link applies', async ({ page }) => {
  await page.goto('/#v=1&seed=5&arena=task=nope;iters=15');
  const notice = page.getByTestId('link-notice');
  await expect(notice).toContainText('arena');
  await expect(notice).toContainText('task');
  await expect(page.getByRole('tab', { name: 'Train' })).toHaveAttribute('aria-selected', 'true');
  await expect(page).toHaveURL(/seed=5/);
  await notice.screenshot({ path: `${SCREENS_DIR}arena-bad-link.png` });
});

test('Stop ends the runs and keeps what arrived', async ({ page }) => {
  await page.goto(`/#v=1&arena=${SPEC.replace('iters=15', 'iters=400')}`);
  const view = page.getByRole('tabpanel', { name: 'Arena' });
  await view.getByRole('button', { name: 'Run 2 × 2 runs' }).click();
  const progress = view.getByTestId('arena-progress');
  await expect(progress).toHaveText(/0 of 4 runs, ([3-9]|\d\d+) of 1600 iterations/, { timeout: 60_000 });
  await view.getByRole('button', { name: 'Stop' }).click();
  await expect(view.getByRole('button', { name: 'Run 2 × 2 runs' })).toBeVisible();
  const stoppedAt = await progress.textContent();
  // No worker is left to send rows: the count is the same a while later.
  await page.waitForTimeout(2_000);
  await expect(progress).toHaveText(stoppedAt!);
  expect(Number(/(\d+) of 1600/.exec(stoppedAt!)![1])).toBeLessThan(1600);
  await expect(view.getByTestId('arena-cell').first()).toContainText('0 of 2 seeds done');
});

test('a non-finite update is a crash: marked on its cell, counted, sorted first and kept by the crashed filter', async ({ page }) => {
  // Three cores: two pool workers, the runs of both cells side by side.
  await page.addInitScript(() => Object.defineProperty(Navigator.prototype, 'hardwareConcurrency', { get: () => 3 }));
  await page.goto(`/#v=1&arena=${SPEC.replace('iters=15', 'iters=25')}`);
  const view = page.getByRole('tabpanel', { name: 'Arena' });
  await expect(view).toContainText('2 workers at once');
  // Armed before Run: the NaN goes to CISPO's seed-1 run once it reports iteration 2, however fast
  // the machine (a call after the run shows up could arrive after a short run ended).
  await page.evaluate(() => window.__arenaArmNaN!('cispo.none.trajectory.seq-mean-token-mean', 1, 2));
  await view.getByRole('button', { name: 'Run 2 × 2 runs' }).click();
  const grid = view.getByRole('list', { name: 'Cells' });
  const token = grid.locator('[data-cell="token.none.trajectory.seq-mean-token-mean"]');
  const cispo = grid.locator('[data-cell="cispo.none.trajectory.seq-mean-token-mean"]');
  await expect(view.getByTestId('arena-progress')).toHaveText(/4 of 4 runs/, { timeout: 150_000 });
  await expect(cispo.getByTestId('arena-crash')).toHaveText(/^✖ crashed on 1 of 2 seeds, at iteration \d+$/);
  await expect(cispo.locator('svg.sparkline line.sparkline-mark')).toHaveCount(1);
  await expect(cispo.getByTestId('arena-crash')).toHaveAttribute('title', /went non-finite/);
  // The reason is on the card itself, not only in its tooltip.
  await expect(cispo.getByTestId('arena-why')).toHaveText(/^Why: .*went non-finite/);
  await expect(token.getByTestId('arena-crash')).toHaveText('no crash on 2 seeds');
  await expect(grid.locator('.arena-cell-label')).toHaveText(['clip=token', 'clip=cispo']);
  await view.getByLabel('Sort by').selectOption('crashes');
  await expect(grid.locator('.arena-cell-label')).toHaveText(['clip=cispo', 'clip=token']);
  await view.getByLabel('Show').selectOption('crashed');
  await expect(grid.locator('.arena-cell-label')).toHaveText(['clip=cispo']);
  await view.screenshot({ path: `${SCREENS_DIR}arena-crash.png` });
  await page.getByRole('button', { name: 'Dark theme' }).click();
  await view.screenshot({ path: `${SCREENS_DIR}arena-crash-dark.png` });
  await view.getByLabel('Show').selectOption('stable');
  await expect(grid.locator('.arena-cell-label')).toHaveText(['clip=token']);
});

test('the rollout correction is a fifth level picker: picking Token-TIS adds its cell, both run, and the link carries it', async ({ page }) => {
  const errors = collectPageErrors(page);
  // Written before the dimension existed: it opens at no correction. A bf16, top-p 0.8 sampler gives the weights something to do.
  const old = 'task=search;iters=3;seeds=1;clip=token;filter=none;advantage=trajectory;aggregation=token-mean;set.batch=4;set.group=4;set.rollout.precision=bf16;set.rollout.topP=0.8';
  await page.goto(`/#v=1&arena=${old}`);
  const view = page.getByRole('tabpanel', { name: 'Arena' });
  const dim = view.getByRole('group', { name: 'rollout correction' });
  await expect(dim.getByRole('checkbox')).toHaveCount(7);
  // The one level picked cannot be unpicked (a dimension needs one).
  await expect(dim.getByRole('checkbox', { name: 'no correction', exact: true })).toBeChecked();
  await expect(dim.getByRole('checkbox', { name: 'no correction', exact: true })).toBeDisabled();
  const grid = view.getByRole('list', { name: 'Cells' });
  await expect(grid.locator('[data-cell="token.none.trajectory.token-mean"]')).toHaveCount(1);

  await dim.getByRole('checkbox', { name: 'token IS weight (Token-TIS)', exact: true }).check();
  await expect(grid.locator('.arena-cell-label')).toHaveText(['correction=none', 'correction=tis']);
  await expect(grid.locator('[data-cell="token.none.trajectory.token-mean.tis"]')).toHaveCount(1);
  await expect.poll(() => decodeURIComponent(new URL(page.url()).hash)).toContain(`arena=${old.replace(';set.', ';correction=none,tis;set.')}`);

  await view.getByRole('button', { name: 'Run 2 × 1 runs' }).click();
  await expect(view.getByTestId('arena-progress')).toHaveText(/2 of 2 runs, 6 of 6 iterations/, { timeout: 120_000 });
  await expect(view.getByTestId('arena-seeds')).toHaveText(['1 of 1 seeds done', '1 of 1 seeds done']);
  await expect(view.getByRole('alert')).toHaveCount(0);
  await view.screenshot({ path: `${SCREENS_DIR}arena-correction.png` });
  expect(await page.evaluate(() => document.documentElement.scrollHeight)).toBeLessThanOrEqual(900);
  expect(errors).toEqual([]);
});
