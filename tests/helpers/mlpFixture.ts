/**
 * Seeded inputs for the MLP kernel tests: parameters, token sequences, row positions, a grammar,
 * and the reference gradients the backward kernels read. They live with the kernel self-test
 * (kernels/selftest), which runs the same cases in the `?selftest` page; re-exported here for the tests.
 */
export { backwardSetup } from '../../kernels/selftest/backward';
export { makeMlpCase, randomGrammar, randomParams, type MlpCase } from '../../kernels/selftest/fixtures';
export { edgeSizes } from '../../kernels/selftest/harness';
