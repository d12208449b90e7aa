/**
 * A heatmap cell's explanation: the policy tokens of the iteration in that bin. On a batch whose
 * sampler log-ratios are set by hand (so each token's bin is known, the clamp and the end bins
 * included), and on real batches, where every bin's count must equal the metric row's.
 */
import { describe, expect, it } from 'vitest';
import { defaultConfig, withFieldText } from '../../workers/core/config';
import { createCpuBackend } from '../../workers/core/cpuBackend';
import type { MetricRow } from '../../workers/core/metrics';
import { createTrainer } from '../../workers/core/trainer';
import { dumpBatch, type BatchDump } from '../../workers/formats/batchDump';
import { explain, explainBatch, HIST, type HistName } from '../../workers/explain';
import { histCellOf } from '../../workers/explain/other';

async function run(set: Record<string, string>, iters: number): Promise<{ dump: BatchDump; row: MetricRow }> {
  let cfg = defaultConfig();
  for (const [k, v] of Object.entries({ batch: '3', group: '4', 'model.hidden': '8', seed: '5', ...set })) cfg = withFieldText(cfg, k, v);
  const t = await createTrainer(cfg, createCpuBackend);
  let row!: MetricRow;
  for (let i = 0; i < iters; i++) row = await t.step();
  const dump = await dumpBatch(t);
  t.destroy();
  return { dump, row };
}

/** log π_old − log μ of the first tokens, and the bin each must land in (24 bins over [−0.5, 0.5], width 1/24). */
const HAND: Array<[x: number, bin: number, shown: number]> = [
  [0, 12, 0],
  [-1e-4, 11, -1e-4],
  [0.05, 13, 0.05],
  // The lower edge is the first bin; the upper edge and past it the last.
  [-0.5, 0, -0.5],
  [0.5, 23, 0.5],
  [-0.6, 0, -0.6],
  [0.7, 23, 0.7],
  // Past ±20 the value is clamped (as the kernels clamp), still in the end bins.
  [30, 23, 20],
  [-25, 0, -20],
];

describe('histCellOf on the sampler mismatch', () => {
  it('a hand-set batch: each token in its bin, the clamp and the end bins, the rest at 0', async () => {
    const { dump } = await run({}, 1);
    const tokens = dump.trajs.flatMap((t, n) => t.tokens.map((k, j) => ({ k, n, j })));
    expect(tokens.length).toBeGreaterThan(HAND.length + 2);
    // Every other token: the sampler is the trainer (bin 12, the one from 0).
    for (const { k } of tokens) k.logp_rollout = k.logp_old;
    HAND.forEach(([x], i) => {
      const { k } = tokens[i]!;
      k.logp_old = -1;
      k.logp_rollout = -1 - x;
    });
    const b = explainBatch(dump);
    const iter = dump.iter;
    const counts = new Array<number>(HIST.bins).fill(0);
    for (const [, bin] of HAND) counts[bin]!++;
    counts[12]! += tokens.length - HAND.length;
    for (let bin = 0; bin < HIST.bins; bin++) {
      const d = histCellOf(b, 'mismatch', iter, bin, counts[bin]!);
      expect(d.unavailable, `bin ${bin}`).toBeUndefined();
      expect(d.value, `bin ${bin}`).toBe(counts[bin]);
      const listed = d.steps[0]!.inputs!;
      expect(listed).toHaveLength(Math.min(counts[bin]!, 200));
      // Listed tokens open their rollout log-prob.
      for (const inp of listed) expect(inp.ref).toMatchObject({ kind: 'token', q: 'logp_rollout' });
    }
    HAND.forEach(([, bin, shown], i) => {
      const { n, j } = tokens[i]!;
      const listed = histCellOf(b, 'mismatch', iter, bin, null).steps[0]!.inputs!;
      const hit = listed.find((inp) => inp.ref?.kind === 'token' && inp.ref.traj === n && inp.ref.tok === j);
      expect(hit, `token ${i} in bin ${bin}`).toBeDefined();
      expect(hit!.value).toBeCloseTo(shown, 9);
    });
    // The end bins say they are open-ended.
    expect(histCellOf(b, 'mismatch', iter, 0, null).steps[0]!.label).toMatch(/in \[−∞, −0\.458333\)/);
    expect(histCellOf(b, 'mismatch', iter, 23, null).steps[0]!.label).toMatch(/in \[0\.458333, ∞\)/);
    // Through explain(): the row's count is compared; a wrong one is a mismatch.
    const ref = { kind: 'hist', hist: 'mismatch', iter, bin: 23 } as const;
    expect(explain(b, ref, { histCounts: () => counts }).status).toBe('checked');
    expect(explain(b, ref, { histCounts: () => counts.map((c) => c + 1) }).status).toBe('mismatch');
    expect(explain(b, ref).status).toBe('derived');
    expect(explain(b, ref).title).toBe(`Sampler mismatch histogram, iteration ${iter}, bin 24`);
  });

  it('a dump without the sampler log-probs, or of another iteration: unavailable, not 0', async () => {
    const { dump } = await run({}, 1);
    const b = explainBatch(dump);
    expect(histCellOf(b, 'mismatch', dump.iter + 1, 12, 5).unavailable).toMatch(/tokens are gone/);
    delete dump.trajs.find((t) => t.tokens.length > 0)!.tokens[0]!.logp_rollout;
    const d = histCellOf(b, 'mismatch', dump.iter, 12, 5);
    expect(d.value).toBeNull();
    expect(d.unavailable).toMatch(/logp_rollout/);
    // The other histograms do not read it.
    expect(histCellOf(b, 'ratio', dump.iter, 12, null).value).toBeGreaterThan(0);
  });

  for (const [name, set, hists] of [
    ['the defaults: every sampler log-ratio at 0', {}, ['adv', 'ratio', 'mismatch']],
    ['bf16 and top-p 0.8', { 'rollout.precision': 'bf16', 'rollout.topP': '0.8' }, ['mismatch']],
    ['fp16, top-k 3, stale by 1, 2 epochs x 2 minibatches', { 'rollout.precision': 'fp16', 'rollout.topK': '3', staleness: '1', epochs: '2', minibatches: '2' }, ['adv', 'ratio', 'mismatch']],
  ] as const) {
    it(`a real batch (${name}): every bin's tokens are the metric row's count`, async () => {
      const { dump, row } = await run(set, 2);
      expect(dump.iter).toBe(row.iter);
      const b = explainBatch(dump);
      const rowCounts = (h: HistName) => (h === 'adv' ? row.adv_hist : h === 'ratio' ? row.ratio_hist : row.mismatch_hist!);
      for (const hist of hists as readonly HistName[]) {
        for (let bin = 0; bin < HIST.bins; bin++) {
          const e = explain(b, { kind: 'hist', hist, iter: row.iter, bin }, { histCounts: (h) => rowCounts(h) });
          expect(e.status, `${hist} bin ${bin}: ${e.value} vs ${e.trainer}`).toBe('checked');
        }
      }
      const off = row.mismatch_hist!.reduce((a, c, i) => a + (i === 12 ? 0 : c), 0);
      if (Object.keys(set).length === 0) expect(off).toBe(0);
      else expect(off).toBeGreaterThan(0);
    });
  }
});
