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
  expect(csp).toContain("script-src 'self'");
  expect(csp).not.toContain('unsafe-eval');

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
