/**
 * "Why it exists" on every method card, and one click from a card to the method's disease regime
 * (app/why/): the Compare tab opens with run A the paper's baseline in the diseased regime and run B
 * the method, and above it the regime's lines, measured on the mean over the lessons' seeds (trained
 * in workers beside the page on the CPU backend) and checked with the lessons' rule, with the
 * pathology chart first. Screenshots: test-results/screens/why-prorl.png (the regime) and
 * why-card-<method>.png (the card of a method with no disease found).
 *
 * The click test opens ProRL: its regime is the cheapest of those whose lines hold on the lessons'
 * seeds (12 runs of 100 iterations of the sequence task, about 25 s on two cores), so the spec stays short.
 */
import { expect, test } from '@playwright/test';
import { lessonSeeds } from '../../workers/content/lessons';
import { WHY, whyIds, whyLessonById, type WhyRegime } from '../../workers/content/why';
import { methodDef } from '../../workers/core/methods';
import { collectPageErrors, removeWebGpu, SCREENS_DIR } from './util';

test.beforeEach(async ({ page, context }) => {
  await removeWebGpu(page, context);
});

test('every paper method card says why it exists; a method with no disease found says so and opens what was tried', async ({ page }) => {
  const errors = collectPageErrors(page);
  await page.goto('/#v=1&batch=4&group=4');
  await expect(page.getByTestId('backend-status')).toHaveText(/^CPU/, { timeout: 60_000 });
  await page.locator('summary', { hasText: 'All methods' }).click();
  for (const r of Object.values(WHY) as WhyRegime[]) {
    const line = page.getByTestId(`why-line-${r.method}`);
    await expect(line, r.method).toContainText('Why it exists:');
    await expect(line, r.method).toContainText(r.why.slice(0, 40));
    if (r.found) await expect(line, r.method).not.toContainText('No disease was found');
    else await expect(line, r.method).toContainText('No disease was found for it on these toys');
  }
  // The baselines have no such line.
  for (const id of ['grpo', 'ppo', 'rloo']) await expect(page.getByTestId(`why-line-${id}`)).toHaveCount(0);
  expect(whyIds().length).toBe(22);

  // A method with no disease found opens its closest attempt, says so, and what was tried.
  const none = (Object.values(WHY) as WhyRegime[]).find((r) => !r.found)!;
  await page.getByTestId(`why-line-${none.method}`).locator('xpath=ancestor::article[1]').screenshot({ path: `${SCREENS_DIR}why-card-${none.method}.png` });
  await page.getByTestId(`why-line-${none.method}`).getByRole('button', { name: 'Show what was tried' }).click();
  const panel = page.getByTestId('why-panel');
  await expect(panel).toHaveAttribute('data-found', 'false');
  await expect(panel.getByTestId('why-none')).toContainText(`No disease was found for ${methodDef(none.method).name} on these toys`);
  await panel.locator('summary', { hasText: 'What was tried' }).click();
  await expect(panel.locator('.why-tried')).toContainText(none.tried!.slice(0, 40));
  await panel.getByRole('button', { name: /^Close why/ }).click();
  await expect(panel).toHaveCount(0);
  expect(errors).toEqual([]);
});

test('one click opens ProRL\'s disease regime as a Compare, its lines measured over the seeds and holding', async ({ page }) => {
  const errors = collectPageErrors(page);
  await page.goto('/#v=1&batch=4&group=4');
  await expect(page.getByTestId('backend-status')).toHaveText(/^CPU/, { timeout: 60_000 });
  await page.locator('summary', { hasText: 'All methods' }).click();
  await page.getByTestId('why-line-prorl').getByRole('button', { name: 'Show the disease and the cure' }).click();

  // The Compare tab, with A the diseased baseline and B the method on the same seed.
  await expect(page.getByRole('tab', { name: 'Compare' })).toHaveAttribute('aria-selected', 'true');
  const panel = page.getByTestId('why-panel');
  await expect(panel).toHaveAttribute('data-method', 'prorl');
  await expect(panel.getByRole('heading', { name: `Why ${methodDef('prorl').name} exists` })).toBeVisible();
  // Run B is run A with the method and its own knobs: nothing else differs.
  const diff = page.getByTestId('compare-diff');
  await expect(diff).toContainText('B differs from A in:');
  // One item per setting, named by its key (its label and both values in words inside).
  await expect(diff.getByRole('listitem')).toHaveCount(3);
  for (const key of ['methods', 'prorl.klCoef', 'prorl.resetEvery']) await expect(diff.getByRole('listitem', { name: key, exact: true })).toBeVisible();

  // Both lines measured on every seed, and holding on the mean over them.
  const lesson = whyLessonById('why-prorl')!;
  for (const row of ['disease', 'cure']) {
    const line = panel.getByTestId(`why-claim-${row}`);
    await expect(line, row).not.toHaveAttribute('data-state', 'pending', { timeout: 90_000 });
    await expect(line, `${row} holds`).toHaveAttribute('data-state', 'ok');
  }
  // The pathology chart comes first: step 1 charts the disease metric for the diseased and healthy baseline.
  const first = panel.getByTestId('why-step-1').locator('[data-testid^="lesson-seeds-chart-"]').first();
  await expect(first).toHaveAttribute('data-testid', `lesson-seeds-chart-${WHY.prorl!.disease.stat.metric}`);
  await expect(first).toHaveAttribute('data-seeds', String(lessonSeeds(lesson).length));
  expect((await first.getAttribute('data-runs'))!.split(',').sort()).toEqual(['healthy', 'sick']);
  await expect(first.locator('path.xy-band, .xy-band path').first()).toBeAttached();
  const second = panel.getByTestId('why-step-2').locator('[data-testid^="lesson-seeds-chart-"]').first();
  expect((await second.getAttribute('data-runs'))!.split(',').sort()).toEqual(['cure', 'sick']);
  await expect(page.getByTestId('why-pool')).toHaveAttribute('data-training', '0');
  await panel.screenshot({ path: `${SCREENS_DIR}why-prorl.png` });

  // Closing it stops its workers and leaves the Compare.
  await panel.getByRole('button', { name: /^Close why/ }).click();
  await expect(page.getByTestId('why-panel')).toHaveCount(0);
  expect(errors).toEqual([]);
});
