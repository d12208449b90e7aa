/**
 * RunConfig is derived from CONFIG_FIELDS (workers/core/config.ts): each field's type is its spec's
 * value type at its path, so a field added to the table is in the config type with nothing else to
 * write. Checked by the type checker (expectTypeOf) and at run time against defaultConfig().
 */
import { describe, expect, expectTypeOf, it } from 'vitest';
import { CONFIG_FIELDS, defaultConfig, getField, type DemoSource, type InitMode, type KlType, type LossAgg, type RunConfig, type TaskId } from '../../workers/core/config';
import type { NoiseSchedule } from '../../workers/core/envs/search';
import type { SeqReward } from '../../workers/core/envs/sequence';
import type { ToolReward } from '../../workers/core/envs/tools';
import type { ParamValue } from '../../workers/core/methods/params';

describe('RunConfig from CONFIG_FIELDS', () => {
  it('gives each field its spec type at its path', () => {
    expectTypeOf<RunConfig['task']>().toEqualTypeOf<TaskId>();
    expectTypeOf<RunConfig['seed']>().toEqualTypeOf<number>();
    expectTypeOf<RunConfig['init']>().toEqualTypeOf<{ mode: InitMode; steps: number; demoNoise: number; demos: DemoSource }>();
    expectTypeOf<RunConfig['model']>().toEqualTypeOf<{ context: number; embed: number; hidden: number }>();
    expectTypeOf<RunConfig['env']['noiseSchedule']>().toEqualTypeOf<NoiseSchedule>();
    expectTypeOf<RunConfig['env']['seqReward']>().toEqualTypeOf<SeqReward>();
    expectTypeOf<RunConfig['env']['toolReward']>().toEqualTypeOf<ToolReward>();
    expectTypeOf<RunConfig['env']['strictArgs']>().toEqualTypeOf<boolean>();
    expectTypeOf<RunConfig['klType']>().toEqualTypeOf<KlType>();
    expectTypeOf<RunConfig['lossAgg']>().toEqualTypeOf<LossAgg>();
    expectTypeOf<RunConfig['methods']>().toEqualTypeOf<string[]>();
    expectTypeOf<RunConfig['methodParams'][string]>().toEqualTypeOf<Record<string, ParamValue>>();
  });

  it('the default config has every field of the table, at its path, of its kind', () => {
    const cfg = defaultConfig();
    for (const [key, spec] of Object.entries(CONFIG_FIELDS)) {
      const v = getField(cfg, key);
      expect(v, key).toBe(spec.default);
      expect(typeof v, key).toBe(spec.kind === 'bool' ? 'boolean' : spec.kind === 'choice' ? 'string' : 'number');
    }
  });
});
