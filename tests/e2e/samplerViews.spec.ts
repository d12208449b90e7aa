/**
 * The sampler's views in the built page on the CPU backend: a link that sets the sampler apart from
 * the trainer (bf16 logits, top-p 0.8) runs to its step, and the mismatch chart, the mismatch
 * histogram and its heatmap over iterations show the trainer's log-probs below the sampler's, while
 * PPO's ratio stays exactly 1 (one epoch, one minibatch: the trainer never reuses the batch). The
 * same link without the sampler settings shows every mismatch at exactly 0. A heatmap cell opens
 * the tokens in its bin. Screenshots go to test-results/screens/sampler-*.png.
 */
import { expect, test, type Locator, type Page } from '@playwright/test';
import { readFileSync } from 'node:fs';
import { EXTRA_CHART_IDS } from '../../app/lessons/charts';
import { collectPageErrors, removeWebGpu, SCREENS_DIR } from './util';

const BASE = 'v=1&seed=3&batch=3&group=4&model.hidden=16';
const SAMPLER = 'rollout.precision=bf16&rollout.topP=0.8';
const ITERS = 3;
/** The bin of [0, 1/24): log-ratios of exactly 0 (24 bins over [-0.5, 0.5]). */
const ZERO_BIN = 12;

test.beforeEach(async ({ page, context }) => {
  await removeWebGpu(page, context);
});

async function openRun(page: Page, set: string): Promise<void> {
  await page.goto(`/#${BASE}${set ? `&${set}` : ''}&step=${ITERS}`);
  await expect(page.getByTestId('iter')).toHaveText(String(ITERS), { timeout: 90_000 });
  await expect(page.getByTestId('phase')).toHaveText(new RegExp(`paused at step ${ITERS}`));
  await page.getByTestId('more-charts').locator('summary').click();
}

type Row = Record<string, number> & { mismatch_hist: number[] };

/** The whole-run export: the run file, its metric rows at full precision. */
async function exportedRun(page: Page): Promise<{ metrics: Row[] } & Record<string, unknown>> {
  await page.getByText('Export', { exact: true }).click();
  const [dl] = await Promise.all([page.waitForEvent('download'), page.getByRole('menuitem', { name: /Whole run as JSON/ }).click()]);
  return JSON.parse(readFileSync(await dl.path(), 'utf8'));
}
const exportedRows = async (page: Page) => (await exportedRun(page)).metrics;

/** Opens a chart's data table and reads its body: one array of cell texts per row (row headers included). */
async function tableOf(chart: Locator, name: string): Promise<string[][]> {
  await chart.getByRole('button', { name: `Show the ${name} data as a table` }).click();
  const rows = chart.getByRole('table').locator('tbody tr');
  await expect(rows.first()).toBeVisible();
  return rows.evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('th, td')].map((c) => c.textContent ?? '')));
}

/** Column `name`'s numbers in a line chart's table. */
async function column(chart: Locator, title: string, name: string): Promise<number[]> {
  const rows = await tableOf(chart, title);
  const keys = await chart.getByRole('table').getByRole('columnheader').allTextContents();
  return rows.map((r) => Number(r[keys.indexOf(name)]));
}

const offZero = (counts: number[]) => counts.reduce((a, c, b) => a + (b === ZERO_BIN ? 0 : c), 0);

/** Every distribution chart a lesson may name is a figure of the charts panel under its `chart-<id>`, as presenter mode's style finds it. */
async function expectDistributionCharts(page: Page): Promise<void> {
  for (const id of EXTRA_CHART_IDS) await expect(page.locator(`.charts figure.chart[data-testid="chart-${id}"]`), id).toHaveCount(1);
}

