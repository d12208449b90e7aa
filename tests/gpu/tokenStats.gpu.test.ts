/**
 * tokenStats.wgsl (with the shared row max / sum-exp of rowSoftmax.wgsl) vs tokenStatsCpu
 * (kernels/softmax/tokenStats.ts). Tolerance: log-sum-exp in f32 carries
 * an absolute error of a few ulps of |lse|, and lse ~ max|z|; so atol = 1e-5 + 1e-6 max|z| (1e-5 for
 * logits of order 1, 1e-2 for logits of 1e4, where one f32 ulp is 1e-3) and rtol = 1e-4 + 1e-6 max|z|
 * (sumP2 = exp(... - 2 lse) inherits that absolute error as a relative one).
 */
import { describe, it } from 'vitest';
import { TOKEN_STATS_WORKGROUP_SIZE, tokenStatsCpu, tokenStatsKernels } from '../../kernels/softmax/tokenStats';
import { expectClose } from '../helpers/expectClose';
import { dispatch, edgeSizes, Scratch } from '../../kernels/selftest/harness';
import { withValidation } from '../helpers/validation';
import { logitCase, maxAbsLogit, type LogitCase, type RowKind } from '../../kernels/selftest/fixtures';
import { requireFeature, requireGpu } from '../helpers/requireGpu';
import { SUBGROUP_ROWS_PER_GROUP } from '../../kernels/softmax/rowSubgroup';
import type { KernelVariant } from '../../kernels/selectors';

async function check(variant: KernelVariant, c: LogitCase, name: string, rowBase = 0) {
  const device = await requireGpu();
  const tokenStatsKernel = tokenStatsKernels[variant];
  if (tokenStatsKernel.requires) requireFeature(device, tokenStatsKernel.requires);
  const rows = c.rowPos.length - rowBase;
  const ref = tokenStatsCpu(c.z.subarray(rowBase * c.V), c.V, c.seq, c.rowPos.subarray(rowBase));
  const out = await withValidation(device, async () => {
    const g = new Scratch(device);
    const kernel = tokenStatsKernel.create(device);
    const n = c.rowPos.length;
    const [logp, entropy, sumP2] = [g.empty(n), g.empty(n), g.empty(n)];
    const call = kernel.bind(
      { z: g.upload(c.z), seq: g.upload(c.seq), rowPos: g.upload(c.rowPos), logp, entropy, sumP2 },
      { vocab: c.V, numRows: rows, rowBase },
    );
    dispatch(device, [[kernel, call]]);
    const res = {
      logp: (await g.readF32(logp, n)).subarray(rowBase),
      entropy: (await g.readF32(entropy, n)).subarray(rowBase),
      sumP2: (await g.readF32(sumP2, n)).subarray(rowBase),
    };
    g.destroy();
    kernel.destroy();
    return res;
  });
  const s = maxAbsLogit(c.z);
  const tol = { atol: 1e-5 + 1e-6 * s, rtol: 1e-4 + 1e-6 * s };
  expectClose(out.logp, ref.logp, { ...tol, label: `tokenStats logp ${name}` });
  expectClose(out.entropy, ref.entropy, { ...tol, label: `tokenStats entropy ${name}` });
  expectClose(out.sumP2, ref.sumP2, { ...tol, label: `tokenStats sumP2 ${name}` });
}

for (const variant of ['thread', 'subgroup'] as const) describe(`tokenStats.wgsl matches tokenStatsCpu (${variant} per row)`, () => {
  for (const rows of edgeSizes(variant === 'thread' ? TOKEN_STATS_WORKGROUP_SIZE : SUBGROUP_ROWS_PER_GROUP, 1000)) {
    it(`rows = ${rows}`, async () => check(variant, logitCase(rows, 23, rows), `rows=${rows}`));
  }
  // Subgroups here are 4 lanes wide (SwiftShader), on GPUs 32 or 64: fewer logits than lanes, one
  // per lane, and several rounds of lanes.
  for (const V of [1, 4, 5, 33, 130]) {
    it(`vocab ${V}`, async () => check(variant, logitCase(20, V, V), `V=${V}`));
  }
  it('rowBase offset', async () => check(variant, logitCase(50, 9, 3), 'rowBase=13', 13));
  for (const kind of ['huge', 'dominant', 'single', 'flat'] as RowKind[]) {
    it(`extreme rows: ${kind}`, async () => check(variant, logitCase(40, 16, 4, [kind]), kind));
  }
});
