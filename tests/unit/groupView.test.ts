/**
 * The Group view's model against real batches: a few CPU iterations per estimator (and per method
 * that adds, corrects or drops rollouts), the batch dump read back, the view's groups and counts
 * checked against the dump's own trajectories, advantages and the trainer's metrics.
 */
import { describe, expect, it } from 'vitest';
import { groupCounts, groupRows, ZERO_ADV } from '../../app/panels/groupModel';
import { defaultConfig, withFieldText, type RunConfig } from '../../workers/core/config';
import { createCpuBackend } from '../../workers/core/cpuBackend';
import { ESTIMATOR_IDS } from '../../workers/core/methods';
import { createTrainer } from '../../workers/core/trainer';
import { dumpBatch, type BatchDump } from '../../workers/formats/batchDump';
import type { MetricRow } from '../../workers/core/metrics';

function cfgOf(set: Record<string, string>): RunConfig {
  let cfg = defaultConfig();
  for (const [k, v] of Object.entries({ batch: '6', group: '4', 'model.hidden': '8', seed: '3', ...set }).sort(([a], [b]) => (a === 'task' ? -1 : b === 'task' ? 1 : 0))) {
    cfg = withFieldText(cfg, k, v);
  }
  return cfg;
}

async function lastBatch(set: Record<string, string>, iters = 3): Promise<{ dump: BatchDump; row: MetricRow }> {
  const t = await createTrainer(cfgOf(set), createCpuBackend);
  let row: MetricRow | undefined;
  for (let i = 0; i < iters; i++) row = await t.step();
  const dump = await dumpBatch(t);
  t.destroy();
  return { dump, row: row! };
}

const zeroAdv = (t: BatchDump['trajs'][number]) => t.tokens.every((k) => Math.abs(k.adv) <= ZERO_ADV);

/** Checks every estimator's view must pass: one row per prompt, states true to the advantages. */
function checkView(dump: BatchDump): ReturnType<typeof groupCounts> {
  const rows = groupRows(dump);
  const counts = groupCounts(rows);
  // One group per prompt, every rolled-out trajectory in exactly one of them.
  expect(rows.map((r) => r.index)).toEqual(Array.from({ length: dump.config.batch }, (_, i) => i));
  const drawn = rows.flatMap((r) => r.trajs.map((t) => t.id)).sort((a, b) => a - b);
  expect(drawn).toEqual(dump.trajs.filter((t) => t.origin !== 'unused').map((t) => t.id));
  for (const r of rows) {
    const trained = r.trajs.filter((t) => t.kept);
    const tie = trained.length > 0 && trained.every((t) => t.reward === trained[0]!.reward);
    if (r.state === 'collapsed') {
      expect(tie).toBe(true);
      expect(trained.every(zeroAdv)).toBe(true);
    }
    if (r.state === 'dropped') expect(trained).toHaveLength(0);
    if (r.state === 'signal' || r.state === 'tied') expect(trained.every(zeroAdv)).toBe(false);
    // A collapsed-looking group that still has an advantage is never called collapsed.
    if (tie && !trained.every(zeroAdv)) expect(r.state).toBe('tied');
  }
  expect(counts.collapsed + counts.dropped + counts.tied + rows.filter((r) => r.state === 'zero' || r.state === 'signal').length).toBe(counts.groups);
  return counts;
}

describe('the Group view per estimator', () => {
  for (const id of ESTIMATOR_IDS) {
    const set: Record<string, string> = id === 'cm2' ? { task: 'tools', methods: id } : { methods: id };
    it(`${id}: one row per prompt, collapsed only where rewards tie and advantages are 0`, async () => {
      const { dump, row } = await lastBatch(set);
      const counts = checkView(dump);
      if (id === 'grpo' || id === 'drgrpo' || id === 'rloo') {
        // Outcome-reward estimators: a group is collapsed exactly when its rewards tie, as the metric counts.
        expect(counts.collapsed / counts.groups).toBeCloseTo(row.groups_all_equal_frac, 6);
      }
    });
  }

  it('IGPO: groups whose outcomes tie still carry turn-reward advantages, and are not called collapsed', async () => {
    const { dump, row } = await lastBatch({ methods: 'igpo' }, 2);
    const counts = checkView(dump);
    expect(row.groups_all_equal_frac).toBeGreaterThan(0);
    expect(counts.tied).toBeGreaterThan(0);
    expect(counts.collapsed).toBeLessThan(Math.round(row.groups_all_equal_frac * counts.groups));
  });

  it('DARS: extra rollouts sit in their prompt group, unused slots are not drawn, filtered prompts are dropped', async () => {
    const { dump } = await lastBatch({ methods: 'grpo,dars', batch: '8' }, 2);
    const counts = checkView(dump);
    const extras = dump.trajs.filter((t) => t.origin === 'extra');
    expect(extras.length).toBeGreaterThan(0);
    expect(counts.extra).toBe(extras.length);
    const rows = groupRows(dump);
    for (const r of rows) {
      const own = r.trajs.filter((t) => t.origin === 'policy').length;
      expect(own).toBe(dump.config.group);
    }
    expect(dump.trajs.some((t) => t.origin === 'unused')).toBe(true);
    // Every dropped group is a prompt DARS filtered out, not an all-equal group it trained on.
    for (const r of rows.filter((x) => x.state === 'dropped')) expect(r.trajs.every((t) => !t.kept)).toBe(true);
    expect(counts.dropped).toBe(rows.filter((r) => r.trajs.every((t) => !t.kept)).length);
  });

  it('EDGE-GRPO: corrected rollouts stay in their group, marked', async () => {
    const { dump } = await lastBatch({ methods: 'grpo,edge', 'edge.inject': '0.5', 'edge.replace': '0.5' }, 2);
    const counts = checkView(dump);
    const corrected = dump.trajs.filter((t) => t.origin === 'gec_inject' || t.origin === 'gec_replace');
    expect(corrected.length).toBeGreaterThan(0);
    expect(counts.corrected).toBe(corrected.length);
    for (const r of groupRows(dump)) expect(r.trajs).toHaveLength(dump.config.group);
  });

  it('DAPO: the dynamic sampling keeps groups that still have a signal', async () => {
    const { dump } = await lastBatch({ methods: 'grpo,dapo' }, 2);
    const counts = checkView(dump);
    expect(counts.dropped).toBe(0);
  });
});
