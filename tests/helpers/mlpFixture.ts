/**
 * Seeded inputs for the MLP kernel tests: parameters, token sequences, row positions, a grammar.
 * They live with the kernel self-test (kernels/selftest/fixtures.ts), which runs the same cases in
 * the `?selftest` page; re-exported here for the tests.
 */
export { makeMlpCase, randomGrammar, randomParams, type MlpCase } from '../../kernels/selftest/fixtures';
export { edgeSizes } from '../../kernels/selftest/harness';
