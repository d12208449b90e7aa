/**
 * The `?selftest` page. WebGPU project: every kernel passes on SwiftShader, the report copies, a
 * kernel computed wrongly (WGSL altered in the page, as a driver bug would) fails by name, a lost
 * device is named, and the playground's own page never loads the self-test chunk. No-WebGPU
 * project: a missing navigator.gpu and a missing adapter each get a clear error.
 */
import { expect, test, type Page } from '@playwright/test';
import { collectPageErrors, removeWebGpu, SCREENS_DIR } from './util';

/** "N/N kernels passed (M/M checks)": N is 19 today and grows as case files are added. */
const SUMMARY = /^(\d+)\/\1 kernels passed \((\d+)\/\2 checks\)$/;
/** The kernels the page must cover, in pipeline order (kernels/all.ts; others may come between them). */
const REQUIRED = [
  'embedProject', 'forwardHidden', 'forwardLogits', 'sample', 'tokenStats', 'infoGain', 'trajStats', 'advantage', 'gae',
  'tokenBaseline', 'whiten', 'essScale',
  'seqRatio', 'ppoLoss', 'logitGrad', 'headGrad', 'hiddenGrad', 'slotGrad', 'firstLayerGrad', 'gradNorm', 'adam', 'stats', 'finiteCheck',
];
/** Their subgroup versions (kernels/selectors.ts), run where the device has subgroups (SwiftShader in Chromium 156 has). */
const SUBGROUP = ['sampleSubgroup', 'tokenStatsSubgroup', 'logitGradSubgroup', 'firstLayerGradSubgroup'];

async function waitDone(page: Page): Promise<void> {
  await expect(page.getByTestId('selftest-summary')).toHaveAttribute('data-phase', /done|stopped/, { timeout: 120_000 });
}

