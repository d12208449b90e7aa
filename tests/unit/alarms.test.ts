import { describe, expect, it } from 'vitest';
import { alarmExplain, detectAlarms, initialAlarmState, remediesFor } from '../../app/alarms';
import type { MetricRow } from '../../workers/core/metrics';

/** Rows with only the gradient norm set (the other alarms' metrics absent). */
function gradRows(values: number[]): MetricRow[] {
  return values.map((g, i) => ({ iter: i + 1, grad_norm: g }) as unknown as MetricRow);
}

describe('the gradient-norm alarm', () => {
  it('fires on a spike against the run’s scale', () => {
    const alarms = detectAlarms(gradRows([0.5, 0.4, 0.6, 0.5, 0.45, 0.55, 3.5]), initialAlarmState());
    expect(alarms.map((a) => [a.kind, a.iter])).toEqual([['grad', 7]]);
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
