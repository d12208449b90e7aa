/**
 * The update's stage table (workers/core/update/stages.ts): over the run shapes of every method, a
 * stage reads only what the trainer gives the update or what an earlier stage of the same walk has
 * written, and the walk runs the prepare stages, each optimizer step's, then the finish stages.
 */
import { describe, expect, it } from 'vitest';
import { defaultConfig, withFieldText, type RunConfig } from '../../workers/core/config';
import { createEnv } from '../../workers/core/envs';
import { METHOD_IDS, methodDef } from '../../workers/core/methods';
import { resolvePlan } from '../../workers/core/plan';
import { buildShape } from '../../workers/core/trainer';
import { UPDATE_INPUTS, UPDATE_TENSORS, updateStepRefs, type Tensor } from '../../workers/core/update/stage';
import { dispatchCounts, stagesOf, UPDATE_STAGES, walkUpdate } from '../../workers/core/update/stages';

function config(set: Record<string, string>): RunConfig {
  let cfg = defaultConfig();
  if (set.task) cfg = withFieldText(cfg, 'task', set.task);
  for (const [k, v] of Object.entries(set)) if (k !== 'task') cfg = withFieldText(cfg, k, v);
  return cfg;
}

/** A run of every method (on its own task, with GRPO where it is no estimator), plus staleness and several steps. */
const CONFIGS: RunConfig[] = METHOD_IDS.map((id) => {
  const def = methodDef(id);
  return config({
    ...(def.tasks ? { task: def.tasks[0]! } : {}),
    methods: def.estimator ? id : `grpo,${id}`,
    batch: '2',
    group: '4',
    epochs: '2',
    minibatches: '2',
    ...(id === 'vcpo' ? { staleness: '2' } : {}),
  });
});

const shapeOf = (cfg: RunConfig) => {
  const plan = resolvePlan(cfg);
  return buildShape(cfg, createEnv(plan.envConfig), plan);
};

describe('the update stage table', () => {
  it('names each stage once, with tensors of the table and kernels of the selector table', () => {
    const names = UPDATE_STAGES.map((s) => s.name);
    expect(new Set(names).size).toBe(names.length);
    for (const s of UPDATE_STAGES) {
      for (const x of [...s.reads, ...s.writes]) expect(UPDATE_TENSORS, `${s.name}: ${x}`).toContain(x);
      // The rollout correction is the host's work between two submits: no kernel of its own.
      if (s.part !== 'correction') expect(s.kernels.length, s.name).toBeGreaterThan(0);
      expect(s.reference, s.name).toMatch(/^kernels\/[\w/]+\.ts: \w+/);
    }
  });

  it('stages appear in phase order: prepare, step, finish', () => {
    const order = { prepare: 0, step: 1, finish: 2 };
    const phases = UPDATE_STAGES.map((s) => order[s.phase]);
    expect(phases).toEqual([...phases].sort((a, b) => a - b));
  });

  for (const cfg of CONFIGS) {
    it(`${cfg.methods.join('+')}: every read is an input or written earlier in the walk`, () => {
      const shape = shapeOf(cfg);
      const stages = stagesOf(shape);
      const writers = new Set(stages.flatMap((s) => s.writes));
      for (const raw of [false, ...(shape.sft ? [true] : [])]) {
        const written = new Set<Tensor>(UPDATE_INPUTS);
        const visited: string[] = [];
        walkUpdate(stages, updateStepRefs(shape), { raw }, (i, step) => {
          const s = stages[i]!;
          // What no stage of this run writes stays as the update found it (optional inputs).
          const missing = s.reads.filter((x) => writers.has(x) && !written.has(x));
          expect(missing, `${s.name} reads ${missing.join(', ')} before any stage writes it`).toEqual([]);
          for (const x of s.writes) written.add(x);
          visited.push(`${s.phase}:${s.name}${step ? `@${step.index}` : ''}`);
        });
        const steps = updateStepRefs(shape).length;
        expect(visited.filter((v) => v.startsWith('step:optimizer')).length).toBe(steps);
        expect(visited.at(-1)).toBe('finish:finiteCheck');
        // Exactly one advantage per update.
        expect(visited.filter((v) => /^prepare:(sftAdvantage|criticAdvantage|tokenBaseline|advantage)$/.test(v))).toHaveLength(1);
      }
    });
  }

  it('the dispatch count sums the kernels of every stage an update runs', () => {
    const shape = shapeOf(config({ batch: '2', group: '4', epochs: '2', minibatches: '2' }));
    // Log-probs (ref, old: 4 each), trajStats, advantage, essScale x 2; 15 per optimizer step less
    // the first step's embedProject and forward; stats (2), negOutShare, mismatchStats, finiteCheck.
    expect(dispatchCounts(shape).update).toBe(12 + 15 * 4 - 3 + 5);
    // A sampler that is not the trainer: the rollout's log-probs (4), as for stale rollouts.
    const bf16 = shapeOf(config({ batch: '2', group: '4', epochs: '2', minibatches: '2', 'rollout.precision': 'bf16' }));
    expect(dispatchCounts(bf16).update).toBe(dispatchCounts(shape).update + 4);
    const vcpo = shapeOf(config({ methods: 'vcpo', staleness: '1', batch: '2', group: '4', epochs: '2', minibatches: '2' }));
    // The stale policy's log-probs (4), the gradient norms (3) and each step's ESS (2 x 4 steps).
    expect(dispatchCounts(vcpo).update).toBe(dispatchCounts(shape).update + 4 + 3 + 8);
  });
});
