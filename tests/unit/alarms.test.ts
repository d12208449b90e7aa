/**
 * The alarms: one per episode, scale-aware, silent once a run has converged; on real runs, the
 * default config for 1,000 iterations raises none after it converges, and the Advantage Collapse
 * lesson's collapse alarm fires on the runs its text calls collapsed and not on the remedy's.
 */
import { describe, expect, it } from 'vitest';
import { ALARM_THRESHOLDS, alarmExplain, detectAlarms, initialAlarmState, remediesFor } from '../../app/alarms';
import { lessonById } from '../../workers/content/lessons';
import { trainLessonRun } from '../../workers/content/lessonRunner';
import { defaultConfig } from '../../workers/core/config';
import { createCpuBackend } from '../../workers/core/cpuBackend';
import type { MetricRow } from '../../workers/core/metrics';
import { createTrainer } from '../../workers/core/trainer';

/** Rows with only the gradient norm set (the other alarms' metrics absent). */
function gradRows(values: number[]): MetricRow[] {
  return values.map((g, i) => ({ iter: i + 1, grad_norm: g }) as unknown as MetricRow);
}

describe('the gradient-norm alarm', () => {
  it('fires on a spike against the run’s scale', () => {
    const alarms = detectAlarms(gradRows([0.5, 0.4, 0.6, 0.5, 0.45, 0.55, 3.5]), initialAlarmState());
    expect(alarms.map((a) => [a.kind, a.iter])).toEqual([['grad', 7]]);
  });

  it('stays quiet when a run’s gradients shrink as it learns and then jitter at a small fraction of their size', () => {
    // Learning at about 0.15; later most updates have no signal (0) and a few a small one (0.05).
    const learning = Array.from({ length: 40 }, (_, i) => 0.15 + 0.02 * Math.sin(i));
    const later = Array.from({ length: 200 }, (_, i) => (i % 9 === 4 ? 0.05 + 0.02 * (i % 2) : 0));
    expect(detectAlarms(gradRows([...learning, ...later]), initialAlarmState())).toEqual([]);
  });

  it('stays quiet when a converged run’s tiny gradients jitter', () => {
    // A run that learned, then converged: gradients fall to ~1e-10 and jump by 10x now and then.
    const learning = Array.from({ length: 30 }, (_, i) => 0.5 - i * 0.01);
    const converged = Array.from({ length: 60 }, (_, i) => (i % 7 === 3 ? 3.4e-10 : 2e-11));
    const alarms = detectAlarms(gradRows([...learning, ...converged]), initialAlarmState());
    expect(alarms).toEqual([]);
  });
});

describe('alarm remedies and wording', () => {
  it('never recommends a method that is already on', () => {
    expect(remediesFor('grad', ['grpo', 'gmpo']).map((r) => r.id)).not.toContain('gmpo');
    expect(remediesFor('grad', ['grpo']).map((r) => r.id)).toContain('gmpo');
    expect(remediesFor('collapse', ['igpo', 'edge']).map((r) => r.id)).toEqual(['cm2', 'dars', 'sampo']);
  });

  it('does not say tied outcomes mean zero advantages under per-turn rewards', () => {
    expect(alarmExplain('collapse', ['grpo'])).toMatch(/advantages are 0/);
    expect(alarmExplain('collapse', ['igpo'])).not.toMatch(/advantages are 0/);
    expect(alarmExplain('collapse', ['igpo'])).toMatch(/IGPO/);
  });
});

/** Rows of the all-equal share and the success rate. */
function collapseRows(pairs: Array<[number, number]>): MetricRow[] {
  return pairs.map(([f, s], i) => ({ iter: i + 1, groups_all_equal_frac: f, success_rate: s }) as unknown as MetricRow);
}

describe('episodes', () => {
  it('a share hovering at the threshold is one episode; a recovery of several iterations ends it, then it can fire again', () => {
    const hover = Array.from({ length: 40 }, (_, i): [number, number] => [i % 2 ? 0.625 : 0.375, 0.1]);
    const recovered = Array.from({ length: ALARM_THRESHOLDS.recover + 5 }, (): [number, number] => [0, 0.1]);
    const again = Array.from({ length: 10 }, (): [number, number] => [0.8, 0.1]);
    const alarms = detectAlarms(collapseRows([...hover, ...recovered, ...again]), initialAlarmState());
    expect(alarms.map((a) => a.kind)).toEqual(['collapse', 'collapse']);
    expect(alarms[1]!.iter).toBeGreaterThan(hover.length + recovered.length);
  });

  it('groups that tie because they all succeed are not a collapse', () => {
    expect(detectAlarms(collapseRows(Array.from({ length: 30 }, (): [number, number] => [0.9, 0.95])), initialAlarmState())).toEqual([]);
  });
});

describe('on real runs (CPU backend)', () => {
  it('the default run, 1,000 iterations: no alarm once it has converged', async () => {
    const t = await createTrainer(defaultConfig(), createCpuBackend);
    const rows: MetricRow[] = [];
    try {
      for (let i = 0; i < 1000; i++) rows.push(await t.step());
    } finally {
      t.destroy();
    }
    const w = ALARM_THRESHOLDS.convergedWindow;
    const convergedAt = rows.findIndex((_, i) => i >= w - 1 && rows.slice(i - w + 1, i + 1).reduce((a, r) => a + r.success_rate, 0) / w >= ALARM_THRESHOLDS.converged);
    expect(convergedAt, 'the default run converges').toBeGreaterThan(0);
    const alarms = detectAlarms(rows, initialAlarmState());
    expect(alarms.filter((a) => a.iter > rows[convergedAt]!.iter)).toEqual([]);
    // The flat stretch before it learns is a collapse, said once.
    expect(alarms.filter((a) => a.kind === 'collapse').length).toBeLessThanOrEqual(2);
  }, 300_000);

  it('the Advantage Collapse lesson: the collapse alarm fires on GRPO and the tools task’s outcome reward, not on CM2', async () => {
    const lesson = lessonById('collapse')!;
    const kinds = async (run: string) => detectAlarms((await trainLessonRun(lesson, run, 1)).rows, initialAlarmState()).map((a) => a.kind);
    expect(await kinds('grpo')).toContain('collapse');
    expect(await kinds('tools')).toContain('collapse');
    expect(await kinds('cm2')).not.toContain('collapse');
  }, 300_000);
});
