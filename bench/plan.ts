/**
 * What `npm run bench` measures, at full size and with --quick. Sizes are chosen so the full run
 * takes about five minutes on the 2-core CPU-only machine this project is developed on (SwiftShader
 * as the GPU); on a real GPU the same plan runs faster. Every warm-up and repetition count below is
 * printed next to its numbers.
 */
import { presetSettings } from '../workers/content/presets';
import type { BenchArgs } from './args';
import type { ScaleSpec } from './lib/iteration';
import type { KernelBenchOptions } from './page/kernels';
import type { PeerOptions } from './page/peer';
import type { AxisPlan, ScalingOptions } from './page/scaling';

export const SECTIONS = ['kernels', 'iteration', 'peer', 'scaling', 'page'] as const;
export type Section = (typeof SECTIONS)[number];

export interface Plan {
  kernels: Omit<KernelBenchOptions, 'log'>;
  /**
   * Section 2 scales: the classroom default (16 prompts x 8 rollouts), 8x and 64x the rollouts, and
   * the `scale` preset (workers/content/presets.ts: 1024 rollouts, H 512, D 64) on the GPU backend.
   */
  iteration: {
    scales: ScaleSpec[];
    /** Scales the GPU backend runs at (the others get a row saying why not). */
    gpuScales: string[];
    pageCpuScales: string[];
    nodeScales: ScaleSpec[];
  };
  peer: Omit<PeerOptions, 'wasmPath'>;
  scaling: ScalingOptions;
  /** `scales`: names of iteration scales; the page opens with each one's config as a share link. */
  page: { seconds: number; backends: Array<'cpu' | 'gpu'>; scales: string[] };
}

/** Vocabulary V = 6 specials + entities + attributes + values (workers/core/envs/search.ts). */
function vocabPoint(V: number): { x: number; label: string; set: Record<string, string> } {
  const A = 2;
  let E = 3;
  let values = V - 6 - E - A;
  if (values > 64) {
    E += values - 64;
    values = 64;
  }
  return { x: V, label: `V=${V} (${E} entities, ${values} values)`, set: { 'env.entities': String(E), 'env.values': String(values) } };
}

function scalingAxes(points: number, base: Record<string, string>): AxisPlan[] {
  const pts = <T>(all: T[]) => all.slice(0, points);
  const batchBase = Number(base.batch);
  return [
    {
      axis: 'batch',
      points: pts([1, 2, 4, 8]).map((m) => ({
        x: batchBase * m,
        label: `batch ${batchBase * m} (N=${batchBase * m * 8})`,
        set: { ...base, batch: String(batchBase * m) },
      })),
    },
    {
      axis: 'seqLen',
      points: pts([1, 2, 4, 8]).map((t) => ({
        x: t,
        label: `${t} turns (L=${4 + 5 * t}, Tp=${3 * t})`,
        set: { ...base, 'env.maxTurns': String(t) },
      })),
    },
    {
      axis: 'vocab',
      points: pts([19, 38, 76]).map((V) => {
        const p = vocabPoint(V);
        return { ...p, set: { ...base, ...p.set } };
      }),
    },
    {
      axis: 'hidden',
      points: pts([32, 64, 128, 256]).map((h) => ({ x: h, label: `H=${h}`, set: { ...base, 'model.hidden': String(h) } })),
    },
  ];
}

/**
 * `software`: the adapter is a software fallback (SwiftShader), where one GPU iteration at the
 * classroom default takes ~0.3 s and at 64x ~15 s: smaller kernel sizes, and the 8x, 64x and
 * `scale` GPU rows once each without warm-up.
 * On a hardware adapter the kernels run at the three iteration scales' row counts and at 8x the
 * largest, each cell after 250 ms of sustained GPU work (KernelBenchOptions.gpuWarmMs) and each
 * size after 3 s of it (gpuRampMs).
 */
