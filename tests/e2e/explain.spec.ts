/**
 * Explain a number, in the built page on the CPU backend: a link's `explain=ITER.TRAJ.TOKEN` runs to
 * its step and opens the token's derivation, which equals the trainer's number ("checked"), for one
 * method of every estimator family and every ratio mode; clicking numbers in the trajectory view,
 * the group detail, a heatmap and the batch lab opens theirs, inputs lead on and Back returns; a bad
 * or stale value is named in the link notice while the rest of the link applies; `stage=` opens
 * step-through there.
 */
import { expect, test, type Page } from '@playwright/test';
import { collectPageErrors, removeWebGpu, SCREENS_DIR } from './util';

/** Small and off-policy (2 epochs x 2 minibatches), so ratios leave 1 and clips happen. */
const BASE = 'v=1&seed=3&batch=3&group=4&model.hidden=16&epochs=2&minibatches=2&klCoef=0.01';

test.beforeEach(async ({ page, context }) => {
  await removeWebGpu(page, context);
});

function dialog(page: Page) {
  return page.getByRole('dialog', { name: /^Explain/ });
}

async function expectChecked(page: Page, title: RegExp): Promise<void> {
  const d = dialog(page);
  await expect(d).toBeVisible({ timeout: 90_000 });
  await expect(d.getByRole('heading', { level: 2 })).toHaveText(title);
  await expect(d).toHaveAttribute('data-status', 'checked');
  await expect(d.getByTestId('explain-status')).toContainText("equals the trainer's value");
}

