/**
 * The benchmark's TF.js peer (bench/peer/tfjsUpdate.ts) computes the same update step as our CPU
 * backend, with both ways of writing the first layer: on TF.js's CPU backend in Node, its loss and
 * pre-clip gradient norm on a captured batch match the CPU backend's. One optimizer step, as in the
 * benchmark: the peer starts a fresh Adam, so from a second step on its weights differ from a
 * backend that has trained before (the gradient of the first step does not depend on Adam's state). TF.js computes in f32 with
 * its own summation orders against our float64 accumulation: 1e-4 relative leaves room for that
 * (measured: under 1e-7) and still catches a wrong term, which moves them by percents.
 */
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-cpu';
import { beforeAll, describe, expect, it } from 'vitest';
import { captureUpdate } from '../../bench/peer/capture';
import { createTfPeer } from '../../bench/peer/tfjsUpdate';
import { defaultConfig, withFieldText } from '../../workers/core/config';

/** Trains a few iterations on the CPU backend and keeps the last update's input, weights and result. */
const capture = (set: Record<string, string>, iters: number) => {
  let cfg = defaultConfig();
  for (const [k, v] of Object.entries(set)) cfg = withFieldText(cfg, k, v);
  return captureUpdate(cfg, iters);
};

const rel = (a: number, b: number) => Math.abs(a - b) / Math.max(1e-9, Math.abs(b));

describe('TF.js peer (bench section 3)', () => {
  beforeAll(async () => {
    await tf.setBackend('cpu');
    await tf.ready();
  });

  it.each([
    ['default model', { batch: '8', group: '4' }],
    ['KL to the reference, hidden 16, seed 2', { batch: '8', group: '4', seed: '2', 'model.hidden': '16', klCoef: '0.1' }],
  ])('%s: loss and gradient norm match the CPU backend, first layer direct and factored', async (_, set) => {
    const c = await capture(set, 4);
    expect(c.gradNorm).toBeGreaterThan(0);
    for (const firstLayer of ['direct', 'factored'] as const) {
      const peer = createTfPeer(c.shape, c.params, c.ref, firstLayer);
      peer.setBatch(c.seq);
      const r = await peer.update(c.inp);
      peer.dispose();
      expect(rel(r.loss, c.loss), `${firstLayer} loss ${r.loss} vs ${c.loss}`).toBeLessThan(1e-4);
      expect(rel(r.gradNorm, c.gradNorm), `${firstLayer} grad norm ${r.gradNorm} vs ${c.gradNorm}`).toBeLessThan(1e-4);
    }
  });
});