test.describe('self-test on WebGPU', () => {
  test.beforeEach(({}, info) => test.skip(info.project.name !== 'webgpu', 'needs a WebGPU adapter'));

  test('every kernel passes on this adapter, with errors, tolerances and a copyable report', async ({ page, context }) => {
    const errors = collectPageErrors(page);
    await context.grantPermissions(['clipboard-read', 'clipboard-write']);
    await page.goto('/?selftest');
    await expect(page.getByRole('heading', { name: 'Kernel self-test' })).toBeVisible();
    await waitDone(page);
    const summary = page.getByTestId('selftest-summary');
    await expect(summary).toHaveText(SUMMARY);
    const [, kernelCount, checkCount] = (await summary.textContent())!.match(SUMMARY)!;
    const checks = Number(checkCount);

    // The adapter, as the browser reports it (SwiftShader here: a fallback adapter).
    const adapter = page.getByRole('region', { name: 'Adapter' });
    await expect(adapter.getByTestId('adapter-vendor')).not.toBeEmpty();
    await expect(adapter.getByTestId('adapter-fallback')).toHaveText(/^(yes|no)/);
    const subgroups = (await adapter.getByTestId('adapter-subgroups').textContent())!.startsWith('yes');

    // One row per check, every one passing, every kernel present.
    const table = page.getByRole('table');
    const rows = page.getByTestId('selftest-row');
    await expect(rows).toHaveCount(checks);
    await expect(page.locator('[data-testid="selftest-row"][data-pass="false"]')).toHaveCount(0);
    await expect(table.getByRole('columnheader')).toHaveText(['Kernel', 'Case', 'Output', 'Max abs error', 'Max rel error', 'Tolerance', 'Result']);
    const kernels = await rows.evaluateAll((trs) => [...new Set(trs.map((tr) => tr.getAttribute('data-kernel')))]);
    expect(kernels).toHaveLength(Number(kernelCount));
    expect(kernels.filter((k) => REQUIRED.includes(k!))).toEqual(REQUIRED);
    expect(kernels.filter((k) => SUBGROUP.includes(k!))).toEqual(subgroups ? SUBGROUP : []);
    await expect(table.getByRole('row', { name: /tokenStats logits ±1e4/ })).toContainText('✓ pass');
    await expect(page.getByRole('alert')).toHaveCount(0);

    await page.getByRole('button', { name: 'Copy report' }).click();
    await expect(page.getByTestId('copy-status')).toHaveText('Report copied to the clipboard.');
    const report = await page.evaluate(() => navigator.clipboard.readText());
    expect(report).toMatch(/^Adapter: vendor ".*", .*fallback \(software\) adapter: (yes|no)$/m);
    expect(report).toMatch(subgroups ? /^Subgroups: yes/m : /^Subgroups: no/m);
    expect(report).toContain(`Result: ${kernelCount}/${kernelCount} kernels passed (${checks}/${checks} checks)`);
    expect(report.split('\n').filter((l) => l.startsWith('PASS\t'))).toHaveLength(checks);

    await page.screenshot({ path: `${SCREENS_DIR}selftest.png`, fullPage: true });
    await page.getByRole('button', { name: 'Dark theme' }).click();
    await expect(page.locator('html')).toHaveAttribute('data-theme', 'dark');
    await page.getByText('How the errors and tolerances are defined').click();
    await page.screenshot({ path: `${SCREENS_DIR}selftest-dark.png`, fullPage: true });
    expect(errors).toEqual([]);
  });

  test('a device lost mid-run is named, and the rows measured before stay', async ({ page }) => {
    // Keep the page's device where the test can destroy it; the page did not ask for that, so it is a loss.
    await page.addInitScript(() => {
      const request = GPUAdapter.prototype.requestDevice;
      GPUAdapter.prototype.requestDevice = async function (this: GPUAdapter, d?: GPUDeviceDescriptor) {
        const device = await request.call(this, d);
        (window as unknown as { __selftestDevice: GPUDevice }).__selftestDevice = device;
        return device;
      };
    });
    await page.goto('/?selftest');
    await expect(page.getByTestId('selftest-row').first()).toBeVisible({ timeout: 60_000 });
    await page.evaluate(() => (window as unknown as { __selftestDevice: GPUDevice }).__selftestDevice.destroy());
    await expect(page.getByRole('alert')).toContainText('The GPU device was lost', { timeout: 60_000 });
    await expect(page.getByTestId('selftest-summary')).toHaveAttribute('data-phase', 'stopped');
    await expect(page.getByTestId('selftest-summary')).toHaveText(/^Stopped: (\d+)\/\1 checks passed before the stop; \d+ kernels not tested$/);
    expect(await page.getByTestId('selftest-row').count()).toBeGreaterThan(0);
    await page.screenshot({ path: `${SCREENS_DIR}selftest-device-lost.png`, fullPage: true });
  });

  test('a GPU that computes a kernel wrongly: its rows fail, the summary and the report name it', async ({ page, context }) => {
    // A "driver bug": gradNorm's result off by 1e-3 relative (in its pass 2, gradNormSum, whose
    // cases are listed under gradNorm); tokenStats' WGSL made invalid. Each case tests one kernel,
    // so only those two fail.
    await page.addInitScript(() => {
      const create = GPUDevice.prototype.createShaderModule;
      GPUDevice.prototype.createShaderModule = function (this: GPUDevice, d: GPUShaderModuleDescriptor) {
        let code = d.code;
        if (d.label === 'gradNormSum') code = code.replace('norm[0] = sqrt(total);', 'norm[0] = 1.001 * sqrt(total);');
        if (d.label === 'tokenStats') code += '\nfn broken() -> u32 { return 1.5; }\n';
        return create.call(this, { ...d, code });
      };
    });
    await context.grantPermissions(['clipboard-read', 'clipboard-write']);
    await page.goto('/?selftest');
    await waitDone(page);
    const [, passed, total] = (await page.getByTestId('selftest-summary').textContent())!.match(/^(\d+)\/(\d+) kernels passed/)!;
    expect(Number(passed)).toBe(Number(total) - 2);
    const failing = page.locator('[data-testid="selftest-row"][data-pass="false"]');
    expect(await failing.evaluateAll((trs) => [...new Set(trs.map((tr) => tr.getAttribute('data-kernel')))])).toEqual(['tokenStats', 'gradNorm']);
    // Each failing row is followed by a line that says why: gradNorm's 4 cases with a nonzero norm
    // (kernels/selftest/optimizer.ts; all zeros stay 0 whatever the factor).
    await expect(page.getByRole('row', { name: /^1 of 1 values outside the tolerance/ })).toHaveCount(4);
    // Every tokenStats case (however many the self-test lists) could not compile, and says so.
    const tokenStatsCases = await page.locator('[data-testid="selftest-row"][data-kernel="tokenStats"]').count();
    expect(tokenStatsCases).toBeGreaterThan(0);
    await expect(page.getByRole('row', { name: /^Could not run: WebGPU kernels failed to compile:.*tokenStats\.wgsl/ })).toHaveCount(tokenStatsCases);
    await page.getByRole('button', { name: 'Copy report' }).click();
    const report = await page.evaluate(() => navigator.clipboard.readText());
    expect(report).toContain('FAILED: tokenStats, gradNorm');
    await page.screenshot({ path: `${SCREENS_DIR}selftest-failures.png`, fullPage: true });
  });

  test('the playground page does not load the self-test chunk', async ({ page }) => {
    const scripts: string[] = [];
    page.on('request', (r) => r.resourceType() === 'script' && scripts.push(r.url()));
    await page.goto('/');
    await expect(page.getByRole('button', { name: 'Start' })).toBeVisible();
    expect(scripts.some((u) => /SelfTestPage/.test(u))).toBe(false);
  });
});

test.describe('self-test without WebGPU', () => {
  test.beforeEach(({}, info) => test.skip(info.project.name !== 'no-webgpu', 'needs WebGPU turned off'));

  test('no navigator.gpu: a clear error, no table rows', async ({ page, context }) => {
    await removeWebGpu(page, context);
    await page.goto('/?selftest');
    const alert = page.getByRole('alert');
    await expect(alert).toContainText('WebGPU is not available');
    await expect(alert).toContainText('navigator.gpu is missing');
    await expect(page.getByTestId('selftest-summary')).toHaveText('The self-test did not run.');
    await expect(page.getByTestId('selftest-row')).toHaveCount(0);
    await expect(page.getByRole('table')).toHaveCount(0);
    await expect(page.getByRole('button', { name: 'Copy report' })).toBeDisabled();
    await page.screenshot({ path: `${SCREENS_DIR}selftest-no-webgpu.png`, fullPage: true });
  });

  test('navigator.gpu without an adapter: the error names the adapter request', async ({ page }) => {
    // --disable-webgpu leaves navigator.gpu defined, and requestAdapter() resolves null (tests/e2e/util.ts).
    await page.goto('/?selftest');
    const alert = page.getByRole('alert');
    await expect(alert).toContainText('No WebGPU adapter');
    await expect(alert).toContainText('requestAdapter() returned null');
    await expect(page.getByRole('region', { name: 'Adapter' })).toContainText('No adapter.');
  });
});
