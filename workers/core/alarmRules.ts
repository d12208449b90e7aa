/**
 * The alarm rules: the training pathologies the playground watches for, detected from metric rows.
 * Pure (no DOM, no page state), so the page's charts (app/alarms.ts, app/store/metricsSlice.ts) and
 * `npm run -s diagnose` on an imported verl or TRL log (cli/diagnose.ts) run the same rules.
 * One marker per episode: an episode starts when its condition holds (on a short moving average
 * where one iteration of a small batch is noise) and ends only once the metric has clearly
 * recovered for several iterations in a row, so a value hovering at the threshold is one episode,
 * not many. Thresholds are relative to the run's own history where the metric has no natural scale
 * (the gradient norm against its typical size while the run learned, entropy against its start).
 * Once a run has converged (its success held high), a solved task's all-equal groups, its settled
 * entropy and its tiny gradients are what converging looks like: alarms stay silent then unless the
 * value is large in absolute terms.
 */
import type { Pathology } from './methods/registry';
import type { MetricRow } from './metrics';

export type AlarmKind = Pathology;
export const ALARM_KINDS: AlarmKind[] = ['collapse', 'ess', 'grad', 'entropy'];

export const ALARM_THRESHOLDS = {
  /** Iterations the all-equal share and the success rate are averaged over (a batch of 8 groups moves in steps of 1/8). */
  smooth: 5,
  /** Fires when the all-equal-group share reaches this while most rollouts fail; the episode ends below `collapseRearm`. */
  collapse: 0.5,
  collapseRearm: 0.3,
  /** Fires when the normalized ESS falls below this; the episode ends above `essRearm`. */
  ess: 0.5,
  essRearm: 0.7,
  /**
   * Fires when the gradient norm exceeds this many times its typical size: the median of the last
   * `gradWindow` values, never taken below `gradFloor` times the largest such median the run has
   * seen (a run's gradients shrink as it learns; jitter far below its learning-phase scale means nothing).
   */
  gradSpike: 4,
  gradWindow: 20,
  gradFloor: 0.25,
  /** Fires when entropy falls below this fraction of its first value; the episode ends above `entropyRearm`. */
  entropy: 0.2,
  entropyRearm: 0.35,
  /** An episode ends after this many iterations in a row past its re-arm line. */
  recover: 5,
  /** Converged: the success rate averaged over the last `convergedWindow` iterations at least this. */
  converged: 0.9,
  convergedWindow: 10,
  /** Once converged, the ESS alarm only below this (an ESS that low is a problem however the run stands). */
  essConverged: 0.2,
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
    explain: `At least ${T.collapse * 100}% of groups have all-equal rewards while most rollouts fail: their advantages are 0 and they teach nothing (docs/METHODS.md 3).`,
    chart: 'groups_all_equal_frac',
  },
  ess: {
    title: 'Effective sample size (ESS) drop',
    explain: `The effective sample size fell below ${T.ess}: a few sequences carry most of the importance weight, so the gradient is high-variance.`,
    chart: 'ess',
  },
  grad: {
    title: 'Gradient-norm spike',
    explain: `The gradient norm jumped above ${T.gradSpike}x its typical size: one batch or a few tokens dominate the update.`,
    chart: 'grad_norm',
  },
  entropy: {
    title: 'Entropy collapse',
    explain: `Entropy fell below ${T.entropy * 100}% of its starting value while most rollouts fail: the policy has stopped exploring, so groups become all-equal.`,
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
  /** Per kind: in an episode (fired, not yet recovered), and the recovered iterations in a row. */
  open: Record<AlarmKind, boolean>;
  calm: Record<AlarmKind, number>;
  entropy0: number | null;
  grads: number[];
  /** The largest median of the gradient-norm window so far: the scale `gradFloor` is relative to. */
  gradPeak: number;
  /** The last values of the all-equal share and of the success rate (moving averages). */
  allEqual: number[];
  success: number[];
  /** The iteration the run was first seen converged (alarms silent from then on unless large), or null. */
  convergedAt: number | null;
}

export function initialAlarmState(): AlarmState {
  const no = { collapse: false, ess: false, grad: false, entropy: false };
  return { open: { ...no }, calm: { collapse: 0, ess: 0, grad: 0, entropy: 0 }, entropy0: null, grads: [], gradPeak: 0, allEqual: [], success: [], convergedAt: null };
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

function mean(xs: readonly number[]): number {
  return xs.reduce((a, b) => a + b, 0) / xs.length;
}

function push(xs: number[], x: number, n: number): void {
  xs.push(x);
  if (xs.length > n) xs.shift();
}

/** The alarms that `rows` set off, one per episode; updates `state` in place. */
export function detectAlarms(rows: readonly MetricRow[], state: AlarmState): Alarm[] {
  const out: Alarm[] = [];
  /** An episode starts when `fires`; it ends after T.recover iterations in a row of `recovered`. */
  const episode = (kind: AlarmKind, iter: number, value: number, fires: boolean, recovered: boolean) => {
    if (!state.open[kind]) {
      if (fires) {
        out.push({ kind, iter, value });
        state.open[kind] = true;
        state.calm[kind] = 0;
      }
      return;
    }
    state.calm[kind] = recovered ? state.calm[kind] + 1 : 0;
    if (state.calm[kind] >= T.recover) state.open[kind] = false;
  };
  for (const r of rows) {
    if (Number.isFinite(r.success_rate)) push(state.success, r.success_rate, T.convergedWindow);
    const converged = state.success.length >= T.convergedWindow && mean(state.success) >= T.converged;
    if (converged) state.convergedAt ??= r.iter;
    const recentSuccess = state.success.length > 0 ? mean(state.success.slice(-T.smooth)) : 0;

    const f = r.groups_all_equal_frac;
    if (Number.isFinite(f)) {
      push(state.allEqual, f, T.smooth);
      const avg = mean(state.allEqual);
      // Groups that all succeed tie too: a collapse is ties while most rollouts fail.
      episode('collapse', r.iter, avg, !converged && avg >= T.collapse && recentSuccess < 0.5, avg < T.collapseRearm || recentSuccess >= 0.5);
    }
    const ess = r.ess;
    if (Number.isFinite(ess)) episode('ess', r.iter, ess, ess < (converged ? T.essConverged : T.ess), ess > T.essRearm);
    const g = r.grad_norm;
    if (Number.isFinite(g)) {
      if (state.grads.length >= 5) {
        const med = median(state.grads);
        // The learning-phase scale: a converged run's gradients no longer raise it.
        if (!converged) state.gradPeak = Math.max(state.gradPeak, med);
        const scale = converged ? state.gradPeak : Math.max(med, T.gradFloor * state.gradPeak);
        const spike = scale > 0 && g > T.gradSpike * scale;
        episode('grad', r.iter, g, spike, !spike);
      }
      push(state.grads, g, T.gradWindow);
    }
    const h = r.entropy;
    if (Number.isFinite(h)) {
      state.entropy0 ??= h;
      const h0 = state.entropy0;
      // A policy that is learning its way to success (or has) grows confident: low entropy is then
      // the goal, not a collapse. The alarm is for a policy that stopped exploring while it fails.
      const learning = converged || recentSuccess >= 0.5;
      if (h0 > 0) episode('entropy', r.iter, h, !learning && h < T.entropy * h0, h > T.entropyRearm * h0 || learning);
    }
  }
  return out;
}
