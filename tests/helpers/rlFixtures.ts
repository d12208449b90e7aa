/**
 * Seeded inputs for the advantage-stage, seqRatio and ppoLoss kernel tests: grouped rollout
 * batches with padding trajectories, per-row rollout data, log-prob rows and trajectories. They
 * live with the kernel self-test (kernels/selftest/fixtures.ts), which runs the same cases in the
 * `?selftest` page; re-exported here for the tests.
 */
export {
  advantageBatch,
  advantageBuffers,
  groupedRollout,
  ppoRows,
  ppoTrajInputs,
  RATIO_ACTION_LEN,
  RATIO_TP,
  RATIO_TURNS,
  rolloutRows,
  seqRatioInputs,
  type AdvantageBatch,
  type GroupSpec,
  type PpoInputs,
  type SeqRatioInputs,
} from '../../kernels/selftest/fixtures';
