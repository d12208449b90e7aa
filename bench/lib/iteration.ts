/**
 * Whole training iterations through the real trainer (workers/core/trainer.ts createTrainer), timed per
 * phase by wrapping the backend: rollout = step start to the update call (sampling turns, the task's
 * answers, uploads), of which the time inside the backend's sampleTurn calls (on the GPU: submit,
 * the GPU's work, the readback of the tokens) is also given, so that the rest is the host's work
 * between them; update = the backend's update() (one submit, one readback on the GPU), and the
 * whole step. Several backends can run side by side: their steps alternate (A B A B ...), as
 * so drift on a shared machine hits them alike. Runs in the
 * benchmark page and in Node.
 */
import type { Backend } from '../../workers/core/backend';
import { defaultConfig, withFieldText, type RunConfig } from '../../workers/core/config';
import { dispatchCounts } from '../../workers/core/update/stages';
import type { KernelVariant } from '../../kernels/selectors';
import { createTrainer, type BackendFactory, type Trainer } from '../../workers/core/trainer';
import { addCounts, diffCounts, scaleCounts, zeroCounts, type CountingDevice } from './counting';
import { now, summarize } from './stats';
import type { GpuCounts, IterationRow } from './types';

/** One iteration scale of section 2 (or one point of section 4). */
export interface ScaleSpec {
  name: string;
  /** Config overrides as `key=value` text (CLI syntax), applied to the classroom default. */
  set: Record<string, string>;
  warmup: number;
  reps: number;
}

export function configFor(set: Record<string, string>): RunConfig {
  let cfg = defaultConfig();
  for (const [k, v] of Object.entries(set)) cfg = withFieldText(cfg, k, v);
  return cfg;
}

export interface Contender {
  backend: 'gpu' | 'cpu';
  where: 'chromium' | 'node';
  factory: BackendFactory;
  /** The device the GPU backend was built on, to count its calls. */
  counting?: CountingDevice;
  /** The GPU backend's kernel variant, for the dispatches it should record (dispatchCounts). */
  kernelVariant?: KernelVariant;
}

interface StepSample {
  iterMs: number;
  rolloutMs: number;
  sampleTurnMs: number;
  updateMs: number;
  tokens: number;
  turns: number;
  rollout?: GpuCounts;
  update?: GpuCounts;
  total?: GpuCounts;
}

/** A trainer for one entry, on a backend wrapped to time and count its update() and turns. */
async function openRun(spec: ScaleSpec, c: Contender) {
  const cfg = configFor(spec.set);
  const probe = { u0: 0, u1: 0, turns: 0, sampleMs: 0, c0: zeroCounts(), c1: zeroCounts() };
  const snap = () => c.counting?.snapshot() ?? zeroCounts();
  const factory: BackendFactory = async (shape, params) => {
    const b = await c.factory(shape, params);
    const wrapped: Backend = {
      ...b,
      kind: b.kind,
      label: b.label,
      sampleTurn: async (turn, iter) => {
        probe.turns++;
        const t0 = now();
        try {
          return await b.sampleTurn(turn, iter);
        } finally {
          probe.sampleMs += now() - t0;
        }
      },
      update: async (inp) => {
        probe.c0 = snap();
        probe.u0 = now();
        const s = await b.update(inp);
        probe.u1 = now();
        probe.c1 = snap();
        return s;
      },
    };
    return wrapped;
  };
  let trainer: Trainer | null = null;
  let error: string | undefined;
  try {
    trainer = await createTrainer(cfg, factory);
  } catch (e) {
    error = (e as Error).message;
  }
  return { c, spec, cfg, probe, snap, trainer, error, samples: [] as StepSample[], createdWhileTimed: 0 };
}

/** Runs `spec` on every contender, interleaved step by step; one row per contender. */
export function benchIterations(spec: ScaleSpec, contenders: Contender[], log: (msg: string) => void = () => {}): Promise<IterationRow[]> {
  return benchInterleaved(contenders.map((contender) => ({ spec, contender })), spec.warmup, spec.reps, log);
}

