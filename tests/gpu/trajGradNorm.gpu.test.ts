/**
 * trajGradNorm.wgsl against trajGradNormCpu: the self-test's cases (kernels/selftest/trajGradNorm.ts,
 * whose doc gives the tolerance: rtol 2e-5, atol 1e-6 times the case's largest g2; fully masked
 * trajectories exactly 0), each check held to its own tolerance here.
 */
import { describe, it } from 'vitest';
import { trajGradNormCases } from '../../kernels/selftest/trajGradNorm';
import { expectClose } from '../helpers/expectClose';
import { requireGpu } from '../helpers/requireGpu';

describe('trajGradNorm.wgsl matches trajGradNormCpu', () => {
  for (const c of trajGradNormCases) {
    it(c.name, async () => {
      const device = await requireGpu();
      for (const check of await c.run(device)) {
        expectClose(Array.from(check.actual), Array.from(check.expected), { atol: check.tol.atol, rtol: check.tol.rtol, label: `${c.name} ${check.output}` });
      }
    });
  }
});
