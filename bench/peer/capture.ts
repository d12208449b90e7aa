/**
 * The batch every contender of section 3 starts from: a config trained for `iters` iterations on
 * the CPU backend, and its last update's input (rewards, mask, weights, lr), token sequences,
 * weights and reference weights just before that update, with the CPU backend's loss and gradient
 * norm for it (the reference the TF.js peer is checked against).
 */
import type { Backend, RunShape, UpdateInput } from '../../workers/core/backend';
import type { RunConfig } from '../../workers/core/config';
import { createCpuBackend } from '../../workers/core/cpuBackend';
import { createTrainer } from '../../workers/core/trainer';

export interface CapturedUpdate {
  shape: RunShape;
  params: Float32Array;
  ref: Float32Array;
  seq: Int32Array;
  inp: UpdateInput;
  loss: number;
  gradNorm: number;
}

export async function captureUpdate(cfg: RunConfig, iters: number): Promise<CapturedUpdate> {
  let got: Omit<CapturedUpdate, 'shape'> | null = null;
  let n = 0;
  const trainer = await createTrainer(cfg, (shape, params) => {
    const b = createCpuBackend(shape, params);
    return {
      ...b,
      update: async (inp) => {
        if (++n < iters) return b.update(inp);
        const before = await b.snapshot();
        const s = await b.update(inp);
        const batch = await b.readBatch();
        got = { params: before.params, ref: before.ref, seq: Int32Array.from(batch.seq), inp: { ...inp, snapshot: false }, loss: s.loss, gradNorm: s.grad_norm };
        return s;
      },
    } satisfies Backend;
  });
  for (let i = 0; i < iters; i++) await trainer.step();
  const shape = trainer.shape;
  trainer.destroy();
  if (!got) throw new Error('peer: no batch captured');
  return { shape, ...(got as Omit<CapturedUpdate, 'shape'>) };
}
