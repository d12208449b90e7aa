/**
 * The alarm rules: the training pathologies the playground watches for, detected from metric rows.
 * Pure (no DOM, no page state), so the page's charts (app/alarms.ts, app/store/metricsSlice.ts) and
 * `npm run -s diagnose` on an imported verl or TRL log (cli/diagnose.ts) run the same rules. Each
 * alarm fires once when its condition starts (a rising edge) and re-arms only after the metric has
 * clearly recovered (hysteresis), so a value hovering at the threshold does not flood the timeline.
 */
import type { Pathology } from './methods/registry';
import type { MetricRow } from './metrics';

export type AlarmKind = Pathology;
export const ALARM_KINDS: AlarmKind[] = ['collapse', 'ess', 'grad', 'entropy'];

export const ALARM_THRESHOLDS = {
  /** Fires when the all-equal-group fraction reaches this; re-arms below `collapseRearm`. */
  collapse: 0.5,
  collapseRearm: 0.3,
  /** Fires when the normalized ESS falls below this; re-arms above `essRearm`. */
  ess: 0.5,
  essRearm: 0.7,
  /**
   * Fires when the gradient norm exceeds this many times the median of the last `gradWindow` values,
   * and that median is never taken below `gradFloor` times the largest median the run has seen: a
   * converged run's gradients (1e-10) jitter by large factors that mean nothing.
   */
  gradSpike: 4,
  gradWindow: 20,
  gradFloor: 0.05,
  /** Fires when entropy falls below this fraction of its first value; re-arms above `entropyRearm`. */
  entropy: 0.2,
  entropyRearm: 0.35,
} as const;

export interface AlarmDoc {
  title: string;
  /** One line: what happened and why it matters. */
  explain: string;
  /** The chart (group id) the alarm belongs to. */
  chart: string;
}

const T = ALARM_THRESHOLDS;

export const ALARM_DOCS: Record<AlarmKind, AlarmDoc> = {
  collapse: {
    title: 'Advantage Collapse',
    explain: `At least ${T.collapse * 100}% of groups have all-equal rewards: their advantages are 0 and they teach nothing (docs/METHODS.md 3).`,
    chart: 'groups_all_equal_frac',
  },
  ess: {
    title: 'ESS drop',
    explain: `The effective sample size fell below ${T.ess}: a few sequences carry most of the importance weight, so the gradient is high-variance.`,
    chart: 'ess',
  },
  grad: {
    title: 'Gradient-norm spike',
    explain: `The gradient norm jumped above ${T.gradSpike}x its recent median: one batch or a few tokens dominate the update.`,
    chart: 'grad_norm',
  },
  entropy: {
    title: 'Entropy collapse',
    explain: `Entropy fell below ${T.entropy * 100}% of its starting value: the policy has stopped exploring, so groups become all-equal.`,
    chart: 'entropy',
  },
};


export interface Alarm {
  kind: AlarmKind;
  iter: number;
  /** The metric value that set it off. */
  value: number;
}

/** Detection state carried from one batch of rows to the next. */
export interface AlarmState {
  armed: Record<AlarmKind, boolean>;
  entropy0: number | null;
  grads: number[];
  /** The largest median of the gradient-norm window so far: the scale `gradFloor` is relative to. */
  gradPeak: number;
}

export function initialAlarmState(): AlarmState {
  return { armed: { collapse: true, ess: true, grad: true, entropy: true }, entropy0: null, grads: [], gradPeak: 0 };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** The alarms that `rows` set off; updates `state` in place. */
export function detectAlarms(rows: readonly MetricRow[], state: AlarmState): Alarm[] {
  const out: Alarm[] = [];
  const { armed } = state;
  /** Rising edge with hysteresis: fire once when `fires`, re-arm only once `rearms`. */
  const edge = (kind: AlarmKind, iter: number, value: number, fires: boolean, rearms: boolean) => {
    if (armed[kind] && fires) {
      out.push({ kind, iter, value });
      armed[kind] = false;
    } else if (!armed[kind] && rearms) armed[kind] = true;
  };
  for (const r of rows) {
    const f = r.groups_all_equal_frac;
    if (Number.isFinite(f)) edge('collapse', r.iter, f, f >= T.collapse, f < T.collapseRearm);
    const ess = r.ess;
    if (Number.isFinite(ess)) edge('ess', r.iter, ess, ess < T.ess, ess > T.essRearm);
    const g = r.grad_norm;
    if (Number.isFinite(g)) {
      if (state.grads.length >= 5) {
        const med = median(state.grads);
        state.gradPeak = Math.max(state.gradPeak, med);
        const scale = Math.max(med, T.gradFloor * state.gradPeak);
        const spike = scale > 0 && g > T.gradSpike * scale;
        edge('grad', r.iter, g, spike, !spike);
      }
      state.grads.push(g);
      if (state.grads.length > T.gradWindow) state.grads.shift();
    }
    const h = r.entropy;
    if (Number.isFinite(h)) {
      state.entropy0 ??= h;
      const h0 = state.entropy0;
      if (h0 > 0) edge('entropy', r.iter, h, h < T.entropy * h0, h > T.entropyRearm * h0);
    }
  }
  return out;
}
