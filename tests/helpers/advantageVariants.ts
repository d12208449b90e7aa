/** The advantage option sets the GPU tests run every estimator with (advantage.gpu.test.ts). */
import type { AdvantageOptions } from '../../kernels/advantage/advantage';

/** Every option that changes an estimator's result, crossed per estimator. */
export function advantageVariants(): Array<Partial<AdvantageOptions>> {
  const out: Array<Partial<AdvantageOptions>> = [];
  const bools = [false, true];
  for (const estimator of ['group', 'rloo', 'raw'] as const) {
    for (const byRole of bools) {
      for (const entropyScale of bools) {
        if (estimator === 'group') {
          for (const scaleStd of bools) for (const unbiasedStd of bools) out.push({ estimator, byRole, entropyScale, scaleStd, unbiasedStd });
        } else out.push({ estimator, byRole, entropyScale });
      }
    }
  }
  for (const baseline of bools) {
    for (const klInReward of [0, 0.3]) for (const gamma of [1, 0.9]) out.push({ estimator: 'reinforce', baseline, klInReward, gamma });
  }
  out.push({ estimator: 'reinforce', baseline: true, entropyScale: true, gamma: 0.95 });
  for (const separate of bools) for (const gamma of [1, 0.8]) out.push({ estimator: 'turn', separate, gamma });
  out.push({ estimator: 'turn', separate: true, entropyScale: true });
  for (const scaleStd of bools) for (const unbiasedStd of bools) out.push({ estimator: 'turnGroup', scaleStd, unbiasedStd });
  for (const scaleStd of bools) {
    for (const gamma of [1, 0.9]) for (const stepWeight of [1, 0.5]) out.push({ estimator: 'gigpo', scaleStd, gamma, stepWeight });
  }
  for (const scaleStd of bools) {
    for (const isCap of [0, 2, 1e6]) for (const entropyScale of bools) out.push({ estimator: 'opob', scaleStd, isCap, entropyScale });
  }
  // VCPO's statistics: population std, no epsilon, no division at std <= 1e-8.
  out.push({ estimator: 'opob', scaleStd: true, unbiasedStd: false, eps: 0, stdMin: 1e-8, isCap: 8 });
  out.push({ estimator: 'group', entropyScale: true, entropyClamp: true });
  out.push({ estimator: 'rloo', byRole: true, entropyScale: true, entropyClamp: true });
  return out;
}


export const variantLabel = (v: Partial<AdvantageOptions>) =>
  Object.entries(v).map(([k, x]) => (k === 'estimator' ? x : `${k}=${x}`)).join(' ');
