import { describe, expect, it } from 'vitest';
import { dumpBatch, packBatch, packBuffers, unpackBatch, unpackBatchInSlices, type BatchDump, type BatchPack } from '../../workers/formats/batchDump';
import { defaultConfig, withFieldText, type RunConfig } from '../../workers/core/config';
import { createCpuBackend } from '../../workers/core/cpuBackend';
import { createTrainer, type Trainer } from '../../workers/core/trainer';
import { plainBatchDump } from '../helpers/batchDumpPlain';
import { forwardCpu } from '../../kernels/model/mlp';
import { trajGradNormCpu } from '../../kernels/model/trajGradNorm';

function cfgOf(set: Record<string, string>): RunConfig {
  let cfg = defaultConfig();
  // task first: it resets the task's own settings.
  for (const [k, v] of Object.entries({ batch: '3', group: '4', 'model.hidden': '8', seed: '5', ...set }).sort(([a], [b]) => (a === 'task' ? -1 : b === 'task' ? 1 : 0))) {
    cfg = withFieldText(cfg, k, v);
  }
  return cfg;
}

async function trained(set: Record<string, string>, iters = 2): Promise<Trainer> {
  const t = await createTrainer(cfgOf(set), createCpuBackend);
  for (let i = 0; i < iters; i++) await t.step();
  return t;
}

// Every optional field of the dump, on some run: turn rewards (IGPO, CM2, the tools task),
// checklists, roles and role rewards, PF-PPO's copies, DARS' extra rollouts, ReGFT's dropped ones,
// the noisy reward model's true reward, several epochs' ratios.
const CASES: Array<[string, Record<string, string>]> = [
  ['search, GRPO', {}],
  ['search, IGPO', { methods: 'igpo' }],
  ['tools, CM2', { task: 'tools', methods: 'cm2' }],
  ['tools, GRPO', { task: 'tools', methods: 'grpo' }],
  ['roles, Dr. MAS', { task: 'roles', methods: 'grpo,drmas' }],
  ['roles, IGPO', { task: 'roles', methods: 'igpo' }],
  ['sequence, noisy reward model', { task: 'sequence', 'env.rmNoise': '0.5', 'env.seqReward': 'partial' }],
  ['PF-PPO, 2 epochs x 2 minibatches', { methods: 'grpo,pfppo', epochs: '2', minibatches: '2' }],
  ['DARS', { methods: 'grpo,dars' }],
  ['ReGFT', { methods: 'grpo,regft' }],
  ['PPO', { methods: 'ppo' }],
  ['VCPO, stale rollouts', { methods: 'vcpo', staleness: '2' }],
  ['EDGE-GRPO', { methods: 'grpo,edge' }],
  ['GiGPO anchor keys', { methods: 'gigpo' }],
  ['search noise', { 'env.noise': '0.3' }],
];

