/** Runs `fn` inside a validation error scope and fails on any validation error (WGSL or binding mistakes fail loudly). */
export async function withValidation<T>(device: GPUDevice, fn: () => Promise<T>): Promise<T> {
  device.pushErrorScope('validation');
  let out: T;
  try {
    out = await fn();
  } finally {
    const err = await device.popErrorScope();
    if (err) throw new Error(`WebGPU validation error: ${err.message}`);
  }
  return out;
}