test('a sampler apart from the trainer (bf16, top-p 0.8): mismatch below 0 in the chart, histogram and heatmap; the IS ratio exactly 1; a heatmap cell lists its tokens', async ({ page }) => {
  const errors = collectPageErrors(page);
  await openRun(page, SAMPLER);
  await expectDistributionCharts(page);

  // Top-p gives the drawn tokens more probability than the trainer does: the mean log-ratio is below 0.
  const logratio = await column(page.getByTestId('chart-mismatch'), 'Sampler vs trainer mismatch', 'mismatch_logratio');
  expect(logratio).toHaveLength(ITERS);
  for (const x of logratio) expect(x).toBeLessThan(-1e-3);

  // The histogram of the last iteration: tokens off the 0 bin, and none above it.
  const histChart = page.getByTestId('chart-mismatch-hist');
  await expect(histChart).toHaveAttribute('data-points', '24');
  const hist = (await tableOf(histChart, `Sampler mismatch histogram (iteration ${ITERS})`)).map((r) => Number(r[2]));
  expect(hist).toHaveLength(24);
  expect(offZero(hist)).toBeGreaterThan(0);

  // The heatmap: one column per iteration, each with tokens off the 0 bin.
  const heat = page.getByTestId('chart-mismatch-heatmap');
  await expect(heat).toHaveAttribute('data-iterations', String(ITERS));
  await expect(heat).toHaveAttribute('data-bins', '24');
  await expect(heat).toHaveAttribute('title', /top-p or top-k truncation puts it below 0/);
  await expect(heat.getByRole('img', { name: new RegExp(`^Sampler mismatch distribution over iterations: ${ITERS} iterations \\(columns\\) by 24 bins`) })).toBeVisible();
  const heatRows = await tableOf(heat, 'Sampler mismatch distribution over iterations');
  expect(heatRows.map((r) => Number(r[0]))).toEqual([1, 2, 3]);
  const columns = heatRows.map((r) => r.slice(1).map(Number));
  for (const c of columns) expect(offZero(c)).toBeGreaterThan(0);
  // The heatmap's last column is the histogram.
  expect(columns[ITERS - 1]).toEqual(hist);

  // PPO's ratio: exactly 1 at 1 epoch and 1 minibatch. The sampler's mismatch is not in it.
  const ratioMax = await column(page.getByTestId('chart-ratio'), 'Importance-sampling (IS) ratio', 'ratio_max');
  expect(ratioMax).toEqual([1, 1, 1]);
  const rows = await exportedRows(page);
  expect(rows.map((r) => [r.ratio_min, r.ratio_max])).toEqual([[1, 1], [1, 1], [1, 1]]);
  for (const r of rows) {
    expect(r.mismatch_logratio).toBeLessThan(0);
    expect(r.mismatch_hist.reduce((a, c) => a + c, 0)).toBe(r.tokens);
  }
  expect(rows.map((r) => r.mismatch_hist)).toEqual(columns);

  await heat.scrollIntoViewIfNeeded();
  await page.getByTestId('more-charts').screenshot({ path: `${SCREENS_DIR}sampler-more-charts.png` });
  await heat.screenshot({ path: `${SCREENS_DIR}sampler-heatmap.png` });

  // The fullest bin off 0 of the last iteration: its explanation lists its tokens, counted as the row counts them.
  const last = columns[ITERS - 1]!;
  let bin = -1;
  last.forEach((c, b) => {
    if (b !== ZERO_BIN && (bin < 0 || c > last[bin]!)) bin = b;
  });
  expect(last[bin]).toBeGreaterThan(0);
  await heat.getByRole('button', { name: `iteration ${ITERS}, bin ${bin + 1}: ${last[bin]} tokens: explain` }).click();
  const d = page.getByRole('dialog', { name: /^Explain/ });
  await expect(d).toBeVisible({ timeout: 30_000 });
  await expect(d.getByRole('heading', { level: 2 })).toHaveText(`Explain: Sampler mismatch histogram, iteration ${ITERS}, bin ${bin + 1}`);
  await expect(d).toHaveAttribute('data-status', 'checked');
  await expect(d.getByTestId('explain-value')).toHaveText(String(last[bin]));
  const chips = d.locator('.chip-button');
  await expect(chips).toHaveCount(Math.min(last[bin]!, 200));
  await expect(chips.first()).toHaveAccessibleName(/^#\d+ t\d+ .+: explain$/);
  await page.screenshot({ path: `${SCREENS_DIR}sampler-explain-cell.png` });
  // A listed token opens its rollout log-prob, with the trainer's beside it.
  await chips.first().click();
  await expect(d.getByRole('heading', { level: 2 })).toHaveText(/^Explain: Rollout log-prob of token \d+ \(.*\) of trajectory \d+$/);
  await expect(d).toHaveAttribute('data-status', 'input');
  await expect(d).toContainText('log π_old − log μ =');
  await page.screenshot({ path: `${SCREENS_DIR}sampler-explain-token.png` });
  expect(errors).toEqual([]);
});

test('the sampler is the trainer (the defaults): every mismatch exactly 0, every token in the 0 bin', async ({ page }) => {
  const errors = collectPageErrors(page);
  await openRun(page, '');
  await expectDistributionCharts(page);

  const logratio = await column(page.getByTestId('chart-mismatch'), 'Sampler vs trainer mismatch', 'mismatch_logratio');
  expect(logratio).toEqual([0, 0, 0]);
  const hist = (await tableOf(page.getByTestId('chart-mismatch-hist'), `Sampler mismatch histogram (iteration ${ITERS})`)).map((r) => Number(r[2]));
  expect(offZero(hist)).toBe(0);
  expect(hist[ZERO_BIN]).toBeGreaterThan(0);

  const heat = page.getByTestId('chart-mismatch-heatmap');
  await expect(heat).toHaveAttribute('data-iterations', String(ITERS));
  const columns = (await tableOf(heat, 'Sampler mismatch distribution over iterations')).map((r) => r.slice(1).map(Number));
  for (const c of columns) {
    expect(offZero(c)).toBe(0);
    expect(c[ZERO_BIN]).toBeGreaterThan(0);
  }

  const run = await exportedRun(page);
  const rows = run.metrics;
  for (const r of rows) {
    expect([r.mismatch_logratio, r.mismatch_k3_kl, r.mismatch_chi2_token, r.mismatch_chi2_seq, r.mismatch_ppl_ratio, r.ratio_max]).toEqual([0, 0, 0, 0, 1, 1]);
    expect(r.mismatch_hist[ZERO_BIN]).toBe(r.tokens);
  }
  await heat.scrollIntoViewIfNeeded();
  await page.getByTestId('more-charts').screenshot({ path: `${SCREENS_DIR}sampler-defaults.png` });

  // A click on the map's last column, in the 0 bin's row (13th of 24 from the bottom).
  const canvas = heat.locator('canvas');
  const box = (await canvas.boundingBox())!;
  await page.mouse.click(box.x + box.width - 3, box.y + box.height * (1 - (ZERO_BIN + 0.5) / 24));
  const d = page.getByRole('dialog', { name: /^Explain/ });
  await expect(d.getByRole('heading', { level: 2 })).toHaveText(`Explain: Sampler mismatch histogram, iteration ${ITERS}, bin ${ZERO_BIN + 1}`, { timeout: 30_000 });
  await expect(d).toHaveAttribute('data-status', 'checked');
  await expect(d.getByTestId('explain-value')).toHaveText(String(rows[ITERS - 1]!.tokens));
  await d.getByRole('button', { name: 'Close the explanation' }).click();

  // A run file from before the sampler's histogram was recorded: its heatmap says so, the others draw.
  const older = { ...run, metrics: rows.map(({ mismatch_hist: _h, mismatch_hist_edges: _e, ...r }) => r) };
  await page.getByTestId('import-file').setInputFiles({ name: 'older.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(older)) });
  await expect(page.getByTestId('imported-banner')).toContainText('older.json');
  await expect(heat.getByRole('img', { name: `Sampler mismatch distribution over iterations: none of the ${ITERS} iterations holds this histogram (a run file from before it was recorded, or an imported log).` })).toBeVisible();
  await expect(heat).toHaveAttribute('data-iterations', '0');
  await expect(page.getByTestId('chart-ratio-heatmap')).toHaveAttribute('data-iterations', String(ITERS));
  await expect(page.getByTestId('chart-mismatch-hist')).toHaveAttribute('data-points', '0');
  await heat.scrollIntoViewIfNeeded();
  await page.getByTestId('more-charts').screenshot({ path: `${SCREENS_DIR}sampler-older-run.png` });
  expect(errors).toEqual([]);
});