describe('the packed batch dump', () => {
  for (const [name, set] of CASES) {
    it(`${name}: unpacks to the plain dump, key order included`, async () => {
      const t = await trained(set);
      const [packed, plain] = [await dumpBatch(t), await plainBatchDump(t)];
      expect(JSON.stringify(packed)).toBe(JSON.stringify(plain));
      expect(packed).toEqual(plain); // NaN-aware, where JSON would write null
      t.destroy();
    });
  }

  it('covers the optional fields the cases claim', async () => {
    const seen = new Set<string>();
    for (const [, set] of CASES) {
      const t = await trained(set);
      const d = await dumpBatch(t);
      for (const tr of d.trajs) {
        for (const k of Object.keys(tr)) seen.add(k);
        if (!tr.kept) seen.add('kept=false');
        if (tr.copies !== 1) seen.add('copies!=1');
        if (tr.reward !== tr.reward_true) seen.add('reward!=reward_true');
        if (tr.tokens.some((x) => x.ratio !== 1)) seen.add('ratio!=1');
      }
      t.destroy();
    }
    for (const k of ['turn_rewards', 'checklist', 'turn_roles', 'role_rewards', 'anchor_keys', 'kept=false', 'copies!=1', 'reward!=reward_true', 'ratio!=1']) {
      expect(seen, k).toContain(k);
    }
  });

  it('packBuffers lists every array: a transfer detaches them all, and the copy unpacks the same', async () => {
    const t = await trained({ task: 'tools', methods: 'cm2' });
    const pack = await packBatch(t);
    const want = JSON.stringify(unpackBatch(pack));
    const moved: BatchPack = structuredClone(pack, { transfer: packBuffers(pack) });
    const views = (p: object): ArrayBufferView[] =>
      Object.values(p).flatMap((v) => (ArrayBuffer.isView(v) ? [v] : v && typeof v === 'object' && !Array.isArray(v) ? views(v) : []));
    const left = views(pack).filter((v) => v.byteLength > 0);
    expect(left).toEqual([]);
    expect(views(moved).length).toBeGreaterThan(20);
    expect(JSON.stringify(unpackBatch(moved))).toBe(want);
    t.destroy();
  });

  it('in slices: the same dump, pausing between slices; a zero budget pauses after every 64 trajectories', async () => {
    const t = await trained({ batch: '40', group: '5' }, 1); // 200 trajectories
    const pack = await packBatch(t);
    let pauses = 0;
    const pause = async () => void pauses++;
    const sliced = await unpackBatchInSlices(pack, 0, pause);
    expect(pauses).toBe(Math.ceil(200 / 64) - 1);
    expect(JSON.stringify(sliced)).toBe(JSON.stringify(unpackBatch(pack)));
    // A generous budget: one slice, no pause.
    pauses = 0;
    await unpackBatchInSlices(pack, 60_000, pause);
    expect(pauses).toBe(0);
    t.destroy();
  });

  it('text and token columns line up at the edges: first and last trajectory, and trajectories with no training token', async () => {
    const t = await trained({ methods: 'grpo,regft' });
    const pack = await packBatch(t);
    const d = unpackBatch(pack);
    const N = d.trajs.length;
    expect(d.trajs[0]!.text).toBe(t.lastBatch!.episodes.describe(0));
    expect(d.trajs[N - 1]!.text).toBe(t.lastBatch!.episodes.describe(N - 1));
    expect(pack.tokenEnd[N - 1]).toBe(pack.tok.length);
    expect(pack.textEnd[N - 1]).toBe(pack.text.length);
    // ReGFT trains on the correct rollouts only: the others carry no training token, and the
    // columns must not shift around them.
    const empty = d.trajs.findIndex((tr, m) => m > 0 && m < N - 1 && tr.tokens.length === 0);
    expect(empty).toBeGreaterThan(0);
    expect(d).toEqual(await plainBatchDump(t));
    t.destroy();
  });
});

