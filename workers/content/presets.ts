/**
 * Named run-config presets: partial configs in the shape parseConfig (workers/core/config.ts) accepts,
 * so a preset is validated exactly like a config file or an imported run, and every field it does
 * not name keeps its default.
 *
 * - `classroom`: the defaults (search task, 16 prompts x 8 rollouts, K 8, D 16, H 64): sized for a
 *   laptop's CPU, where the app's auto mode usually runs it.
 * - `scale`: sized for a real GPU: 1024 rollouts per iteration (128 prompts x 8), a 512-unit hidden
 *   layer and 64-wide embeddings over 8 context tokens, on the sequence task with the largest symbol
 *   alphabet. About 280k parameters and 3072 training rows per update. With the first layer factored
 *   through the vocabulary (kernels/model/mlp.ts embedProjectCpu) a forward pass over the batch is ~0.1
 *   GFLOP (it was ~1.7 unfactored): on this project's 2-core machine one iteration takes ~0.7 s on
 *   the CPU backend and ~1.9 s on a software adapter (SwiftShader; BENCHMARKS.md), and a GPU is meant
 *   to run it at several iterations per second.
 *   The sequence reward is `partial`: with 16 symbols an exact match is 1 in 16^3, so under `exact`
 *   almost every group of 8 gets all-equal rewards and GRPO has no signal to learn from.
 */
import { CONFIG_FIELDS, parseConfig, type RunConfig } from '../core/config';

export interface Preset {
  /** Short name shown in a picker. */
  label: string;
  /** One sentence on who it is for. */
  doc: string;
  /** The fields the preset sets (nested as in RunConfig); everything else keeps its default. */
  config: Record<string, unknown>;
}

export const PRESETS = {
  classroom: {
    label: 'classroom (defaults)',
    doc: 'The defaults: a small model and batch that train in seconds on a laptop CPU or any GPU.',
    config: {},
  },
  scale: {
    label: 'scale (real GPU)',
    doc: '1024 rollouts (128 prompts x 8), hidden 512, embedding 64, context 8, on the sequence task with 16 symbols: for a hardware GPU; on a 2-core laptop about 0.2 s per iteration on the CPU backend at first (less once it learns), 2 s on a software adapter.',
    config: {
      task: 'sequence',
      batch: 128,
      group: 8,
      model: { hidden: 512, embed: 64, context: 8 },
      env: { symbols: CONFIG_FIELDS['env.symbols'].max, seqReward: 'partial' },
    },
  },
} as const satisfies Record<string, Preset>;

export type PresetId = keyof typeof PRESETS;
export const PRESET_IDS = Object.keys(PRESETS) as PresetId[];

/** The full RunConfig of a preset (defaults filled in); throws ConfigError if a preset is invalid. */
export function presetConfig(id: PresetId): RunConfig {
  return parseConfig(structuredClone(PRESETS[id].config));
}

/** A preset as flat `key=value` text (CLI `--set` syntax, bench ScaleSpec.set). */
export function presetSettings(id: PresetId): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (o: Record<string, unknown>, prefix: string) => {
    for (const [k, v] of Object.entries(o)) {
      const key = prefix ? `${prefix}.${k}` : k;
      if (typeof v === 'object' && v !== null && !Array.isArray(v)) walk(v as Record<string, unknown>, key);
      else out[key] = Array.isArray(v) ? v.join(',') : String(v);
    }
  };
  walk(PRESETS[id].config, '');
  return out;
}
