/**
 * gaeUnrolled.wgsl (tp compiled into the pipeline, kernels/critic.ts gaeUnrolledKernel) and
 * gaeRows.wgsl (a thread per row, gaeRowsKernel) give gae.wgsl's advantages and returns bit for
 * bit: the same row steps in the same order, from registers or walked again by each row's thread. Compared on the same random inputs at every tp from 1 to 64, across mask densities
 * (none, sparse, dense, all; rows after the last masked one), gamma/lambda pairs, and trajectory
 * counts at workgroup edges; outputs start as garbage so that an unwritten row shows. Both share
 * gaeIo.wgsl (uniform, bindings and the row step gaeRow); their agreement with the CPU reference
 * gaeCpu is the self-test's (kernels/selftest/critic.ts, run by critic.gpu.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { packTrajIn } from '../../kernels/advantage';
import { GAE_UNROLLED_MAX_TP, gaeKernel, gaeKernelFor, gaeRowsKernel, gaeUnrolledKernel } from '../../kernels/critic';
import { createRng } from '../../workers/rng';
import { expectEqualArrays } from '../helpers/expectClose';
import { GpuScratch, runCalls, withValidation } from '../helpers/gpuBuffers';
import { requireGpu } from '../helpers/requireGpu';

interface GaeCase {
  N: number;
  tp: number;
  gamma: number;
  lambda: number;
  critic: Float32Array;
  stateKey: Uint32Array;
  mask: Float32Array;
  reward: Float32Array;
}

/** Masks with density maskP; `tail` masks out each trajectory's last rows (an early answer). */
function gaeCase(N: number, tp: number, seed: number, maskP: number, gamma: number, lambda: number, tail = false): GaeCase {
  const rng = createRng(seed);
  const C = 37;
  const critic = Float32Array.from({ length: C }, () => rng.normal() * 3);
  const stateKey = Uint32Array.from({ length: N * tp }, () => rng.int(C));
  const cut = Uint32Array.from({ length: N }, () => (tail ? rng.int(tp + 1) : tp));
  const mask = Float32Array.from({ length: N * tp }, (_, i) => (i % tp < cut[Math.floor(i / tp)]! && rng.next() < maskP ? 1 : 0));
  const reward = Float32Array.from({ length: N }, () => rng.normal());
  return { N, tp, gamma, lambda, critic, stateKey, mask, reward };
}

/** Bits of [adv..., ret...] of each case, one call per case. */
async function runAll(kernel: typeof gaeKernel, cs: GaeCase[]): Promise<number[][]> {
  const device = await requireGpu();
  return withValidation(device, async () => {
    const g = new GpuScratch(device);
    const k = kernel.create(device);
    const outs = cs.map((c) => {
      const R = c.N * c.tp;
      const adv = g.upload(new Float32Array(R).fill(5));
      const ret = g.upload(new Float32Array(R).fill(-5));
      const trajIn = g.upload(
        packTrajIn({ reward: c.reward, groupStart: new Uint32Array(c.N), groupSize: new Uint32Array(c.N).fill(1), turns: new Uint32Array(c.N).fill(1) }),
      );
      const buffers = { critic: g.upload(c.critic), stateKey: g.upload(c.stateKey), mask: g.upload(c.mask), trajIn, adv, ret };
      runCalls(device, [[k, k.bind(buffers, { numTraj: c.N, tp: c.tp, gamma: c.gamma, lambda: c.lambda })]]);
      return { adv, ret, R };
    });
    const bits: number[][] = [];
    for (const o of outs) {
      bits.push([...(await g.readU32(o.adv, o.R)), ...(await g.readU32(o.ret, o.R))]);
    }
    g.destroy();
    k.destroy();
    return bits;
  });
}

async function expectSameBits(cs: GaeCase[], kernels = [gaeUnrolledKernel, gaeRowsKernel]) {
  const four = await runAll(gaeKernel, cs);
  for (const kernel of kernels) {
    const other = await runAll(kernel, cs);
    cs.forEach((c, i) => {
      expectEqualArrays(other[i]!, four[i]!, `${kernel.label}, N ${c.N}, tp ${c.tp}, gamma ${c.gamma}, lambda ${c.lambda}: [adv, ret] bits`);
    });
  }
}

describe("gaeUnrolled and gaeRows: gae.wgsl's bits", () => {
  it('at every tp from 1 to 64, masks dense and cut short', async () => {
    const tps = Array.from({ length: GAE_UNROLLED_MAX_TP }, (_, i) => i + 1);
    await expectSameBits(tps.map((tp) => gaeCase(70, tp, tp, 0.8, 0.99, 0.95, true)));
  });

  it('at mask densities 0, 0.3 and 1 and three (gamma, lambda) pairs', async () => {
    const cs: GaeCase[] = [];
    for (const tp of [1, 4, 9, 13, 24]) {
      for (const maskP of [0, 0.3, 1]) {
        for (const [gamma, lambda] of [[1, 1], [0.99, 0.95], [0.9, 0]] as const) cs.push(gaeCase(65, tp, cs.length + 1, maskP, gamma, lambda));
      }
    }
    await expectSameBits(cs);
  });

  it('at workgroup edges (1, 63, 64, 65 and 300 trajectories; 7, 64 and 65 rows)', async () => {
    await expectSameBits([1, 63, 64, 65, 300].map((N) => gaeCase(N, 9, N, 0.9, 1, 1, true)));
    await expectSameBits([[7, 1], [8, 8], [13, 5], [1, 64]].map(([N, tp]) => gaeCase(N!, tp!, N! * tp!, 0.9, 0.99, 0.95, true)));
  });

  it('gaeRows past gaeUnrolled\'s 64 rows per trajectory (65, 100)', async () => {
    await expectSameBits([gaeCase(1, 65, 3, 0.9, 0.99, 0.95, true), gaeCase(5, 100, 4, 0.6, 1, 0.9, true), gaeCase(3, 70, 5, 1, 0.9, 0)], [gaeRowsKernel]);
  });

  it('refuses a tp past its limit, naming it; the backend then runs gae.wgsl, as in the thread variant', async () => {
    const device = await requireGpu();
    const k = gaeUnrolledKernel.create(device);
    const g = new GpuScratch(device);
    const b = g.empty(64);
    const buffers = { critic: b, stateKey: b, mask: b, trajIn: b, adv: b, ret: b };
    expect(() => k.bind(buffers, { numTraj: 1, tp: 65, gamma: 1, lambda: 1 })).toThrow(/gaeUnrolled: 65 rows per trajectory is outside its 1\.\.64/);
    const call = k.bind(buffers, { numTraj: 1, tp: 9, gamma: 1, lambda: 1 });
    expect(() => call.update({ numTraj: 2, tp: 9, gamma: 0.9, lambda: 1 })).not.toThrow();
    expect(() => call.update({ numTraj: 2, tp: 8, gamma: 1, lambda: 1 })).toThrow(/gaeUnrolled: tpSize 9 -> 8 needs a call of its own/);
    expect(gaeKernelFor(64, 'subgroup')).toBe(gaeUnrolledKernel);
    expect(gaeKernelFor(65, 'subgroup')).toBe(gaeKernel);
    expect(gaeKernelFor(9, 'thread')).toBe(gaeKernel);
    g.destroy();
    k.destroy();
  });
});
