import { describe, expect, it } from 'vitest';
import { allFields, ConfigError, defaultConfig, getField, parseConfig, withFieldText } from '../../workers/core/config';

describe('run config', () => {
  it('defaults validate, and every field default lies in its range', () => {
    const cfg = defaultConfig();
    expect(parseConfig(JSON.parse(JSON.stringify(cfg)))).toEqual(cfg);
    for (const [key, spec] of allFields()) {
      const v = getField(cfg, key);
      expect(v, key).toBe(spec.default);
      if (spec.kind === 'number' || spec.kind === 'int') {
        expect(spec.default, key).toBeGreaterThanOrEqual(spec.min);
        expect(spec.default, key).toBeLessThanOrEqual(spec.max);
      }
      if (spec.kind === 'choice') expect(spec.options, key).toContain(spec.default);
    }
  });

  it('sets flat keys from text, including method parameters', () => {
    let cfg = withFieldText(defaultConfig(), 'model.hidden', '32');
    cfg = withFieldText(cfg, 'grpo.scaleStd', 'false');
    cfg = withFieldText(cfg, 'lossAgg', 'token-mean');
    expect(cfg.model.hidden).toBe(32);
    expect(cfg.methodParams.grpo!.scaleStd).toBe(false);
    expect(cfg.lossAgg).toBe('token-mean');
  });

  it('names the key and what was expected on a bad key or value', () => {
    const bad = (k: string, v: string) => {
      try {
        withFieldText(defaultConfig(), k, v);
      } catch (e) {
        expect(e).toBeInstanceOf(ConfigError);
        return (e as Error).message;
      }
      throw new Error('no error');
    };
    expect(bad('model.hiden', '3')).toMatch(/^model\.hiden: unknown key/);
    expect(bad('batch', '0')).toBe('batch: expected an integer in [1, 1024]');
    expect(bad('batch', '2.5')).toMatch(/^batch: expected an integer/);
    expect(bad('lr', 'fast')).toMatch(/^lr: expected a number/);
    expect(bad('lossAgg', 'sum')).toMatch(/^lossAgg: expected one of token-mean/);
    expect(bad('grpo.scaleStd', 'yes')).toMatch(/^grpo\.scaleStd: expected true or false/);
    expect(bad('methods', 'grpo,nope')).toMatch(/^methods: unknown method "nope"/);
  });

  it('parses nested JSON files and rejects unknown fields by name', () => {
    const cfg = parseConfig({ seed: 5, model: { hidden: 16 }, methodParams: { grpo: { eps: 0.01 } } });
    expect(cfg.seed).toBe(5);
    expect(cfg.model.hidden).toBe(16);
    expect(cfg.model.embed).toBe(defaultConfig().model.embed);
    expect(cfg.methodParams.grpo!.eps).toBe(0.01);
    expect(() => parseConfig({ model: { depth: 3 } })).toThrow(/model\.depth: unknown key/);
    expect(() => parseConfig([])).toThrow(/expected a JSON object/);
    expect(() => parseConfig({ seed: '5' })).toThrow(/seed: expected an integer/);
  });
});

describe('run config: prototype keys', () => {
  it('names prototype-looking method ids and keys as unknown instead of crashing', () => {
    for (const id of ['toString', 'constructor', '__proto__', 'hasOwnProperty']) {
      expect(() => withFieldText(defaultConfig(), 'methods', `grpo,${id}`)).toThrow(ConfigError);
      expect(() => withFieldText(defaultConfig(), id, '1')).toThrow(/unknown key/);
    }
    expect(getField(defaultConfig(), 'constructor')).toBeUndefined();
  });
});
