/** The page loads and its controls are rendered from the config table and the method registry. */
import { expect, test } from '@playwright/test';
import { CONFIG_FIELDS } from '../../workers/core/config';
import { methodDef } from '../../workers/core/methods';
import { collectPageErrors } from './util';

test('controls render from CONFIG_FIELDS and the method registry', async ({ page }) => {
  const errors = collectPageErrors(page);
  await page.goto('/');
  await expect(page).toHaveTitle(/RL Playground/);
  for (const name of ['Start', 'Pause', 'Step', 'Reset']) {
    await expect(page.getByRole('button', { name, exact: true })).toBeVisible();
  }
  await expect(page.getByRole('heading', { name: /multi-turn search/ })).toBeVisible();
  // The one-screen page keeps the task's own settings and the model's one click away.
  await page.locator('summary', { hasText: "The task's own settings" }).click();
  await page.locator('summary', { hasText: 'Model, optimizer and loss settings' }).click();
  await page.locator('summary', { hasText: 'All methods' }).click();
  for (const key of ['seed', 'env.entities', 'env.attributes', 'env.values', 'env.maxTurns', 'batch', 'group', 'lr'] as const) {
    await expect(page.getByLabel(CONFIG_FIELDS[key].label, { exact: true })).toBeVisible();
  }
  await expect(page.getByLabel('prompts per batch', { exact: true })).toHaveValue('16');

  const grpo = methodDef('grpo');
  // An estimator's card is one choice of a radio group (the run has exactly one estimator).
  const methods = page.locator('section[aria-labelledby="methods-title"]');
  await expect(methods.getByRole('radio', { name: grpo.name, exact: true })).toBeChecked();
  await expect(page.getByText(grpo.idea)).toBeVisible();
  await expect(page.getByRole('link', { name: new RegExp(grpo.paper.replace('.', '\\.')) })).toHaveAttribute(
    'href',
    `https://arxiv.org/abs/${grpo.paper}`,
  );
  for (const spec of Object.values(grpo.params)) {
    await expect(page.getByLabel(`${grpo.name} ${spec.label}`, { exact: true })).toBeVisible();
  }

  // The trainer comes up and names its backend.
  await expect(page.getByRole('status')).toHaveText(/^(WebGPU|CPU fallback): /, { timeout: 60_000 });
  await expect(page.getByTestId('iter')).toHaveText('0');
  await expect(page.getByRole('alert')).toHaveCount(0);
  expect(errors).toEqual([]);
});
