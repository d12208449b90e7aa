/**
 * "Download recipe" from the "Take it to a real run" dialog: the page zips the experiment (episodes,
 * the task in Python, verl and TRL scripts, README) and the archive holds what the CLI writes.
 */
import { expect, test } from '@playwright/test';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { collectPageErrors, removeWebGpu, SCREENS_DIR } from './util';

test.beforeEach(async ({ page, context }) => {
  await removeWebGpu(page, context);
});

test('Download recipe zips the tools task with the episodes asked for', async ({ page }) => {
  const errors = collectPageErrors(page);
  await page.goto('/#v=1&task=tools&seed=4&batch=8&group=4');
  await page.getByRole('button', { name: 'Take it to a real run' }).click();
  const dialog = page.getByTestId('frameworks-dialog');
  const box = dialog.getByTestId('recipe-download');
  await expect(box.getByRole('spinbutton')).toHaveValue('1600');
  await box.getByRole('spinbutton').fill('0');
  await expect(box.getByRole('button', { name: 'Download recipe' })).toBeDisabled();
  await expect(box).toContainText('Episodes: expected an integer from 1 to 200000');
  await box.getByRole('spinbutton').fill('24');
  const [dl] = await Promise.all([page.waitForEvent('download'), box.getByRole('button', { name: 'Download recipe' }).click()]);
  expect(dl.suggestedFilename()).toBe('recipe-tools-seed4.zip');
  await expect(box).toContainText('recipe-tools-seed4.zip: 19 files, 24 episodes.');
  await page.screenshot({ path: `${SCREENS_DIR}recipe-download.png` });
  const zip = join(tmpdir(), `recipe-e2e-${process.pid}.zip`);
  writeFileSync(zip, Buffer.from(await (await dl.createReadStream()).toArray().then((chunks) => Buffer.concat(chunks as Buffer[]))));
  const py = spawnSync('python3', ['-c', 'import json,sys,zipfile; z=zipfile.ZipFile(sys.argv[1]); print(json.dumps({n: z.read(n).decode() for n in z.namelist()}))', zip], { encoding: 'utf8', maxBuffer: 64 << 20 });
  test.skip(py.error !== undefined, 'python3 not on PATH: the archive is not read back');
  const files = JSON.parse(py.stdout) as Record<string, string>;
  expect(Object.keys(files)).toContain('recipe-tools-seed4/verl_run/toy_interaction.py');
  expect(files['recipe-tools-seed4/data/train.jsonl']!.trim().split('\n')).toHaveLength(24);
  expect(JSON.parse(files['recipe-tools-seed4/config.json']!)).toMatchObject({ task: 'tools', seed: 4, batch: 8, group: 4 });
  expect(files['recipe-tools-seed4/verl_run/run.sh']).toContain('"data.train_batch_size=8"');
  expect(errors).toEqual([]);
});
