/**
 * The update's log-prob stages, in the order the GPU needs them: IGPO's answer scoring first (it
 * uses h and z too), then the reference, the stale rollout policy and last the old policy, so that
 * h and z are left holding the current policy's activations on every row: exactly the first
 * optimizer step's forward (same params, same rows), which that step then skips.
 */
import { infoGainCpu } from '../../../kernels/advantage/infoGain';
import { tokenStatsCpu } from '../../../kernels/softmax/tokenStats';
import { rolloutLogprobsApart } from '../backend';
import type { RunShape } from '../backend';
import type { GpuStage, UpdateStage } from './stage';
import type { GpuUpdate } from './gpuUpdate';

/** IGPO: the answer log-probs under the rollout policy become the earlier turns' rewards. */
export const answerScores: UpdateStage = {
  name: 'answerScores',
  phase: 'prepare',
  part: 'reward',
  reads: ['rolloutParams', 'answerContexts', 'advInputs'],
  writes: ['h', 'z', 'answerLogp', 'turnReward'],
  kernels: ['embedProject', 'forward', 'tokenStats', 'infoGain'],
  reference: 'kernels/advantage/infoGain.ts: infoGainCpu',
  enabled: (s) => s.scoreContexts > 0,
  pipelines: (k, s) => [...k.embedProject.pipelines(), ...k.forward.pipelines(), ...k.tokenStats.pipelines({ vocab: s.dims.V, numRows: s.N * s.Tp }), ...k.infoGain.pipelines()],
  gpu({ k, b, shape, project, f32 }) {
    const rows = shape.scoreContexts * shape.scoreSpan;
    const score = b.score!;
    // h and z are reused: the scored rows (N * maxTurns * span) are at most the training rows.
    const forward = k.forward.bind(
      { params: b.rollParams, proj: b.proj, seq: score.seq, rowPos: score.rows, grammar: b.grammar, h: b.h, z: b.z },
      { dims: shape.dims, seqLen: shape.L, numRows: rows, rowBase: 0, outBase: 0, temperature: shape.temperature },
      'forward answer scoring',
    );
    const stats = k.tokenStats.bind(
      { z: b.z, seq: score.seq, rowPos: score.rows, logp: score.logp, entropy: f32('score entropy', rows), sumP2: f32('score sumP2', rows) },
      { vocab: shape.dims.V, numRows: rows },
      'tokenStats answer scoring',
    );
    const gain = k.infoGain.bind({ scoreLogp: score.logp, trajIn: b.trajIn, turnIn: b.turnIn }, { numTraj: shape.N, maxTurns: shape.maxTurns, span: shape.scoreSpan, igType: shape.igType });
    return {
      encode(pass, inp) {
        if (!inp.score) return;
        k.embedProject.encode(pass, project.rollout);
        k.forward.encode(pass, forward);
        k.tokenStats.encode(pass, stats);
        k.infoGain.encode(pass, gain);
      },
    };
  },
  cpu(c, inp) {
    if (!inp.score) return;
    const { shape } = c;
    const T = shape.maxTurns;
    const f = c.forward(c.rolloutParams, inp.score.rows, inp.score.seqs);
    const lp = tokenStatsCpu(f.z, shape.dims.V, inp.score.seqs, inp.score.rows, f.firstOf).logp;
    c.t.answerLogp = lp;
    const a = c.adv;
    // The outcome sits on each trajectory's last turn; the gain goes to the earlier ones.
    const outcome = Float32Array.from(a.turns, (Tn, n) => (Tn > 0 ? a.turnReward[n * T + Tn - 1]! : 0));
    c.adv = { ...a, turnReward: infoGainCpu(lp, shape.scoreSpan, a.turns, outcome, T, shape.igType) };
    c.t.turnReward.set(c.adv.turnReward);
  },
};

/** The reference policy's log-probs (the KL term's). */
export const refLogprobs: UpdateStage = {
  name: 'refLogprobs',
  phase: 'prepare',
  part: 'logprobs',
  reads: ['ref', 'seq'],
  writes: ['h', 'z', 'logpRef'],
  kernels: ['embedProject', 'forward', 'tokenStats'],
  reference: 'kernels/model/mlp.ts: forwardCpu; kernels/softmax/tokenStats.ts: tokenStatsCpu',
  enabled: () => true,
  pipelines: (k, s) => [...k.embedProject.pipelines(), ...k.forward.pipelines(), ...k.tokenStats.pipelines({ vocab: s.dims.V, numRows: s.N * s.Tp })],
  gpu: (g) => policyStatsGpu(g, g.b.ref, g.project.ref, { logp: g.b.logpRef, entropy: g.b.scratchEntropy, sumP2: g.b.scratchSumP2 }, 'ref', undefined),
  cpu(c) {
    const rows = c.shape.trainRowPos;
    const f = c.forward(c.ref, rows);
    c.t.logpRef.set(tokenStatsCpu(f.z, c.shape.dims.V, c.t.seq, rows, f.firstOf).logp);
    c.progress();
  },
};