/** One per estimator family and one per ratio mode (the token mode is GRPO's). */
const CASES: Array<{ name: string; set: string; q?: string; expect: RegExp; shot?: string; viaClick?: boolean; traj?: number }> = [
  // Trajectory 7: the one success of its group at this seed, so its numbers are not all 0.
  { name: 'GRPO: group-normalized outcome', set: 'methods=grpo', expect: /group std/, shot: 'explain-grpo', traj: 7 },
  // DARS drops groups it cannot help (accuracy 0 or 1) and ReGFT keeps only correct rollouts: their
  // first trained trajectory is found in the group view and clicked.
  { name: 'Dr. GRPO / DARS: centred in the enlarged group', set: 'methods=grpo,dars', expect: /group mean/, viaClick: true },
  { name: 'RLOO: leave-one-out', set: 'methods=rloo', expect: /leave-one-out baseline/ },
  { name: 'REINFORCE++: reward-to-go, whitened', set: 'methods=reinforcepp', expect: /batch whitening/ },
  { name: 'PPO: GAE over the critic', set: 'methods=ppo', expect: /TD error/, shot: 'explain-ppo' },
  { name: 'IGPO: information gain, pools, discounting', set: 'methods=igpo', expect: /information-gain pool/, shot: 'explain-igpo' },
  { name: 'CM2 turn level: checklist turn rewards', set: 'task=tools&methods=cm2&cm2.level=turn', expect: /checklist rewards R_t/ },
  { name: 'GiGPO: episode and step parts over the anchor set', set: 'methods=gigpo', expect: /anchor set/, shot: 'explain-gigpo' },
  { name: 'VCPO: off-policy optimal baseline', set: 'methods=vcpo&staleness=1', expect: /OPOB baseline/ },
  { name: 'OTB: token baseline', set: 'methods=otb', expect: /token baseline/ },
  { name: 'Dr. MAS: per role', set: 'task=roles&methods=grpo,drmas', expect: /pool, one element per step/ },
  { name: 'EDGE-GRPO: entropy factor', set: 'methods=grpo,edge', expect: /EDGE-GRPO entropy factor/ },
  { name: 'ratio: token clip', set: 'methods=grpo', q: 'clip', expect: /clip range of the token ratio/ },
  { name: 'ratio: GSPO sequence', set: 'methods=grpo,gspo', q: 'ratio', expect: /GSPO: the trajectory's mean log-ratio/, shot: 'explain-gspo' },
  { name: 'ratio: GMPO geometric', set: 'methods=grpo,gmpo', q: 'clip', expect: /GMPO: each token's λ clipped/ },
  { name: 'ratio: SeeUPO per turn', set: 'methods=grpo,seeupo', q: 'loss', expect: /SeeUPO: turn 1's mean log-ratio/ },
  { name: 'ratio: SAMPO per step', set: 'methods=sampo', q: 'ratio', expect: /SAMPO: the step's/ },
  { name: 'ratio: CISPO', set: 'methods=grpo,cispo', q: 'clip', expect: /CISPO: the IS weight is clipped/ },
  { name: 'ratio: SAPO', set: 'methods=grpo,sapo', q: 'loss', expect: /SAPO: a soft gate/, shot: 'explain-sapo', traj: 7 },
  { name: 'ratio: ReGFT fine-tuning', set: 'methods=grpo,regft', q: 'loss', expect: /ReGFT fine-tuning: token cross-entropy/, viaClick: true },
];

for (const c of CASES) {
  test(`a link explains a number: ${c.name}`, async ({ page }) => {
    const errors = collectPageErrors(page);
    const traj = c.viaClick ? null : (c.traj ?? 0);
    const q = c.q ? `:${c.q}` : '';
    if (traj === null) {
      await page.goto(`/#${BASE}&${c.set}&step=2`);
      await expect(page.getByTestId('iter')).toHaveText('2', { timeout: 90_000 });
      await expect(page.getByTestId('group-view').getByTestId('reward-matrix')).toBeVisible({ timeout: 60_000 });
      // The trained rows carry tokens: open the first one's trajectory and its loss.
      const trained = page.getByTestId('reward-matrix').locator('button.cell:not(.untrained)').first();
      await trained.click();
      await page.getByTestId('trajectory-view').getByRole('button', { name: new RegExp(`^${c.q ?? 'adv'} .* of token 0: explain$`) }).click();
    } else {
      await page.goto(`/#${BASE}&${c.set}&step=2&explain=2.${traj}.0${q}`);
    }
    const noun = c.q === 'clip' ? 'Clip' : c.q === 'ratio' ? 'Ratio' : c.q === 'loss' ? 'Loss' : 'Advantage';
    await expectChecked(page, new RegExp(`^Explain: ${noun} of token 0 \\(.*\\) of trajectory \\d+`));
    await expect(dialog(page).getByRole('list', { name: 'Derivation, top to bottom' })).toContainText(c.expect);
    if (traj !== null) {
      // The link keeps the explained number (so it can be shared on).
      await expect.poll(() => new URL(page.url()).hash).toContain(`explain=2.${traj}.0${q}`);
      // The explained token's trajectory is open in the inspector.
      await expect(page.getByTestId('trajectory-view')).toHaveAttribute('data-traj', String(traj));
    }
    if (c.shot) {
      await dialog(page).evaluate((el) => el.scrollTo(0, 0));
      await page.screenshot({ path: `${SCREENS_DIR}${c.shot}.png` });
    }
    expect(errors).toEqual([]);
  });
}

test('clicking numbers: a token advantage, an input of it, Back, the group detail, a heatmap cell', async ({ page }) => {
  const errors = collectPageErrors(page);
  await page.goto(`/#${BASE}&methods=grpo&step=2&focus=traj:1`);
  const traj = page.getByTestId('trajectory-view');
  await expect(traj).toHaveAttribute('data-traj', '1', { timeout: 90_000 });
  await traj.getByRole('button', { name: /^adv .* of token 0: explain$/ }).click();
  await expectChecked(page, /^Explain: Advantage of token 0 \(.*\) of trajectory 1$/);
  await expect.poll(() => new URL(page.url()).hash).toContain('explain=2.1.0');
  // The group's rewards are inputs: this row's marked, each one's own explanation a click away.
  const d = dialog(page);
  await expect(d.locator('.chip.own')).toHaveCount(1);
  await d.getByRole('button', { name: /^#1 .*\(this row\): explain$/ }).click();
  await expect(d.getByRole('heading', { level: 2 })).toHaveText('Explain: Reward of trajectory 1');
  await expect(d).toHaveAttribute('data-status', 'input');
  await d.getByRole('button', { name: 'Back' }).click();
  await expect(d.getByRole('heading', { level: 2 })).toHaveText(/^Explain: Advantage of token 0/);
  // The token's other numbers: its loss, checked too.
  await d.getByRole('button', { name: 'loss', exact: true }).click();
  await expect(d).toHaveAttribute('data-status', 'checked');
  await expect(d.getByRole('heading', { level: 2 })).toHaveText(/^Explain: Loss of token 0/);
  await page.screenshot({ path: `${SCREENS_DIR}explain-loss.png` });

  // The group detail: a trajectory's advantage, and the group's statistics. The dialog floats over
  // the page's lower right, where the trajectory view's Group button is: closed first.
  await d.getByRole('button', { name: 'Close the explanation' }).click();
  await page.getByTestId('trajectory-view').getByRole('button', { name: /^Group \d+$/ }).click();
  const detail = page.getByTestId('group-detail');
  await detail.getByRole('button', { name: /^advantage .* of trajectory 2: explain$/ }).click();
  await expectChecked(page, /^Explain: Advantage of token 0 \(.*\) of trajectory 2$/);
  await detail.getByRole('button', { name: /^statistics of group \d+: explain$/ }).click();
  await expect(d.getByRole('heading', { level: 2 })).toHaveText(/^Explain: Group \d+$/);
  await expect(d).toContainText('std (unbiased, G − 1)');

  // A heatmap cell: the iteration's tokens in that bin, counted as the metric row counts them.
  const heat = page.getByTestId('chart-adv-heatmap').locator('canvas');
  await heat.scrollIntoViewIfNeeded();
  const box = (await heat.boundingBox())!;
  // The right column (iteration 2), the middle row (the bin just above 0).
  await page.mouse.click(box.x + box.width - 3, box.y + box.height / 2 - 2);
  await expectChecked(page, /^Explain: Advantage histogram, iteration 2, bin 13$/);
  await expect(d.getByTestId('explain-value')).toHaveText(/^\d+$/);
  await page.screenshot({ path: `${SCREENS_DIR}explain-heatmap.png` });
  await d.getByRole('button', { name: 'Close the explanation' }).click();
  await expect(d).toHaveCount(0);
  await expect.poll(() => new URL(page.url()).hash).not.toContain('explain=');
  expect(errors).toEqual([]);
});

test('the batch lab: a re-scored token opens its derivation under that set, checked against the lab', async ({ page }) => {
  const errors = collectPageErrors(page);
  await page.goto(`/#${BASE}&methods=igpo&step=2`);
  await expect(page.getByTestId('iter')).toHaveText('2', { timeout: 90_000 });
  await page.getByTestId('batch-lab-disclosure').locator('summary').click();
  const lab = page.getByRole('region', { name: 'Batch lab' });
  await lab.getByRole('button', { name: 'Open the batch lab' }).click();
  await lab.getByRole('button', { name: 'Freeze the current batch' }).click();
  await expect(lab.getByTestId('lab-results')).toBeVisible({ timeout: 60_000 });
  // Set 1 is the run's own (IGPO), set 2 GRPO: a token of each.
  for (const [col, name] of [
    [1, 'IGPO'],
    [2, 'GRPO'],
  ] as const) {
    await lab.getByTestId(`lab-column-${col}`).locator('.lab-tok').first().click();
    const d = dialog(page);
    await expect(d.getByRole('heading', { level: 2 })).toHaveText(new RegExp(`^Explain: Gradient weight of token 0 .* \\(batch lab, ${name}\\)$`), { timeout: 60_000 });
    await expect(d).toHaveAttribute('data-status', 'checked');
    await d.getByRole('button', { name: 'advantage', exact: true }).click();
    await expect(d).toHaveAttribute('data-status', 'checked');
  }
  await page.screenshot({ path: `${SCREENS_DIR}explain-lab.png` });
  expect(errors).toEqual([]);
});

test('a bad or stale explain value is named in the link notice, and the rest of the link applies', async ({ page }) => {
  await page.goto(`/#${BASE}&methods=grpo&step=2&explain=2.99.0`);
  await expect(page.getByTestId('iter')).toHaveText('2', { timeout: 90_000 });
  const notice = page.getByTestId('link-notice');
  await expect(notice).toContainText('explain = “2.99.0”: the batch has trajectories 0 to 11, not 99');
  await expect(page.getByLabel('seed', { exact: true })).toHaveValue('3');
  await expect(dialog(page)).toHaveCount(0);

  // Malformed, past the pause, a token the trajectory does not have, an unknown stage: each named.
  await page.goto(`/#${BASE}&methods=grpo&step=2&explain=two&stage=bogus`);
  await expect(page.getByTestId('link-notice')).toContainText('explain = “two”: expected ITER.TRAJ.TOKEN');
  await expect(page.getByTestId('link-notice')).toContainText('stage = “bogus”: unknown stage');
  await page.goto(`/#${BASE}&methods=grpo&step=2&explain=5.0.0`);
  await expect(page.getByTestId('link-notice')).toContainText('iteration 5 is not where the link pauses (step=2)');
  await page.goto(`/#${BASE}&methods=grpo&step=2&explain=2.0.999`);
  await expect(page.getByTestId('link-notice')).toContainText('trajectory 0 has policy tokens 0 to', { timeout: 90_000 });
  await expect(page.getByTestId('iter')).toHaveText('2');
});

test('stage= opens step-through at that stage; forward and back walk the iteration', async ({ page }) => {
  const errors = collectPageErrors(page);
  await page.goto(`/#${BASE}&methods=grpo&step=2&stage=advantages`);
  const st = page.getByTestId('step-through');
  await expect(st).toHaveAttribute('data-stage', 'advantages', { timeout: 90_000 });
  await expect(page.getByRole('region', { name: /^Step through iteration 2/ })).toBeVisible();
  await expect(st.getByTestId('step-through-table')).toBeVisible();
  await st.getByRole('button', { name: 'Forward' }).click();
  await expect(st).toHaveAttribute('data-stage', 'ratios');
  // The address follows the stage once the page writes it (not in the same task as the click).
  await expect.poll(() => new URL(page.url()).hash).toContain('stage=ratios');
  await st.getByRole('button', { name: 'Back' }).click();
  await st.getByRole('button', { name: 'Back' }).click();
  await expect(st).toHaveAttribute('data-stage', 'rewards');
  // Every number in it explains: a reward.
  await st.getByRole('button', { name: /^reward of trajectory \d+: explain$/ }).first().click();
  await expect(dialog(page)).toBeVisible();
  await page.screenshot({ path: `${SCREENS_DIR}explain-step-through.png` });
  // Closed, it opens again from the group view at the first stage.
  await st.getByRole('button', { name: 'Close', exact: true }).click();
  await expect(st).toHaveCount(0);
  await expect.poll(() => new URL(page.url()).hash).not.toContain('stage=');
  await page.getByTestId('group-view').getByRole('button', { name: 'Stages of this iteration' }).click();
  await expect(page.getByTestId('step-through')).toHaveAttribute('data-stage', 'sample');
  expect(errors).toEqual([]);
});
