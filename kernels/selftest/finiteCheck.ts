/**
 * Self-test of finiteCheck.wgsl against updateHealthCpu (from tests/gpu/finiteCheck.gpu.test.ts).
 * The result is a word of flags, so it must match exactly: finite extremes (the largest f32, the
 * smallest subnormal, -0) leave it clear; a NaN, +Inf or -Inf in logp or in a loss row's loss or
 * ratio word sets the loss bit, in a parameter the parameters bit, ORed into bits already set; a
 * loss row's other words (kl, the i32 clip flag whose -1 has the bits of a NaN) do not count.
 */
import { createRng } from '../rng';
import { FINITE_CHECK_WORKGROUP_SIZE, finiteCheckKernel, updateHealthCpu } from '../stats/finiteCheck';
import { PPO_ROW_WORDS } from '../loss/ppoLoss';
import { dispatch, exact, withScratch, type SelfTestCase } from './harness';

const EXACT = exact('a word of flags: a bit is set exactly when one of its values is NaN or ±Inf');

export interface HealthInputs {
  logp: Float32Array;
  /** [rows * PPO_ROW_WORDS] loss rows. */
  ppo: Float32Array;
  params: Float32Array;
}

/**
 * rows loss rows and logp values and `params` parameters, all finite extremes, with the clip word
 * of every loss row an i32 -1 and its kl word a NaN (neither is checked); `spoil` then plants values.
 */
export function healthInputs(rows: number, params: number, spoil: (x: HealthInputs) => void = () => {}): HealthInputs {
  const rng = createRng(rows * 7919 + params);
  const extreme = (i: number) => [3.4028234e38, -3.4028234e38, 1e-45, -0][i % 4]! * (rng.next() < 0.5 ? 1 : 0.5);
  const raw = new ArrayBuffer(rows * PPO_ROW_WORDS * 4);
  const ppo = new Float32Array(raw);
  const i32 = new Int32Array(raw);
  for (let r = 0; r < rows; r++) {
    ppo[r * PPO_ROW_WORDS] = extreme(r);
    ppo[r * PPO_ROW_WORDS + 1] = extreme(r + 1);
    ppo[r * PPO_ROW_WORDS + 2] = NaN;
    i32[r * PPO_ROW_WORDS + 3] = -1;
  }
  const x = { logp: Float32Array.from({ length: rows }, (_, i) => extreme(i + 2)), ppo, params: Float32Array.from({ length: params }, (_, i) => extreme(i + 3)) };
  spoil(x);
  return x;
}

/** The health word finiteCheck.wgsl leaves, starting from `start`. */
export async function gpuHealth(device: GPUDevice, x: HealthInputs, start = 0): Promise<number> {
  return withScratch(device, async (s) => {
    const k = s.kernel(finiteCheckKernel.create(device));
    const health = s.upload(Uint32Array.from([start]));
    const bufs = { logp: s.upload(x.logp), ppo: s.upload(x.ppo), params: s.upload(x.params), health };
    dispatch(device, [[k, k.bind(bufs, { rows: x.logp.length, rowWords: PPO_ROW_WORDS, params: x.params.length })]]);
    return (await s.readU32(health, 1))[0]!;
  });
}

function healthCase(name: string, inputs: () => HealthInputs, start = 0): SelfTestCase {
  return {
    kernel: finiteCheckKernel,
    name,
    run: async (device) => {
      const x = inputs();
      const expected = start | updateHealthCpu(x.logp, x.ppo, PPO_ROW_WORDS, x.params);
      return [{ output: 'health word', actual: [await gpuHealth(device, x, start)], expected: [expected], tol: EXACT }];
    },
  };
}

const W = FINITE_CHECK_WORKGROUP_SIZE;

export const finiteCheckCases: SelfTestCase[] = [
  healthCase(`rows ${W + 1}, params ${W - 1}: finite extremes; kl NaN and clip -1 not checked`, () => healthInputs(W + 1, W - 1)),
  healthCase(`rows ${W + 1}, a NaN in the last logp`, () => healthInputs(W + 1, 10, (x) => void (x.logp[W] = NaN))),
  healthCase('rows 1000, +Inf in a loss word, ORed into bit 2', () => healthInputs(1000, 10, (x) => void (x.ppo[517 * PPO_ROW_WORDS] = Infinity)), 2),
  healthCase('rows 1000, -Inf in the last ratio word', () => healthInputs(1000, 10, (x) => void (x.ppo[999 * PPO_ROW_WORDS + 1] = -Infinity))),
  healthCase(`params ${3 * W}, a NaN in the first and the last parameter`, () => healthInputs(5, 3 * W, (x) => {
    x.params[0] = NaN;
    x.params[3 * W - 1] = NaN;
  })),
  healthCase('rows 1, params 1: both bits', () => healthInputs(1, 1, (x) => {
    x.logp[0] = NaN;
    x.params[0] = -Infinity;
  })),
];
