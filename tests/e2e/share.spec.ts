/**
 * Share links, classroom links and export/import, end to end on the CPU backend (fast and the
 * same numbers as the CLI): a step-addressable link pauses at its step with its focus open; a bad
 * link names its problems and still applies the rest; a link never runs script; the address bar
 * follows the knobs; a run exported as JSON imports into a fresh page with the same metrics.
 */
import { expect, test, type Page } from '@playwright/test';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { SCALAR_METRICS } from '../../workers/core/metrics';
import { chartPoints, collectPageErrors, removeWebGpu, SCREENS_DIR, waitIdle } from './util';

const STEP_LINK = '/#v=1&seed=3&batch=4&group=4&step=3&focus=traj:2';

test.beforeEach(async ({ page, context }) => {
  await removeWebGpu(page, context);
});

/** Fails the test if the page opens any dialog (alert, confirm, prompt). */
function forbidDialogs(page: Page): string[] {
  const dialogs: string[] = [];
  page.on('dialog', (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
  return dialogs;
}

async function download(page: Page, click: () => Promise<void>): Promise<{ name: string; text: string; bytes: Buffer }> {
  const [dl] = await Promise.all([page.waitForEvent('download'), click()]);
  const path = await dl.path();
  const bytes = readFileSync(path);
  return { name: dl.suggestedFilename(), text: bytes.toString('utf8'), bytes };
}

async function exportItem(page: Page, name: string) {
  await page.getByText('Export', { exact: true }).click();
  await page.getByRole('menuitem', { name }).click();
}

test('a step-addressable link runs to its step, pauses there, and opens its trajectory', async ({ page }) => {
  const errors = collectPageErrors(page);
  const dialogs = forbidDialogs(page);
  await page.goto(STEP_LINK);
  await expect(page.getByTestId('iter')).toHaveText('3', { timeout: 60_000 });
  await expect(page.getByTestId('phase')).toHaveText(/paused at step 3/);
  await expect(page.getByLabel('prompts per batch', { exact: true })).toHaveValue('4');
  await expect(page.getByLabel('seed', { exact: true })).toHaveValue('3');

  const traj = page.getByTestId('trajectory-view');
  await expect(traj).toBeVisible();
  await expect(traj).toHaveAttribute('data-traj', '2');
  await expect(traj.getByRole('heading', { name: 'Trajectory 2' })).toBeVisible();
  await expect(page.getByTestId('traj-summary')).toContainText('Iteration 3 · group 0, rollout 2 of 4');
  await expect(traj.locator('table.tokens').first()).toBeVisible();
  // The group view shows the reward matrix of the same batch, with trajectory 2 selected.
  await expect(page.getByTestId('reward-matrix').locator('tbody tr')).toHaveCount(4);
  await expect(page.getByRole('button', { name: /^trajectory 2, reward/ })).toHaveClass(/selected/);
  // The matrix's one tab stop is the open trajectory's cell.
  await expect(page.getByTestId('reward-matrix').locator('button[tabindex="0"]')).toHaveAccessibleName(/^trajectory 2, reward/);

  // It stays paused at 3.
  await page.waitForTimeout(1000);
  await expect(page.getByTestId('iter')).toHaveText('3');
  expect(await chartPoints(page, 'chart-reward')).toBe(3);
  expect(new URL(page.url()).hash).toBe('#v=1&seed=3&batch=4&group=4&step=3&focus=traj:2');
  await page.screenshot({ path: `${SCREENS_DIR}share-step-link.png`, fullPage: true });

  // Reproducible: the CLI given the same link prints the same numbers as the page shows.
  const page_ = await download(page, () => exportItem(page, 'Metrics as JSON'));
  expect(page_.name).toMatch(/^rl-playground-seed3-iter3-metrics\.json$/);
  const rows = JSON.parse(page_.text) as Array<Record<string, number>>;
  const cli = spawnSync('npx', ['tsx', '--import', './cli/registerRaw.mjs', 'cli/train.ts', '--url', STEP_LINK.slice(1)], { encoding: 'utf8' });
  expect(cli.status, cli.stderr).toBe(0);
  const cliRows = cli.stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, number>);
  expect(cliRows).toHaveLength(3);
  for (let i = 0; i < 3; i++) {
    for (const m of SCALAR_METRICS) if (m !== 'ms') expect(rows[i]![m], `${m} at iteration ${i + 1}`).toBe(cliRows[i]![m]);
  }

  // focus=group:G opens the group instead.
  await page.goto('/#v=1&seed=3&batch=4&group=4&step=2&focus=group:1');
  await expect(page.getByTestId('iter')).toHaveText('2', { timeout: 60_000 });
  await expect(page.getByTestId('group-detail')).toHaveAttribute('data-group', '1');
  await expect(page.getByTestId('trajectory-view')).toHaveCount(0);
  // Clicking a trajectory of the group opens it, and the address bar follows.
  await page.getByTestId('group-detail').getByRole('button', { name: '5', exact: true }).click();
  await expect(page.getByTestId('trajectory-view')).toHaveAttribute('data-traj', '5');
  await expect.poll(() => new URL(page.url()).hash).toContain('focus=traj:5');

  // A classroom link: the settings panels hidden, the run paused at its step with a group open.
  await page.goto('/#v=1&seed=3&batch=4&group=4&step=5&focus=group:2&hide=run,task,methods,batchlab');
  await expect(page.getByTestId('group-detail')).toHaveAttribute('data-group', '2', { timeout: 60_000 });
  await expect(page.getByRole('heading', { name: 'Group view: rewards of iteration 5' })).toBeVisible();
  for (const name of ['Run', 'Methods', 'Batch lab']) await expect(page.getByRole('heading', { name, exact: true })).toHaveCount(0);
  await expect(page.getByRole('button', { name: 'Start' })).toHaveCount(0);
  await expect(page.getByTestId('hidden-note')).toContainText('Hidden by this link: run, task, methods, batchlab.');
  expect(await chartPoints(page, 'chart-reward')).toBe(5);
  await page.screenshot({ path: `${SCREENS_DIR}share-classroom-link.png`, fullPage: true });

  expect(dialogs).toEqual([]);
  expect(errors).toEqual([]);
});

test('a bad link names each problem in a notice, and the rest of it applies', async ({ page }) => {
  const errors = collectPageErrors(page);
  const dialogs = forbidDialogs(page);
  await page.goto('/#v=1&seed=x1&batch=4&bach=2&lossAgg=sum&grpo.scaleStd=false&focus=group:99&hide=methods,nope&methods=grpo,nope');
  const notice = page.getByTestId('link-notice');
  await expect(notice).toBeVisible();
  await expect(notice.getByRole('alert')).toContainText('This link has 6 problems; the rest of it was applied.');
  await expect(notice).toContainText('methods = “grpo,nope”: unknown method "nope"; expected some of grpo, drgrpo');
  await expect(notice).toContainText('seed = “x1”: expected an integer in [0, 2147483647]');
  await expect(notice).toContainText('bach = “2”: unknown key (did you mean batch?)');
  await expect(notice).toContainText('lossAgg = “sum”: expected one of token-mean');
  await expect(notice).toContainText('group 99 is outside this batch');
  await expect(notice).toContainText('unknown panel "nope"');
  // However long the list, the button keeps its label on one line (it wrapped to "Dismi ss").
  const dismiss = await notice.getByRole('button', { name: 'Dismiss' }).boundingBox();
  const share = await page.getByRole('button', { name: 'Share', exact: true }).boundingBox();
  expect(dismiss!.height).toBeLessThan(share!.height * 1.5);

  // The good keys applied: batch, the GRPO switch, and hiding the methods panel.
  await expect(page.getByLabel('prompts per batch', { exact: true })).toHaveValue('4');
  await expect(page.getByLabel('seed', { exact: true })).toHaveValue('1');
  await expect(page.getByRole('heading', { name: 'Methods' })).toHaveCount(0);
  await expect(page.getByTestId('hidden-note')).toContainText('Hidden by this link: methods.');
  await page.screenshot({ path: `${SCREENS_DIR}share-bad-link.png`, fullPage: true });
  await page.getByRole('button', { name: 'Show all panels' }).click();
  // The method cards are one click away on the one-screen page.
  await page.locator('summary', { hasText: 'All methods' }).click();
  await expect(page.getByRole('checkbox', { name: 'divide by group std' })).not.toBeChecked();
  await page.getByTestId('link-notice').getByRole('button', { name: 'Dismiss' }).click();
  await expect(page.getByTestId('link-notice')).toHaveCount(0);
  // The address bar now holds the link as applied: bad keys dropped.
  await expect.poll(() => new URL(page.url()).hash).toBe('#v=1&batch=4&grpo.scaleStd=false');

  // A newer version's link is refused as a whole, with a clear message.
  await page.goto('/#v=9&batch=2');
  await expect(page.getByTestId('link-notice')).toContainText('link version 9 is newer than this playground');
  await expect(page.getByLabel('prompts per batch', { exact: true })).toHaveValue('16');
  expect(dialogs).toEqual([]);
  expect(errors).toEqual([]);
});

test('a link with script payloads executes nothing and shows them as text', async ({ page }) => {
  const dialogs = forbidDialogs(page);
  const payloads = [
    '/#v=1&seed=<img src=x onerror="window.__xss=1;alert(1)">&batch=2',
    '/#v=1&<script>window.__xss=2</script>=1',
    '/#v=1&focus=traj:1"><svg/onload=window.__xss=3>&hide=<iframe src=javascript:alert(4)>',
    '/#v=1&methods=grpo,<b onmouseover=alert(5)>x</b>&__proto__[polluted]=1&constructor.prototype.polluted=1',
    `/#v=1&lossAgg=${encodeURIComponent('"><img src=x onerror=alert(6)>')}`,
  ];
  for (const url of payloads) {
    await page.goto('about:blank');
    await page.goto(url);
    const notice = page.getByTestId('link-notice');
    await expect(notice).toBeVisible();
    await expect(page.getByTestId('backend-status')).toHaveText(/^CPU fallback: /, { timeout: 60_000 });
    // Shown as text, never parsed as HTML.
    expect(await notice.locator('img, script, svg, iframe, b').count()).toBe(0);
    expect(await page.locator('#root img, #root iframe').count()).toBe(0);
    const flags = await page.evaluate(() => ({
      xss: (window as unknown as { __xss?: unknown }).__xss,
      polluted: ({} as Record<string, unknown>).polluted,
    }));
    expect(flags).toEqual({ xss: undefined, polluted: undefined });
  }
  await expect(page.getByTestId('link-notice')).toContainText('lossAgg = “"><img src=x onerror=alert(6)>”');
  expect(dialogs).toEqual([]);
});

test('the address bar follows the knobs without adding history, and Share copies the link', async ({ page, context }) => {
  await context.grantPermissions(['clipboard-read', 'clipboard-write']);
  const errors = collectPageErrors(page);
  await page.goto('/');
  await waitIdle(page);
  expect(new URL(page.url()).hash).toBe('#v=1');
  const historyBefore = await page.evaluate(() => history.length);
  const batch = page.getByLabel('prompts per batch', { exact: true });
  for (const v of ['2', '3', '4']) await batch.fill(v);
  await page.locator('summary', { hasText: 'All methods' }).click();
  await page.getByLabel('GRPO std epsilon', { exact: true }).fill('0.001');
  await expect.poll(() => new URL(page.url()).hash).toBe('#v=1&batch=4&grpo.eps=0.001');
  expect(await page.evaluate(() => history.length)).toBe(historyBefore);

  await page.getByRole('button', { name: 'Share' }).click();
  await expect(page.getByTestId('share-status')).toHaveText('Link copied to the clipboard.');
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(page.url());
  await expect(page.getByRole('textbox', { name: 'Share link' })).toHaveValue(page.url());
  // A classroom variant: hide the task panel.
  await page.getByRole('dialog', { name: 'Share link' }).getByRole('checkbox', { name: 'task' }).check();
  await expect(page.getByRole('textbox', { name: 'Share link' })).toHaveValue(/#v=1&batch=4&grpo\.eps=0\.001&hide=task$/);
  await expect(page.getByTestId('share-status')).toHaveText('Press “Copy link” to copy this link.');
  await page.getByRole('button', { name: 'Copy link' }).click();
  await expect(page.getByTestId('share-status')).toHaveText('Link copied to the clipboard.');
  expect(await page.evaluate(() => navigator.clipboard.readText())).toMatch(/#v=1&batch=4&grpo\.eps=0\.001&hide=task$/);
  await page.screenshot({ path: `${SCREENS_DIR}share-popover.png` });
  await page.getByRole('button', { name: 'Close', exact: true }).click();

  // Editing the hash by hand applies the new link.
  await page.evaluate(() => {
    location.hash = '#v=1&batch=5&group=2';
  });
  await expect(batch).toHaveValue('5');
  await expect(page.getByLabel('group size', { exact: true })).toHaveValue('2');

  // A link arriving while the page's own write of the address is due: a knob change schedules the
  // write, the new hash is set, and the main thread is held past the write's delay, so the write and
  // the hashchange are both due at once. The new link wins and stays in the address.
  await batch.fill('6');
  await batch.press('Tab');
  await page.evaluate(() => {
    location.hash = '#v=1&batch=7&group=3';
    const until = performance.now() + 600;
    while (performance.now() < until);
  });
  await expect(batch).toHaveValue('7');
  await expect(page.getByLabel('group size', { exact: true })).toHaveValue('3');
  await page.waitForTimeout(500);
  expect(new URL(page.url()).hash).toBe('#v=1&batch=7&group=3');
  expect(errors).toEqual([]);
});

test('Share shows the link in a field when the clipboard is refused', async ({ page }) => {
  await page.addInitScript(() => {
    Object.defineProperty(navigator, 'clipboard', { value: { writeText: () => Promise.reject(new Error('denied')) } });
  });
  await page.goto('/#v=1&seed=9');
  await page.getByRole('button', { name: 'Share' }).click();
  await expect(page.getByTestId('share-status')).toHaveText(/did not allow copying/);
  await expect(page.getByRole('textbox', { name: 'Share link' })).toHaveValue(/#v=1&seed=9$/);
});

test('export a run as JSON and import it in a fresh page: the same metrics, without re-running', async ({ page, context }) => {
  const errors = collectPageErrors(page);
  await page.goto('/#v=1&seed=5&batch=4&group=4&step=4');
  await expect(page.getByTestId('iter')).toHaveText('4', { timeout: 60_000 });
  await expect(page.getByTestId('reward-matrix')).toBeVisible();
  await page.getByText('Notes', { exact: true }).click();
  await page.getByLabel('Run notes').fill('Four iterations; note <b>not bold</b>.');
  const lastMetrics = await page.getByTestId('last-metrics').textContent();

  const run = await download(page, () => exportItem(page, 'Whole run as JSON (config, metrics, notes)'));
  expect(run.name).toBe('rl-playground-seed5-iter4-run.json');
  const json = JSON.parse(run.text);
  expect(json.format).toBe('agentic-rl-playground/run');
  expect(json.metrics).toHaveLength(4);
  expect(json.config.seed).toBe(5);
  expect(json.link).toBe('#v=1&seed=5&batch=4&group=4');
  expect(json.batch.iter).toBe(4);
  expect(json.notes).toContain('<b>not bold</b>');
  // The page's Content-Security-Policy lets the worker compile its WebAssembly backward pass.
  expect(json.backend).toEqual({ kind: 'cpu', label: 'CPU (TypeScript reference kernels; the backward pass as WebAssembly)' });

  // The other downloads: CSV, batch JSON, a chart as SVG and PNG.
  const csv = await download(page, () => exportItem(page, 'Metrics as CSV'));
  expect(csv.text.split('\n')[0]).toBe(SCALAR_METRICS.join(','));
  expect(csv.text.trim().split('\n')).toHaveLength(5);
  const batch = await download(page, () => exportItem(page, 'Batch as JSON (last iteration)'));
  expect(JSON.parse(batch.text)).toMatchObject({ version: 1, iter: 4 });
  expect(JSON.parse(batch.text).trajs).toHaveLength(16);
  const svg = await download(page, () => page.getByRole('button', { name: 'Download the Reward chart as SVG' }).click());
  expect(svg.name).toBe('rl-playground-seed5-iter4-reward.svg');
  expect(svg.text).toMatch(/^<svg[^>]*xmlns="http:\/\/www.w3.org\/2000\/svg"/);
  expect(svg.text).toContain('>Reward</text>');
  expect(Number(/^<svg[^>]* width="(\d+)"/.exec(svg.text)?.[1])).toBeGreaterThan(300);
  expect(svg.text).toContain('recharts-cartesian-grid');
  expect(svg.text).toMatch(/class="recharts-curve recharts-line-curve"/);
  // The legend names the metrics in words, as the chart on screen does.
  expect(svg.text).toContain('>Mean reward</text>');
  // The loss chart is among "More charts", one click away on the one-screen page.
  await page.getByTestId('more-charts').locator('summary').click();
  const png = await download(page, () => page.getByRole('button', { name: 'Download the Loss chart as PNG' }).click());
  expect(png.name).toBe('rl-playground-seed5-iter4-loss.png');
  expect(png.bytes.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
  expect(png.bytes.length).toBeGreaterThan(2000);
  writeFileSync(`${SCREENS_DIR}share-chart-loss.png`, png.bytes);
  writeFileSync(`${SCREENS_DIR}share-chart-reward.svg`, svg.bytes);

  // A fresh page imports it.
  const fresh = await context.newPage();
  const freshErrors = collectPageErrors(fresh);
  await fresh.goto('/');
  await waitIdle(fresh);
  await fresh.getByTestId('import-file').setInputFiles({ name: 'run.json', mimeType: 'application/json', buffer: run.bytes });
  const banner = fresh.getByTestId('imported-banner');
  await expect(banner).toContainText('Viewing an imported run from “run.json”: 4 iterations (to iteration 4), seed 5');
  await expect(fresh.getByTestId('iter')).toHaveText('4');
  await expect(fresh.getByTestId('phase')).toHaveText('imported: not re-run');
  expect(await chartPoints(fresh, 'chart-reward')).toBe(4);
  await expect(fresh.getByTestId('last-metrics')).toHaveText(lastMetrics!);
  await expect(fresh.getByRole('button', { name: 'Start' })).toBeDisabled();
  await expect(fresh.getByLabel('prompts per batch', { exact: true })).toHaveValue('4');
  await expect(fresh.getByLabel('Run notes')).toHaveValue('Four iterations; note <b>not bold</b>.');
  await expect(fresh.getByTestId('reward-matrix').locator('tbody tr')).toHaveCount(4);
  await expect.poll(() => new URL(fresh.url()).hash).toBe('#v=1&seed=5&batch=4&group=4');
  await fresh.screenshot({ path: `${SCREENS_DIR}share-imported-run.png`, fullPage: true });

  // Nothing ran: after a while the iteration is still 4.
  await fresh.waitForTimeout(800);
  await expect(fresh.getByTestId('iter')).toHaveText('4');

  // A bad file is refused with named errors, and the imported run stays.
  const bad = { ...json, metrics: [{ ...json.metrics[0], reward_mean: 'high' }], config: { ...json.config, model: { depth: 2 } } };
  await fresh.getByTestId('import-file').setInputFiles({ name: 'bad.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(bad)) });
  const importErrors = fresh.getByTestId('import-errors');
  await expect(importErrors).toContainText('Could not import “bad.json”: nothing was changed.');
  await expect(importErrors).toContainText('config: model.depth: unknown key');
  await expect(importErrors).toContainText('metrics[0].reward_mean');
  await fresh.getByTestId('import-file').setInputFiles({ name: 'junk.json', mimeType: 'application/json', buffer: Buffer.from('{ nope') });
  await expect(importErrors).toContainText('not valid JSON');
  await expect(banner).toBeVisible();

  // Back to a live run with the imported config.
  await fresh.getByRole('button', { name: 'Run this config live' }).click();
  await expect(banner).toHaveCount(0);
  await waitIdle(fresh);
  await expect(fresh.getByTestId('iter')).toHaveText('0');
  expect(errors).toEqual([]);
  expect(freshErrors).toEqual([]);
});

test('"Take it to a real run" shows verl overrides, a TRL GRPOConfig and what has no equivalent', async ({ page }) => {
  await page.goto('/#v=1&batch=4&group=4&klCoef=0.001&clipHigh=0.28');
  await page.getByRole('button', { name: 'Take it to a real run' }).click();
  const dialog = page.getByTestId('frameworks-dialog');
  await expect(dialog).toBeVisible();
  const verl = dialog.getByTestId('export-verl');
  for (const s of [
    'python3 -m verl.trainer.main_ppo',
    'algorithm.adv_estimator=grpo',
    // An LLM run's batch and learning rate, the toy's named in the notes.
    'data.train_batch_size=256',
    'actor_rollout_ref.actor.optim.lr=0.000001',
    'actor_rollout_ref.rollout.n=4',
    'actor_rollout_ref.actor.clip_ratio_high=0.28',
    'actor_rollout_ref.actor.use_kl_loss=True',
    'actor_rollout_ref.actor.kl_loss_coef=0.001',
    'actor_rollout_ref.actor.kl_loss_type=low_var_kl',
  ]) {
    await expect(verl).toContainText(s);
  }
  await expect(dialog.getByTestId('no-equivalent-verl')).toContainText('model.hidden');
  await expect(dialog).toContainText("the playground's 4 suits its toy tasks");
  await expect(dialog).toContainText("the playground's 0.005 is for its tiny MLP");
  await page.screenshot({ path: `${SCREENS_DIR}share-real-run.png` });
  await dialog.getByRole('tab', { name: 'TRL (GRPOConfig)' }).click();
  const trl = dialog.getByTestId('export-trl');
  for (const s of ['GRPOConfig(', 'num_generations=4,', 'epsilon_high=0.28,', 'beta=0.001,', 'loss_type="bnpo",', 'scale_rewards="group",']) {
    await expect(trl).toContainText(s);
  }
  await expect(dialog.getByTestId('no-equivalent-trl')).toContainText('grpo.eps');
  await dialog.getByRole('button', { name: 'Close' }).first().click();
  await expect(dialog).toHaveCount(0);
});