describe('what every method uses is in the dump, and checks out', () => {
  const tokensOf = (d: BatchDump) => d.trajs.flatMap((tr) => tr.tokens);
  const close = (a: number, b: number, tol = 1e-5) => expect(Math.abs(a - b)).toBeLessThanOrEqual(tol * Math.max(1, Math.abs(b)));

  it('old-policy entropy and sum p^2, rollout log-probs, the KL term and the minibatch of every row', async () => {
    // One epoch: the first minibatch's forward is the old policy's, so entropy = entropy_old there.
    const d = await dumpBatch(await trained({ klType: 'k1', klCoef: '0.1', minibatches: '2' }, 1));
    for (const tr of d.trajs) {
      for (const k of tr.tokens) {
        if (tr.minibatch === 0) {
          expect(k.entropy_old).toBe(k.entropy);
          expect(k.sum_p2_old).toBe(k.sum_p2);
        }
        expect(k.logp_rollout).toBe(k.logp_old);
        close(k.kl!, k.logp - k.logp_ref);
      }
    }
    expect(tokensOf(d).some((k) => k.entropy_old !== k.entropy)).toBe(true);
    expect(d.trajs.map((t) => t.minibatch)).toEqual(d.trajs.map((_, n) => (n < 6 ? 0 : 1)));
    expect(d.trajs.every((t) => t.origin === 'policy')).toBe(true);
  });

  it("stale rollouts: logp_rollout is the generating policy's; VCPO's grad_norm is each trajectory's own gradient norm", async () => {
    const t = await trained({ methods: 'vcpo', staleness: '2', lr: '0.05' }, 2);
    // The norm is taken under the parameters before the update: those of the snapshot before the step.
    const before = (await t.snapshotNow()).state.params;
    await t.step();
    const d = await dumpBatch(t);
    expect(tokensOf(d).some((k) => Math.abs(k.logp_rollout! - k.logp_old) > 1e-4)).toBe(true);
    expect(d.ess_minibatch).toHaveLength(1);
    expect(d.lr_minibatch).toEqual([d.lr]);
    const { shape } = t;
    const b = t.lastBatch!;
    const f = forwardCpu(before, shape.dims, b.seq, shape.L, shape.trainRowPos, shape.grammar, shape.temperature);
    // log w_n from the dump's own tokens; the IS cap is VCPO's default 8.
    const logIS = Float32Array.from(d.trajs, (tr) => tr.tokens.reduce((s, k) => s + Math.min(Math.max(k.logp_old - k.logp_rollout!, -20), 20), 0));
    const g2 = trajGradNormCpu({ params: before, dims: shape.dims, seq: b.seq, L: shape.L, rowPos: shape.trainRowPos, h: f.h, z: f.z, mask: b.mask, temperature: shape.temperature, logIS, isCap: 8 }, shape.Tp);
    let differs = false;
    d.trajs.forEach((tr, n) => {
      close(tr.grad_norm!, Math.sqrt(g2[n]!), 1e-4);
      const proxy = tr.tokens.reduce((s, k) => s + Math.max(1 - 2 * Math.exp(k.logp_old) + k.sum_p2_old!, 0), 0);
      if (Math.abs(tr.grad_norm! - Math.sqrt(proxy)) > 1e-2 * tr.grad_norm!) differs = true;
    });
    // Not the closed-form proxy, which the option gradNorm = proxy still gives.
    expect(differs).toBe(true);
    t.destroy();
    const p = await dumpBatch(await trained({ methods: 'vcpo', staleness: '2', lr: '0.05', 'vcpo.gradNorm': 'proxy' }, 3));
    for (const tr of p.trajs) {
      // |g|^2 = sum_t (1 - 2 pi_t + sum pi^2), pi_t = exp(logp_old).
      const proxy = tr.tokens.reduce((s, k) => s + Math.max(1 - 2 * Math.exp(k.logp_old) + k.sum_p2_old!, 0), 0);
      close(tr.grad_norm!, Math.sqrt(proxy), 1e-4);
    }
  });

  it("IGPO: p_answer before each turn taken, and each gain is the change of its log (log_prob_diff)", async () => {
    const d = await dumpBatch(await trained({ methods: 'igpo', 'env.maxTurns': '3' }, 2));
    let gains = 0;
    for (const tr of d.trajs) {
      const turns = new Set(tr.tokens.map((k) => k.turn)).size;
      expect(tr.p_answer).toHaveLength(turns);
      for (const p of tr.p_answer!) expect(p > 0 && p <= 1).toBe(true);
      for (let t = 0; t + 1 < turns; t++) {
        close(tr.turn_rewards![t]!, Math.log(tr.p_answer![t + 1]!) - Math.log(tr.p_answer![t]!), 1e-4);
        gains++;
      }
    }
    expect(gains).toBeGreaterThan(0);
  });

  it('PPO: value and return per token; with gamma = lambda = 1 every return is the outcome', async () => {
    const d = await dumpBatch(await trained({ methods: 'ppo' }, 3));
    expect(tokensOf(d).some((k) => k.value !== 0)).toBe(true);
    for (const tr of d.trajs) for (const k of tr.tokens) expect(k.ret).toBe(Math.fround(tr.reward));
  });

  it('origins: corrected (EDGE-GRPO), hinted (ReGFT) and extra (DARS) rollouts are marked', async () => {
    const origins = async (set: Record<string, string>) => new Set((await dumpBatch(await trained({ 'env.values': '16', ...set }, 1))).trajs.map((t) => t.origin));
    const edge = await origins({ methods: 'grpo,edge' });
    expect(edge.has('gec_inject') || edge.has('gec_replace')).toBe(true);
    expect(await origins({ methods: 'grpo,regft' })).toContain('hint');
    expect(await origins({ methods: 'grpo,dars' })).toContain('extra');
  });

  it('PF-PPO: draw weights, and only rows with weight get drawn; search noise of the iteration', async () => {
    const d = await dumpBatch(await trained({ methods: 'grpo,pfppo', 'env.rmNoise': '0.5', 'env.noise': '0.3' }, 1));
    for (const tr of d.trajs) {
      expect(tr.draw_weight).toBeGreaterThan(0);
      if (tr.copies > 0) expect(tr.draw_weight).toBeGreaterThan(1e-6);
    }
    expect(d.noise_p).toBe(0.3);
  });
});
