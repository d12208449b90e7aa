/**
 * Seeded masked-logit rows for the per-row softmax kernels (tokenStats, logitGrad). They live with
 * the kernel self-test (kernels/selftest/fixtures.ts); re-exported here for the tests.
 */
export { logitCase, maxAbsLogit, type LogitCase, type RowKind } from '../../kernels/selftest/fixtures';
