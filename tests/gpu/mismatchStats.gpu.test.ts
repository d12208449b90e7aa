/**
 * mismatchStats.wgsl vs mismatchStatsCpu (kernels/selftest/mismatchStats.ts states the tolerance),
 * at edge sizes of its one workgroup.
 */
import { describe, expect, it } from 'vitest';
import { MISMATCH_WORKGROUP_SIZE, mismatchStatsCpu, MISMATCH_FIELDS } from '../../kernels/stats/mismatchStats';
import { gpuMismatchStats, MISMATCH_TOL, mismatchInputs } from '../../kernels/selftest/mismatchStats';
import { edgeSizes } from '../../kernels/selftest/harness';
import { withValidation } from '../helpers/validation';
import { requireGpu } from '../helpers/requireGpu';

describe('mismatchStats.wgsl matches mismatchStatsCpu', () => {
  for (const n of edgeSizes(MISMATCH_WORKGROUP_SIZE, 3000)) {
    it(`${n} trajectories of 9 rows`, async () => {
      const device = await requireGpu();
      const x = mismatchInputs(n, 9);
      const cpu = mismatchStatsCpu(x);
      const gpu = await withValidation(device, () => gpuMismatchStats(device, x));
      for (const f of MISMATCH_FIELDS) {
        expect(Math.abs(gpu[f] - cpu[f]), `${f}: gpu ${gpu[f]} cpu ${cpu[f]}`).toBeLessThanOrEqual(MISMATCH_TOL.atol + MISMATCH_TOL.rtol * Math.abs(cpu[f]));
      }
      expect(gpu.mismatch_hist).toEqual(cpu.mismatch_hist);
    });
  }
});
