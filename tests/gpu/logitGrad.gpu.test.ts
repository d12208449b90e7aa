/**
 * logitGrad.wgsl (with rowSoftmax.wgsl) vs logitGradCpu (kernels/softmax/logitGrad.ts). Tolerance: dz = g (onehot - p) / T with p from
 * an f32 log-sum-exp, so |err| <= |g| / T * (a few ulps of |lse|): atol 1e-6 + 1e-6 max|z| and
 * rtol 1e-4 (dlogp ~ N(0, 1), T = 0.7). Forbidden tokens and rows with dlogp = 0 must be exactly 0.
 */
import { describe, expect, it } from 'vitest';
import { MASKED_LOGIT } from '../../kernels/model/mlp';
import { MLP_WORKGROUP_SIZE } from '../../kernels/model/mlpKernels';
import { logitGradCpu, logitGradKernels } from '../../kernels/softmax/logitGrad';
import { createRng } from '../../workers/core/rng';
import { expectClose } from '../helpers/expectClose';
import { dispatch, edgeSizes, Scratch } from '../../kernels/selftest/harness';
import { withValidation } from '../helpers/validation';
import { logitCase, maxAbsLogit, type LogitCase, type RowKind } from '../../kernels/selftest/fixtures';
import { requireFeature, requireGpu } from '../helpers/requireGpu';
import { SUBGROUP_ROWS_PER_GROUP } from '../../kernels/softmax/rowSubgroup';
import type { KernelVariant } from '../../kernels/selectors';

const T = 0.7;

async function check(variant: KernelVariant, c: LogitCase, name: string, zeroFrac = 0.2) {
  const device = await requireGpu();
  const logitGradKernel = logitGradKernels[variant];
  if (logitGradKernel.requires) requireFeature(device, logitGradKernel.requires);
  const rows = c.rowPos.length;
  const rng = createRng(rows + c.V);
  const dlogp = Float32Array.from({ length: rows }, () => (rng.next() < zeroFrac ? 0 : rng.normal()));
  const ref = logitGradCpu(c.z, c.V, c.seq, c.rowPos, dlogp, T);
  const dz = await withValidation(device, async () => {
    const g = new Scratch(device);
    const kernel = logitGradKernel.create(device);
    const out = g.empty(rows * c.V);
    const call = kernel.bind(
      { z: g.upload(c.z), seq: g.upload(c.seq), rowPos: g.upload(c.rowPos), dlogp: g.upload(dlogp), dz: out },
      { vocab: c.V, numRows: rows, temperature: T },
    );
    dispatch(device, [[kernel, call]]);
    const res = await g.readF32(out, rows * c.V);
    g.destroy();
    kernel.destroy();
    return res;
  });
  expectClose(dz, ref, { atol: 1e-6 + 1e-6 * maxAbsLogit(c.z), rtol: 1e-4, label: `logitGrad dz ${name}` });
  for (let r = 0; r < rows; r++) {
    for (let v = 0; v < c.V; v++) {
      if (dlogp[r] === 0 || c.z[r * c.V + v] === MASKED_LOGIT) expect(dz[r * c.V + v] === 0, `dz[${r}, ${v}] is 0`).toBe(true);
    }
  }
}

for (const variant of ['thread', 'subgroup'] as const) describe(`logitGrad.wgsl matches logitGradCpu (${variant} per row)`, () => {
  for (const rows of edgeSizes(variant === 'thread' ? MLP_WORKGROUP_SIZE : SUBGROUP_ROWS_PER_GROUP, 700)) {
    it(`rows = ${rows}`, async () => check(variant, logitCase(rows, 19, 50 + rows), `rows=${rows}`));
  }
  for (const kind of ['huge', 'dominant', 'single', 'flat'] as RowKind[]) {
    it(`extreme rows: ${kind}`, async () => check(variant, logitCase(30, 12, 8, [kind]), kind));
  }
  for (const V of [1, 4, 5, 33, 130]) {
    it(`vocab ${V}`, async () => check(variant, logitCase(20, V, V), `V=${V}`));
  }
  it('all dlogp zero gives an all-zero gradient', async () => check(variant, logitCase(70, 5, 9), 'dlogp=0', 1));
});
