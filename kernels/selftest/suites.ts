/**
 * The self-test's case files, one line each. To add a kernel's cases: write
 * kernels/selftest/<group>.ts exporting `<group>Cases: SelfTestCase[]` and add its line here. The
 * runner shows the cases in pipeline order (the kernel's place in ALL_KERNELS, kernels/all.ts).
 */
export { forwardCases } from './forward';
export { softmaxCases } from './softmax';
export { infoGainCases } from './infoGain';
export { advantageCases } from './advantage';
export { criticCases } from './critic';
export { advantageFamilyCases } from './advantageFamily';
export { policyLossCases } from './policyLoss';
export { backwardCases } from './backward';
export { optimizerCases } from './optimizer';
export { statsCases } from './stats';
export { finiteCheckCases } from './finiteCheck';
export { negOutShareCases } from './negOutShare';
export { mismatchStatsCases } from './mismatchStats';
export { trajGradNormCases } from './trajGradNorm';
