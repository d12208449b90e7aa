/** Shared e2e helpers: reading chart point counts, removing WebGPU, screenshot paths. */
import { expect, type BrowserContext, type Page } from '@playwright/test';
import { fileURLToPath } from 'node:url';

export const SCREENS_DIR = fileURLToPath(new URL('../../test-results/screens/', import.meta.url));

/** The number of points a chart shows (its data-points attribute). */
export async function chartPoints(page: Page, testId: string): Promise<number> {
  const v = await page.getByTestId(testId).getAttribute('data-points');
  return Number(v ?? 0);
}

/**
 * Removes WebGPU from the page and from the trainer worker. `--disable-webgpu` alone leaves
 * `navigator.gpu` defined (requestAdapter() then resolves null), so the specs delete the attribute:
 * in the page with an init script, in the worker by prepending the same to its script (init scripts
 * do not run in workers).
 */
export async function removeWebGpu(page: Page, context: BrowserContext): Promise<void> {
  await page.addInitScript(() => {
    delete (Navigator.prototype as { gpu?: unknown }).gpu;
  });
  await context.route(/\/assets\/trainer\.worker[^/]*\.js(\?.*)?$/, async (route) => {
    const response = await route.fetch();
    const body = await response.text();
    const prelude = 'delete WorkerNavigator.prototype.gpu;\n';
    await route.fulfill({ response, body: prelude + body });
  });
}

/** Collects uncaught page errors so a test can assert there were none. */
export function collectPageErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  return errors;
}

/** Waits until the run is idle: Start is enabled again. */
export async function waitIdle(page: Page): Promise<void> {
  await expect(page.getByRole('button', { name: 'Start' })).toBeEnabled({ timeout: 60_000 });
}

/**
 * After an edit in the page: the run rebuilt with it and idle. An edit waits 250 ms for the next
 * before the rebuild starts, so Start is still enabled right after it; a Step clicked then can land
 * as the rebuild disables the buttons, and is lost.
 */
export async function waitRebuilt(page: Page): Promise<void> {
  await expect(page.getByTestId('phase')).toHaveAttribute('data-config-pending', 'false', { timeout: 60_000 });
  await waitIdle(page);
}

/** The iteration counter's number. */
export async function iterShown(page: Page): Promise<number> {
  return Number((await page.getByTestId('iter').textContent())?.match(/\d+/)?.[0] ?? NaN);
}

/** Opens a small run on the given backend, starts it and waits for `points` iterations. */
export async function startAndWait(page: Page, backend: 'cpu' | 'gpu', points: number): Promise<void> {
  await page.goto('/#v=1&batch=4&group=4');
  await page.getByLabel('Backend').selectOption(backend);
  await expect(page.getByTestId('backend-status')).toHaveText(backend === 'gpu' ? /^WebGPU/ : /^CPU/, { timeout: 60_000 });
  await page.getByRole('button', { name: 'Start' }).click();
  await expect.poll(() => chartPoints(page, 'chart-reward'), { timeout: 120_000 }).toBeGreaterThanOrEqual(points);
}

/** Every iteration shown once: the last iteration equals the number of points. */
export async function expectContiguous(page: Page): Promise<void> {
  await expect.poll(async () => (await iterShown(page)) === (await chartPoints(page, 'chart-reward'))).toBe(true);
}

/** Answers the prompt a costly link raises before anything is built: build (and run) it. */
export async function buildHeldLink(page: Page): Promise<void> {
  await page.getByTestId('link-cost-prompt').getByRole('button', { name: /^Build/ }).click();
}
