/**
 * End-to-end tests against the built app (`vite build`, then `vite preview`), in Debian's Chromium.
 * Three projects:
 * - `webgpu-defaults`: SwiftShader WebGPU through --enable-unsafe-webgpu and Chromium's defaults
 *   otherwise, as a user's page gets it: the app's start and a training run, kernel compiles
 *   included.
 * - `webgpu`: the same adapter with the tests' flag that makes SwiftShader's compiles of kernels
 *   with large workgroup memory cheap (tests/helpers/chromium.ts TEST_WEBGPU_ARGS; no result
 *   changes). These specs compile every kernel (the self-test) or build many runs; on this 2-core
 *   machine they took 385 s of test time with the defaults and 262 s with the flag.
 * - `no-webgpu`: --disable-webgpu, and the specs also delete navigator.gpu in the page and the
 *   worker.
 */
import { availableParallelism } from 'node:os';
import { defineConfig } from '@playwright/test';
import { CHROMIUM_PATH, NO_WEBGPU_ARGS, TEST_WEBGPU_ARGS, WEBGPU_ARGS } from './tests/helpers/chromium';

/** The preview server's port: E2E_PORT, so two checkouts can run e2e side by side. */
const PORT = Number(process.env.E2E_PORT ?? 4173);

export default defineConfig({
  testDir: 'tests/e2e',
  outputDir: 'test-results/artifacts',
  timeout: 180_000,
  expect: { timeout: 15_000 },
  // Two spec files at a time where there are two cores: their waits (worker restarts, heartbeats,
  // page loads) overlap. 8.8 min to 7.1 min on this 2-core machine, every test passing. Not more:
  // each page trains in workers of its own, and the lesson pages one per core.
  workers: Math.min(2, availableParallelism()),
  fullyParallel: false,
  retries: 0,
  forbidOnly: !!process.env.CI,
  reporter: [['list']],
  use: {
    baseURL: `http://localhost:${PORT}`,
    viewport: { width: 1366, height: 900 },
    trace: 'retain-on-failure',
  },
  webServer: {
    // The test build (`--mode e2e`: it keeps the fault hooks the reliability specs use) in a folder
    // of its own, so dist/ stays the production build; preview sends the security headers.
    command: `npx vite build --mode e2e --outDir dist-e2e --emptyOutDir && npx vite preview --outDir dist-e2e --port ${PORT} --strictPort`,
    url: `http://localhost:${PORT}`,
    // A server this run did not start may serve another checkout's build: never test it.
    reuseExistingServer: false,
    timeout: 300_000,
  },
  projects: [
    {
      name: 'webgpu-defaults',
      testMatch: ['smoke.spec.ts', 'webgpu.spec.ts'],
      use: { browserName: 'chromium', launchOptions: { executablePath: CHROMIUM_PATH, args: WEBGPU_ARGS } },
    },
    {
      name: 'webgpu',
      testMatch: ['share-webgpu.spec.ts', 'reliability-webgpu.spec.ts', 'hostile-webgpu.spec.ts', 'selftest.spec.ts', 'explain-webgpu.spec.ts'],
      use: { browserName: 'chromium', launchOptions: { executablePath: CHROMIUM_PATH, args: TEST_WEBGPU_ARGS } },
    },
    {
      name: 'no-webgpu',
      testMatch: ['smoke.spec.ts', 'cpuFallback.spec.ts', 'teacherScreen.spec.ts', 'security.spec.ts', 'share.spec.ts', 'reliability.spec.ts', 'hostile.spec.ts', 'ui.spec.ts', 'live-settings.spec.ts', 'compare.spec.ts', 'batchLab.spec.ts', 'selftest.spec.ts', 'lessons.spec.ts', 'recipe.spec.ts', 'importRun.spec.ts', 'arena.spec.ts', 'explain.spec.ts', 'hostile-limits.spec.ts', 'why.spec.ts', 'teacher.spec.ts', 'samplerViews.spec.ts'],
      use: { browserName: 'chromium', launchOptions: { executablePath: CHROMIUM_PATH, args: NO_WEBGPU_ARGS } },
    },
  ],
});
