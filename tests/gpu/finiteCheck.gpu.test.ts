/**
 * finiteCheck.wgsl vs updateHealthCpu: exact (a word of flags), at edge sizes of each of its three
 * ranges and for every non-finite kind in each, with the words it must not check spoiled.
 */
import { describe, expect, it } from 'vitest';
import { FINITE_CHECK_WORKGROUP_SIZE, HEALTH, updateHealthCpu } from '../../kernels/stats/finiteCheck';
import { PPO_ROW_WORDS } from '../../kernels/loss/ppoLoss';
import { gpuHealth, healthInputs, type HealthInputs } from '../../kernels/selftest/finiteCheck';
import { withValidation } from '../helpers/validation';
import { edgeSizes } from '../../kernels/selftest/harness';
import { requireGpu } from '../helpers/requireGpu';

async function health(x: HealthInputs, start = 0): Promise<number> {
  const device = await requireGpu();
  return withValidation(device, () => gpuHealth(device, x, start));
}

const cpu = (x: HealthInputs) => updateHealthCpu(x.logp, x.ppo, PPO_ROW_WORDS, x.params);

describe('finiteCheck.wgsl matches updateHealthCpu', () => {
  for (const n of edgeSizes(FINITE_CHECK_WORKGROUP_SIZE, 3001)) {
    it(`${n} rows and ${n} parameters: finite data (kl NaN, clip -1 unchecked) leaves the word clear; a bad last value of each range sets its bit`, async () => {
      const clean = healthInputs(n, n);
      expect(cpu(clean)).toBe(0);
      expect(await health(clean)).toBe(0);
      const spoilt: Array<[string, (x: HealthInputs) => void, number]> = [
        ['logp', (x) => void (x.logp[n - 1] = NaN), HEALTH.loss],
        ['loss word', (x) => void (x.ppo[(n - 1) * PPO_ROW_WORDS] = NaN), HEALTH.loss],
        ['ratio word', (x) => void (x.ppo[(n - 1) * PPO_ROW_WORDS + 1] = NaN), HEALTH.loss],
        ['parameter', (x) => void (x.params[n - 1] = NaN), HEALTH.parameters],
      ];
      for (const [what, spoil, bit] of spoilt) {
        const x = healthInputs(n, n, spoil);
        expect(cpu(x), what).toBe(bit);
        expect(await health(x), what).toBe(bit);
      }
    });
  }

  it('detects +Inf, -Inf and NaN at the first item of each range, and ORs into bits already set', async () => {
    for (const bad of [Infinity, -Infinity, NaN]) {
      for (const [spoil, bit] of [
        [(x: HealthInputs) => void (x.logp[0] = bad), HEALTH.loss],
        [(x: HealthInputs) => void (x.ppo[0] = bad), HEALTH.loss],
        [(x: HealthInputs) => void (x.ppo[1] = bad), HEALTH.loss],
        [(x: HealthInputs) => void (x.params[0] = bad), HEALTH.parameters],
      ] as const) {
        const x = healthInputs(700, 900, spoil);
        expect(await health(x, HEALTH.gradients)).toBe(HEALTH.gradients | bit);
        expect(cpu(x)).toBe(bit);
      }
    }
    expect(await health(healthInputs(10, 10), HEALTH.gradients)).toBe(HEALTH.gradients);
  });

  it('sets both bits when both ranges hold a bad value; more parameters than rows and the other way round', async () => {
    const both = (rows: number, params: number) =>
      healthInputs(rows, params, (x) => {
        x.logp[rows >> 1] = Infinity;
        x.params[params - 1] = NaN;
      });
    for (const [rows, params] of [[1, 1], [3, 5000], [5000, 3]] as const) {
      expect(await health(both(rows, params))).toBe(HEALTH.loss | HEALTH.parameters);
    }
  });
});