/**
 * The log-probs of the rollout's tokens under the distribution that drew them: the parameters
 * `staleness` updates old, through the sampler's precision and truncation. An inference engine
 * returns these with its tokens; here they are recomputed from the same parameters and the same
 * sampler code, which gives the draw's own distribution, so the rollout's readback stays the tokens.
 */
export const rolloutLogprobs: UpdateStage = {
  name: 'rolloutLogprobs',
  phase: 'prepare',
  part: 'logprobs',
  reads: ['rolloutParams', 'seq'],
  writes: ['h', 'z', 'logpRollout'],
  kernels: ['embedProject', 'forward', 'tokenStats'],
  reference: 'kernels/model/mlp.ts: forwardCpu; kernels/softmax/tokenStats.ts: tokenStatsCpu',
  enabled: rolloutLogprobsApart,
  pipelines: (k, s) => [...k.embedProject.pipelines(), ...k.forward.pipelines(), ...k.tokenStats.pipelines({ vocab: s.dims.V, numRows: s.N * s.Tp, sampler: s.sampler })],
  gpu: (g) => policyStatsGpu(g, g.b.rollParams, g.project.rollout, { logp: g.b.logpRollout, entropy: g.b.scratchEntropy, sumP2: g.b.scratchSumP2 }, 'rollout policy', g.shape.sampler),
  cpu(c) {
    const rows = c.shape.trainRowPos;
    const f = c.forward(c.rolloutParams, rows);
    c.rolloutLogp = tokenStatsCpu(f.z, c.shape.dims.V, c.t.seq, rows, f.firstOf, c.shape.sampler).logp;
    c.t.logpRollout.set(c.rolloutLogp);
    c.progress();
  },
};

/** The old policy (the parameters before this update): log-probs, entropy and sum p^2 of every row. */
export const oldLogprobs: UpdateStage = {
  name: 'oldLogprobs',
  phase: 'prepare',
  part: 'logprobs',
  reads: ['params', 'seq'],
  writes: ['h', 'z', 'logpOld', 'entropyOld', 'sumP2Old'],
  kernels: ['embedProject', 'forward', 'tokenStats'],
  reference: 'kernels/model/mlp.ts: forwardCpu; kernels/softmax/tokenStats.ts: tokenStatsCpu',
  enabled: () => true,
  pipelines: (k, s) => [...k.embedProject.pipelines(), ...k.forward.pipelines(), ...k.tokenStats.pipelines({ vocab: s.dims.V, numRows: s.N * s.Tp })],
  gpu: (g) => policyStatsGpu(g, g.b.params, g.project.params, { logp: g.b.logpOld, entropy: g.b.entropyOld, sumP2: g.b.sumP2Old }, 'old', undefined),
  cpu(c) {
    const rows = c.shape.trainRowPos;
    // Kept through the update: it is also the first optimizer step's forward, row for row.
    c.old = c.forward(c.params, rows);
    c.oldStats = tokenStatsCpu(c.old.z, c.shape.dims.V, c.t.seq, rows, c.old.firstOf);
    c.t.logpOld.set(c.oldStats.logp);
    c.t.entropyOld.set(c.oldStats.entropy);
    c.t.sumP2Old.set(c.oldStats.sumP2);
    if (!c.rolloutLogp) c.t.logpRollout.set(c.oldStats.logp);
    c.progress();
  },
};

/**
 * A policy's forward pass over every training row and its token statistics: the ref, rollout and
 * old log-prob stages differ only in the parameters, their projection, the outputs and the sampler.
 */
function policyStatsGpu(
  { k, b, shape }: GpuUpdate,
  params: GPUBuffer,
  project: Parameters<GpuUpdate['k']['embedProject']['encode']>[1],
  out: { logp: GPUBuffer; entropy: GPUBuffer; sumP2: GPUBuffer },
  label: string,
  sampler: RunShape['sampler'],
): GpuStage {
  const R = shape.N * shape.Tp;
  const forward = k.forward.bind(
    { params, proj: b.proj, seq: b.seq, rowPos: b.trainRowPos, grammar: b.grammar, h: b.h, z: b.z },
    { dims: shape.dims, seqLen: shape.L, numRows: R, rowBase: 0, temperature: shape.temperature },
    `forward ${label}`,
  );
  const stats = k.tokenStats.bind({ z: b.z, seq: b.seq, rowPos: b.trainRowPos, ...out }, { vocab: shape.dims.V, numRows: R, ...(sampler ? { sampler } : {}) }, `tokenStats ${label}`);
  return {
    encode(pass) {
      k.embedProject.encode(pass, project);
      k.forward.encode(pass, forward);
      k.tokenStats.encode(pass, stats);
    },
  };
}
