import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';
import { playwright } from '@vitest/browser-playwright';
import { CHROMIUM_PATH, TEST_WEBGPU_ARGS } from './tests/helpers/chromium.ts';

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          environment: 'node',
          include: ['tests/unit/**/*.test.ts'],
          testTimeout: 60_000,
          // One file per core. Vitest's default leaves one core free (one worker on a 2-core
          // machine), which ran the files one after another: 4.0 min here against 2.5 min.
          maxWorkers: availableParallelism(),
        },
      },
      {
        // Kernel parity runs real WGSL on a real WebGPU adapter (SwiftShader in CI), never skipped.
        // zod pre-bundled up front: a mid-run optimization would reload the test page.
        optimizeDeps: { include: ['zod'] },
        test: {
          name: 'gpu',
          include: ['tests/gpu/**/*.gpu.test.ts'],
          testTimeout: 120_000,
          browser: {
            enabled: true,
            headless: true,
            provider: playwright({
              launchOptions: { executablePath: CHROMIUM_PATH, args: TEST_WEBGPU_ARGS },
            }),
            instances: [{ browser: 'chromium' }],
          },
        },
      },
    ],
  },
});