export function makePlan(quick: boolean, software: boolean): Plan {
  const def = { batch: '16' };
  const x8 = { batch: '128' };
  const x64 = { batch: '1024' };
  if (quick) {
    return {
      kernels: { batches: [1, 4], paramHidden: [64, 256], warmup: 1, reps: 3, passMs: 2, maxDispatchesPerPass: 8, gpuWarmMs: 0, cellBudgetMs: 300 },
      iteration: {
        scales: [{ name: 'default', set: def, warmup: 1, reps: 2 }],
        gpuScales: ['default'],
        pageCpuScales: ['default'],
        nodeScales: [
          { name: 'default', set: def, warmup: 1, reps: 2 },
          { name: 'default/4', set: { batch: '4' }, warmup: 1, reps: 2 },
        ],
      },
      peer: { scaleName: 'default/4', set: { batch: '4' }, prepIters: 2, warmup: 1, reps: 2, backends: ['webgpu', 'wasm', 'cpu'], tolerance: 1e-3 },
      scaling: { axes: scalingAxes(2, { batch: '2' }), warmup: 1, reps: 2, backends: ['gpu', 'cpu'] },
      page: { seconds: 6, backends: ['cpu', 'gpu'], scales: ['default'] },
    };
  }
  return {
    kernels: software
      ? { batches: [1, 4, 16], paramHidden: [64, 256, 1024], warmup: 3, reps: 10, passMs: 5, maxDispatchesPerPass: 32, gpuWarmMs: 0, cellBudgetMs: 4000 }
      : {
          // The three iteration scales' row counts, and 8x the largest (1024 prompts, group 64:
          // 589,824 rows, past a GPU's L2 cache), where a kernel's time is its memory traffic
          // rather than its launch.
          batches: [16, 128, 1024, 1024],
          groups: [8, 8, 8, 64],
          paramHidden: [64, 256, 1024, 1024],
          warmup: 3,
          reps: 10,
          passMs: 5,
          maxDispatchesPerPass: 64,
          gpuWarmMs: 250,
          gpuRampMs: 3000,
          cellBudgetMs: 4000,
        },
    iteration: {
      scales: [
        { name: 'default', set: def, warmup: 3, reps: 10 },
        software ? { name: '8x', set: x8, warmup: 0, reps: 1 } : { name: '8x', set: x8, warmup: 2, reps: 5 },
        software ? { name: '64x', set: x64, warmup: 0, reps: 1 } : { name: '64x', set: x64, warmup: 1, reps: 3 },
        software ? { name: 'scale', set: presetSettings('scale'), warmup: 0, reps: 1 } : { name: 'scale', set: presetSettings('scale'), warmup: 2, reps: 5 },
      ],
      gpuScales: ['default', '8x', '64x', 'scale'],
      pageCpuScales: ['default'],
      nodeScales: [
        { name: 'default', set: def, warmup: 3, reps: 10 },
        { name: '8x', set: x8, warmup: 1, reps: 3 },
        { name: '64x', set: x64, warmup: 0, reps: 1 },
      ],
    },
    peer: {
      scaleName: 'default', set: def, prepIters: 2, backends: ['webgpu', 'wasm', 'cpu'], tolerance: 1e-3,
      ...(software ? { warmup: 2, reps: 5 } : { warmup: 3, reps: 10 }),
    },
    scaling: software
      ? { axes: scalingAxes(3, { batch: '2' }), warmup: 1, reps: 3, backends: ['gpu', 'cpu'] }
      : { axes: scalingAxes(4, { batch: '4' }), warmup: 2, reps: 5, backends: ['gpu', 'cpu'] },
    // On a hardware adapter the page also trains the `scale` preset: "an interactive rate on a
    // discrete GPU" is a claim about the page, not only about trainer.step().
    page: { seconds: 20, backends: ['cpu', 'gpu'], scales: software ? ['default'] : ['default', 'scale'] },
  };
}

/** The command-line overrides of a plan (bench/args.ts): kernel subset and sizes, GPU iteration scales, page configs. */
export function applyArgs(plan: Plan, args: Pick<BenchArgs, 'kernels' | 'kernelBatches' | 'kernelGroups' | 'gpuScales' | 'pageScales'>): Plan {
  const out = structuredClone(plan);
  if (args.kernels) out.kernels.only = args.kernels;
  if (args.kernelBatches) {
    const ph = plan.kernels.paramHidden;
    out.kernels.batches = args.kernelBatches;
    out.kernels.groups = args.kernelGroups ?? args.kernelBatches.map(() => 8);
    out.kernels.paramHidden = args.kernelBatches.map((_, i) => ph[Math.min(i, ph.length - 1)]!);
  }
  if (args.gpuScales) {
    const known = plan.iteration.scales.map((s) => s.name);
    for (const s of args.gpuScales) if (!known.includes(s)) throw new Error(`--gpu-scales: unknown scale "${s}" (expected ${known.join(', ')})`);
    out.iteration.gpuScales = args.gpuScales;
  }
  // `none`: no training runs, only the lesson ready times (they need no scale).
  if (args.pageScales?.length === 1 && args.pageScales[0] === 'none') out.page.scales = [];
  else if (args.pageScales) {
    const known = plan.iteration.scales.map((s) => s.name);
    for (const s of args.pageScales) if (!known.includes(s)) throw new Error(`--page-scales: unknown scale "${s}" (expected ${known.join(', ')}, or none)`);
    out.page.scales = args.pageScales;
  }
  return out;
}
