/**
 * The explainer against the WebGPU backend (SwiftShader here): the batch a GPU run trained on,
 * exported from the page, rederived number for number by the explainer (every token's advantage,
 * ratio, clip, KL and loss; turn rewards; rewards; the batch loss) agrees to float32 rounding, the
 * GPU's own float32 arithmetic included; and the page's Explain panel says so for a token.
 */
import { expect, test, type Page } from '@playwright/test';
import { readFileSync } from 'node:fs';
import { checkAll } from '../../workers/explain';
import type { BatchDump } from '../../workers/formats/batchDump';
import { collectPageErrors, SCREENS_DIR } from './util';

const BASE = 'v=1&seed=3&batch=3&group=4&model.hidden=16&epochs=2&minibatches=2&klCoef=0.01&backend=gpu&step=2';

async function gpuDump(page: Page, methods: string): Promise<BatchDump> {
  await page.goto(`/#${BASE}&${methods}&explain=2.7.0`);
  await expect(page.getByTestId('backend-status')).toHaveText(/^WebGPU: /, { timeout: 60_000 });
  await expect(page.getByTestId('iter')).toHaveText('2', { timeout: 120_000 });
  const d = page.getByRole('dialog', { name: /^Explain/ });
  await expect(d).toHaveAttribute('data-status', 'checked', { timeout: 60_000 });
  await page.getByText('Export', { exact: true }).click();
  const [dl] = await Promise.all([page.waitForEvent('download'), page.getByRole('menuitem', { name: 'Batch as JSON (last iteration)' }).click()]);
  return JSON.parse(readFileSync(await dl.path(), 'utf8')) as BatchDump;
}

for (const methods of ['methods=grpo', 'methods=igpo', 'methods=reinforcepp', 'methods=grpo,gspo', 'methods=gigpo', 'methods=otb']) {
  test(`a WebGPU batch, every number explained: ${methods}`, async ({ page }) => {
    const errors = collectPageErrors(page);
    const dump = await gpuDump(page, methods);
    const { checks } = checkAll(dump);
    const tokens = dump.trajs.reduce((a, t) => a + t.tokens.length, 0);
    expect(checks.filter((c) => c.ref.kind === 'token').length).toBeGreaterThanOrEqual(5 * tokens);
    expect(checks.filter((c) => !c.ok).map((c) => `${JSON.stringify(c.ref)}: ${c.value} vs ${c.trainer}`)).toEqual([]);
    if (methods === 'methods=igpo') await page.screenshot({ path: `${SCREENS_DIR}explain-webgpu-igpo.png` });
    expect(errors).toEqual([]);
  });
}