/**
 * Runs every (spec, contender) entry with its own trainer, interleaved step by step: one step of
 * each entry per round, `warmup` untimed rounds then `reps` timed ones. Different sizes of one
 * scaling axis go in one call, so slow phases of a shared machine hit every size alike.
 */
export async function benchInterleaved(
  entries: Array<{ spec: ScaleSpec; contender: Contender }>,
  warmup: number,
  reps: number,
  log: (msg: string) => void = () => {},
): Promise<IterationRow[]> {
  const runs = [];
  for (const { spec, contender } of entries) runs.push(await openRun(spec, contender));
  const total = warmup + reps;
  for (let i = 0; i < total; i++) {
    for (const r of runs) {
      if (!r.trainer || r.error) continue;
      r.probe.turns = 0;
      r.probe.sampleMs = 0;
      const s0 = r.snap();
      const t0 = now();
      let row;
      try {
        row = await r.trainer.step();
      } catch (e) {
        r.error = (e as Error).message;
        continue;
      }
      const t1 = now();
      const s1 = r.snap();
      if (i < warmup) continue;
      const sample: StepSample = {
        iterMs: t1 - t0,
        rolloutMs: r.probe.u0 - t0,
        sampleTurnMs: r.probe.sampleMs,
        updateMs: r.probe.u1 - r.probe.u0,
        tokens: row.tokens,
        turns: r.probe.turns,
      };
      if (r.c.counting) {
        sample.total = diffCounts(s0, s1);
        sample.update = diffCounts(r.probe.c0, r.probe.c1);
        sample.rollout = diffCounts(s0, r.probe.c0);
        r.createdWhileTimed += sample.total.buffersCreated;
      }
      r.samples.push(sample);
    }
    const names = [...new Set(runs.map((r) => r.spec.name))].join(', ');
    log(`iteration: ${names} ${i < warmup ? 'warm-up' : 'rep'} ${i + 1}/${total} ` +
      runs.map((r) => `${r.c.backend}@${r.c.where} ${i < warmup ? '-' : r.samples.at(-1)?.iterMs.toFixed(0) ?? '-'} ms`).join(', '));
  }
  return runs.map((r) => {
    const { spec, cfg } = r;
    const shape = r.trainer?.shape;
    const s = r.samples;
    const iterMs = summarize(s.map((x) => x.iterMs));
    const tokens = summarize(s.map((x) => x.tokens)).median;
    const turns = s.length ? s.reduce((a, x) => a + x.turns, 0) / s.length : NaN;
    const row: IterationRow = {
      backend: r.c.backend,
      where: r.c.where,
      scale: spec.name,
      batch: cfg.batch,
      group: cfg.group,
      N: shape?.N ?? cfg.batch * cfg.group,
      R: shape ? shape.N * shape.Tp : NaN,
      warmup: spec.warmup,
      reps: s.length,
      iterMs,
      rolloutMs: summarize(s.map((x) => x.rolloutMs)),
      sampleTurnMs: summarize(s.map((x) => x.sampleTurnMs)),
      updateMs: summarize(s.map((x) => x.updateMs)),
      tokens,
      tokensPerSec: tokens / (iterMs.median / 1000),
      turns,
      ...(r.error ? { error: r.error } : {}),
    };
    if (r.c.counting && shape && s.length) {
      const mean = (pick: (x: StepSample) => GpuCounts) => {
        const acc = zeroCounts();
        for (const x of s) addCounts(acc, pick(x));
        return scaleCounts(acc, 1 / s.length);
      };
      const dc = dispatchCounts(shape);
      row.counts = {
        perIter: mean((x) => x.total!),
        rollout: mean((x) => x.rollout!),
        update: mean((x) => x.update!),
        turns,
        expected: { dispatches: turns * dc.sampleTurn + dc.update, readbacks: turns + 1, submits: turns + 1 },
        buffersCreatedWhileTimed: r.createdWhileTimed,
      };
    }
    r.trainer?.destroy();
    return row;
  });
}
