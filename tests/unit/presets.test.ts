import { describe, expect, it } from 'vitest';
import { CONFIG_FIELDS, defaultConfig, parseConfig, withFieldText } from '../../workers/core/config';
import { createEnv } from '../../workers/core/envs';
import { PRESET_IDS, PRESETS, presetConfig, presetSettings } from '../../workers/content/presets';
import { buildShape } from '../../workers/core/trainer';
import { paramLayout } from '../../kernels/model/mlp';

describe('config presets', () => {
  it('every preset validates through parseConfig, also after a JSON round trip', () => {
    expect(PRESET_IDS).toEqual(expect.arrayContaining(['classroom', 'scale']));
    for (const id of PRESET_IDS) {
      const cfg = parseConfig(JSON.parse(JSON.stringify(PRESETS[id].config)));
      expect(presetConfig(id), id).toEqual(cfg);
      expect(parseConfig(JSON.parse(JSON.stringify(cfg))), id).toEqual(cfg);
    }
  });

  it('classroom is the defaults', () => {
    expect(presetConfig('classroom')).toEqual(defaultConfig());
  });

  it('scale: about 1024 rollouts, hidden 512, embed 64, context 8, sequence task with the most symbols', () => {
    const cfg = presetConfig('scale');
    expect(cfg.task).toBe('sequence');
    expect(cfg.batch * cfg.group).toBe(1024);
    expect(cfg.model).toEqual({ hidden: 512, embed: 64, context: 8 });
    expect(cfg.env.symbols).toBe(CONFIG_FIELDS['env.symbols'].max);
    expect(cfg.env.seqReward).toBe('partial');
    const shape = buildShape(cfg, createEnv(cfg));
    expect(shape.N).toBe(1024);
    expect(shape.dims).toMatchObject({ K: 8, D: 64, H: 512 });
    expect(shape.N * shape.Tp).toBe(3072);
    expect(paramLayout(shape.dims).size).toBeGreaterThan(250_000);
  });

  it('flat key=value settings give the same config as the preset', () => {
    for (const id of PRESET_IDS) {
      let cfg = defaultConfig();
      for (const [k, v] of Object.entries(presetSettings(id))) cfg = withFieldText(cfg, k, v);
      expect(cfg, id).toEqual(presetConfig(id));
    }
    expect(presetSettings('scale')).toMatchObject({ task: 'sequence', 'model.hidden': '512', 'env.symbols': '16' });
  });

  it('presetConfig returns a fresh object each time', () => {
    const a = presetConfig('scale');
    a.model.hidden = 4;
    expect(presetConfig('scale').model.hidden).toBe(512);
  });
});
