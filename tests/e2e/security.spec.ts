/**
 * The built app runs under a Content-Security-Policy that forbids inline scripts and eval, and it
 * still trains under it.
 */
import { expect, test } from '@playwright/test';
import { chartPoints, collectPageErrors } from './util';

test('the page carries a CSP that blocks eval and inline scripts, and training still works', async ({ page }) => {
  const errors = collectPageErrors(page);
  await page.goto('/');
  const csp = await page.locator('meta[http-equiv="Content-Security-Policy"]').getAttribute('content');
  expect(csp).toContain("script-src 'self' 'wasm-unsafe-eval';");
  expect(csp).not.toContain("'unsafe-eval'");

  // The attempts run in a task of the page's own (setTimeout): code evaluated by the test driver
  // itself is exempt from the page's CSP, page code is not.
  const verdicts = await page.evaluate(
    () =>
      new Promise<Record<string, string>>((resolve) => {
        setTimeout(() => {
          const w = window as unknown as Record<string, unknown>;
          const out: Record<string, string> = {};
          try {
            (0, eval)('window.__evalRan = true');
            out.eval = w.__evalRan ? 'ran' : 'not run';
          } catch (e) {
            out.eval = `blocked: ${(e as Error).name}`;
          }
          try {
            new Function('window.__fnRan = true')();
            out.fn = w.__fnRan ? 'ran' : 'not run';
          } catch (e) {
            out.fn = `blocked: ${(e as Error).name}`;
          }
          const s = document.createElement('script');
          s.textContent = 'window.__inlineRan = true';
          document.head.appendChild(s);
          out.inline = w.__inlineRan ? 'ran' : 'not run';
          resolve(out);
        }, 0);
      }),
  );
  expect(verdicts.eval).toMatch(/^blocked/);
  expect(verdicts.fn).toMatch(/^blocked/);
  expect(verdicts.inline).toBe('not run');

  await page.getByLabel('Backend').selectOption('cpu');
  await page.getByRole('button', { name: 'Start' }).click();
  await expect.poll(() => chartPoints(page, 'chart-reward'), { timeout: 60_000 }).toBeGreaterThanOrEqual(2);
  await page.getByRole('button', { name: 'Pause' }).click();
  expect(errors.filter((e) => !/__evalRan|__fnRan|unsafe-eval|Content Security Policy/.test(e))).toEqual([]);
});

test('imported run files with script payloads and oversized fields execute nothing and show named errors', async ({ page }) => {
  const errors = collectPageErrors(page);
  let dialogs = 0;
  page.on('dialog', (d) => {
    dialogs++;
    void d.dismiss();
  });
  await page.goto('/#v=1&batch=2&group=4');
  await page.getByLabel('Backend').selectOption('cpu');
  await page.getByRole('button', { name: 'Step' }).click();
  await expect(page.getByTestId('iter')).toHaveText('1', { timeout: 60_000 });
  const payload = '<img src=x onerror="window.__xss=1;alert(1)"><script>window.__xss=2</script>';
  const file = (name: string, body: unknown) => ({ name, mimeType: 'application/json', buffer: Buffer.from(typeof body === 'string' ? body : JSON.stringify(body)) });

  // 1. Payloads in every string a run file carries, and in keys.
  await page.getByTestId('import-file').setInputFiles(
    file('evil.json', {
      format: 'agentic-rl-playground/run',
      version: 1,
      config: { seed: 1, lossAgg: payload, [payload]: 1 },
      notes: payload,
      metrics: [],
    }),
  );
  const notice = page.getByTestId('import-errors');
  await expect(notice).toContainText('evil.json');
  await expect(notice).toContainText('lossAgg');
  // 2. Oversized fields: notes far past the limit, a histogram of a million bins.
  await page.getByTestId('import-file').setInputFiles(
    file('huge.json', {
      format: 'agentic-rl-playground/run',
      version: 1,
      config: {},
      notes: 'x'.repeat(200_000),
      metrics: [{ iter: 1, adv_hist: new Array(1_000_000).fill(0) }],
    }),
  );
  await expect(notice).toContainText('huge.json');
  await expect(notice).toContainText(/notes: expected at most \d+ characters/);
  // 3. Not JSON at all.
  await page.getByTestId('import-file').setInputFiles(file('broken.json', `{"notes": "${payload}`));
  await expect(notice).toContainText('broken.json');

  expect(await page.evaluate(() => (window as unknown as { __xss?: number }).__xss)).toBeUndefined();
  expect(await page.locator('img[src="x"]').count()).toBe(0);
  expect(dialogs).toBe(0);
  expect(errors).toEqual([]);
  // The live run is untouched.
  await expect(page.getByTestId('iter')).toHaveText('1');
});
