/**
 * Section 4, in the page: iteration time as one axis at a time doubles (batch, sequence length via
 * the turn limit, vocabulary via the task's values/entities, hidden size), on the GPU and CPU
 * backends side by side; the log-log slope says how each grows.
 */
import { createCpuBackend } from '../../workers/core/cpuBackend';
import { createGpuBackend } from '../../workers/core/gpuBackend';
import { requestGpu } from '../../workers/core/gpuDevice';
import { benchInterleaved, configFor, type Contender, type ScaleSpec } from '../lib/iteration';
import { iterationFlops } from '../lib/kernelCases';
import { growthWord, logLogSlope, segmentSlopes } from '../lib/stats';
import type { IterationRow, ScalingAxis, ScalingPoint } from '../lib/types';

export interface AxisPlan {
  axis: ScalingAxis['axis'];
  points: Array<{ x: number; label: string; set: Record<string, string> }>;
}

export interface ScalingOptions {
  axes: AxisPlan[];
  warmup: number;
  reps: number;
  backends: Array<'gpu' | 'cpu'>;
}

/** Turns a run's rows (one per point, per backend) into axes with slopes. */
export function scalingAxes(plan: AxisPlan, backend: 'gpu' | 'cpu', where: 'chromium' | 'node', rows: IterationRow[]): ScalingAxis {
  const points: ScalingPoint[] = plan.points.map((p, i) => ({
    x: p.x,
    label: p.label,
    R: rows[i]?.R ?? NaN,
    iterMs: rows[i]!.iterMs,
    rolloutMs: rows[i]!.rolloutMs,
    updateMs: rows[i]!.updateMs,
  }));
  const xs = points.map((p) => p.x);
  // Slopes of the minimum times: on a shared machine other load only ever adds time, so the
  // minimum is the least disturbed estimate; the median-based slope is kept for comparison.
  const slope = (k: 'iterMs' | 'rolloutMs' | 'updateMs', pick: 'min' | 'median' = 'min') =>
    logLogSlope(xs, points.map((p) => p[k][pick]));
  const slopeIter = slope('iterMs');
  const work = plan.points.map((p) => iterationFlops(configFor(p.set)));
  return {
    axis: plan.axis,
    backend,
    where,
    points,
    slopeIter,
    slopeIterMedian: slope('iterMs', 'median'),
    slopeUpdate: slope('updateMs'),
    slopeRollout: slope('rolloutMs'),
    segmentSlopes: segmentSlopes(xs, points.map((p) => p.iterMs.min)),
    workSlopeUpdate: logLogSlope(xs, work.map((w) => w.update)),
    workSlopeIter: logLogSlope(xs, work.map((w) => w.update + w.rollout)),
    growth: growthWord(slopeIter),
  };
}

export async function runScaling(o: ScalingOptions, log: (m: string) => void): Promise<{ axes: ScalingAxis[]; notes: string[] }> {
  const notes: string[] = [];
  let gpu: Awaited<ReturnType<typeof requestGpu>> | null = null;
  if (o.backends.includes('gpu')) {
    try {
      gpu = await requestGpu(navigator.gpu);
    } catch (e) {
      notes.push(`GPU backend unavailable: ${(e as Error).message}`);
    }
  }
  const axes: ScalingAxis[] = [];
  for (const plan of o.axes) {
    const byBackend: Record<'gpu' | 'cpu', IterationRow[]> = { gpu: [], cpu: [] };
    // Every point of the axis and both backends in one interleaved loop (A B C A B C ...).
    const entries: Array<{ spec: ScaleSpec; contender: Contender }> = [];
    for (const p of plan.points) {
      const spec: ScaleSpec = { name: `${plan.axis}=${p.label}`, set: p.set, warmup: o.warmup, reps: o.reps };
      if (gpu) {
        const g = gpu;
        entries.push({ spec, contender: { backend: 'gpu', where: 'chromium', factory: (shape, params) => createGpuBackend(g.device, shape, params, { label: g.label }) } });
      }
      if (o.backends.includes('cpu')) entries.push({ spec, contender: { backend: 'cpu', where: 'chromium', factory: createCpuBackend } });
    }
    for (const r of await benchInterleaved(entries, o.warmup, o.reps, log)) byBackend[r.backend].push(r);
    for (const b of ['gpu', 'cpu'] as const) {
      if (byBackend[b].length === plan.points.length) axes.push(scalingAxes(plan, b, 'chromium', byBackend[b]));
    }
  }
  gpu?.device.destroy();
  return { axes, notes };
}
