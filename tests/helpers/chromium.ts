/** Where Chromium lives and how it must be started for WebGPU on a machine without a GPU. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

const COMMON_ARGS = [
  '--no-sandbox',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

/**
 * WebGPU on: SwiftShader (CPU Vulkan) gives an adapter where no GPU exists. Chromium as a user
 * runs it; the benchmark uses these.
 */
export const WEBGPU_ARGS = [...COMMON_ARGS, '--enable-unsafe-webgpu', '--enable-features=Vulkan'];

/**
 * The tests' WebGPU flags: WEBGPU_ARGS, and Dawn zeroing workgroup memory with a loop in the shader
 * (Tint's transform) instead of Vulkan's VK_KHR_zero_initialize_workgroup_memory. WebGPU zeroes
 * workgroup memory either way, so no result changes; but with the extension SwiftShader's compile
 * time grows with a kernel's workgroup memory (25 ms at 64 words, 1.6 s at 4,096, in one test
 * kernel; 4-20 ms with the loop), and on 2 cores the GPU suite was mostly compiling: stats
 * (3,072 words of trees, and its histograms) took 1.7-2.2 s to compile, 0.33 s with the loop, and
 * whiten 0.41 s against 0.02 (BENCHMARKS.md, "Without a device, a sixth time"); the GPU suite
 * took 159 s, 79 s with it. The e2e specs that compile every kernel or build many runs use it
 * too (playwright.config.ts). The benchmark and the e2e project `webgpu-defaults` keep Chromium's
 * defaults, what users' pages get: the app's start on SwiftShader, compile included, stays under
 * the e2e tests' eyes.
 */
export const TEST_WEBGPU_ARGS = [...WEBGPU_ARGS, '--disable-dawn-features=use_vulkan_zero_initialize_workgroup_memory_extension'];

/** WebGPU off: the page must fall back to the CPU backend. */
export const NO_WEBGPU_ARGS = [...COMMON_ARGS, '--disable-webgpu'];
