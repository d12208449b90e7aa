/** Where Chromium lives and how it must be started for WebGPU on a machine without a GPU. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

const COMMON_ARGS = [
  '--no-sandbox',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

/** WebGPU on: SwiftShader (CPU Vulkan) gives an adapter where no GPU exists. */
export const WEBGPU_ARGS = [...COMMON_ARGS, '--enable-unsafe-webgpu', '--enable-features=Vulkan'];

/** WebGPU off: the page must fall back to the CPU backend. */
export const NO_WEBGPU_ARGS = [...COMMON_ARGS, '--disable-webgpu'];
