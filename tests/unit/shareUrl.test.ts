/**
 * Share links: every config field and every parameter of every registered method round-trips
 * through encode/decode; only non-default fields are written, in a stable order; older and newer
 * versions are handled deliberately; every problem is named with what was expected.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { allFields, CONFIG_FIELDS, defaultConfig, getField, withField, withMethods, type RunConfig } from '../../workers/core/config';
import { METHOD_IDS, methodDef } from '../../workers/core/methods';
import type { ParamSpec, ParamValue } from '../../workers/core/methods/params';
import { createRng } from '../../workers/core/rng';
import { decodeShareLink, encodeShareLink } from '../../workers/content/shareLink';
import {
  describeProblem,
  LINK_MIGRATIONS,
  LINK_VERSION,
  MAX_LINK_CHARS,
  MAX_LINK_KEYS,
  PANEL_IDS,
} from '../../workers/formats/shareUrl';

/** Valid values of a spec other than its default: the ends of its range, an awkward middle value. */
function otherValues(spec: ParamSpec): ParamValue[] {
  switch (spec.kind) {
    case 'number': {
      const mid = spec.scale === 'log' ? Math.sqrt(Math.max(spec.min, 1e-9) * spec.max) : spec.min + (spec.max - spec.min) / 3;
      // 0.1 + 0.2 = 0.30000000000000004: the text form must keep every bit.
      return [spec.min, spec.max, mid, 0.1 + 0.2].filter((v) => v !== spec.default && v >= spec.min && v <= spec.max);
    }
    case 'int':
      return [spec.min, spec.max, Math.floor((spec.min + spec.max) / 2)].filter((v) => v !== spec.default);
    case 'bool':
      return [!spec.default];
    case 'choice':
      return spec.options.filter((o) => o !== spec.default);
  }
}

function pairs(hash: string): string[] {
  return hash.slice(1).split('&');
}

describe('encodeShareLink / decodeShareLink', () => {
  it('the default config is just the version', () => {
    expect(encodeShareLink(defaultConfig())).toBe(`#v=${LINK_VERSION}`);
    const d = decodeShareLink('#v=1');
    expect(d.errors).toEqual([]);
    expect(d.config).toEqual(defaultConfig());
    expect(d.version).toBe(1);
  });

  it('round-trips every config field and every parameter of every method, writing only that key', () => {
    let checked = 0;
    for (const [key, spec] of allFields()) {
      for (const value of otherValues(spec)) {
        const cfg = withField(defaultConfig(), key, value);
        const hash = encodeShareLink(cfg);
        expect(pairs(hash), `${key}=${String(value)}`).toEqual(['v=1', expect.stringMatching(new RegExp(`^${key.replace('.', '\\.')}=`))]);
        const d = decodeShareLink(hash);
        expect(d.errors, hash).toEqual([]);
        expect(d.config, hash).toEqual(cfg);
        expect(getField(d.config, key)).toBe(value);
        checked++;
      }
    }
    // Every method in the registry contributed its parameters.
    for (const id of METHOD_IDS) {
      for (const p of Object.keys(methodDef(id).params)) expect(allFields().some(([k]) => k === `${id}.${p}`)).toBe(true);
    }
    expect(checked).toBeGreaterThan(allFields().length);
  });

  it('round-trips every method switched on (alone or with grpo, where allowed)', () => {
    for (const id of METHOD_IDS) {
      for (const ids of [[id], ['grpo', id]]) {
        let cfg: RunConfig;
        try {
          cfg = withMethods(defaultConfig(), ids);
        } catch {
          continue; // a set the config refuses cannot be shared either
        }
        const d = decodeShareLink(encodeShareLink(cfg));
        expect(d.errors).toEqual([]);
        expect(d.config.methods).toEqual(cfg.methods);
      }
    }
  });

  it('round-trips random configs with many fields changed at once, and writes only non-default fields', () => {
    const rng = createRng(2024);
    const fields = allFields();
    for (let trial = 0; trial < 300; trial++) {
      let cfg = defaultConfig();
      for (const [key, spec] of fields) {
        if (rng.next() < 0.5) continue;
        const vals = otherValues(spec);
        if (vals.length) cfg = withField(cfg, key, vals[rng.int(vals.length)]!);
      }
      const hash = encodeShareLink(cfg);
      const differing = fields.filter(([k]) => getField(cfg, k) !== getField(defaultConfig(), k)).length;
      expect(pairs(hash)).toHaveLength(1 + differing);
      const d = decodeShareLink(hash);
      expect(d.errors).toEqual([]);
      expect(d.config).toEqual(cfg);
      expect(encodeShareLink(d.config)).toBe(hash);
    }
  });

  it('writes keys in a stable order whatever the order of the edits', () => {
    const a = withField(withField(withField(defaultConfig(), 'grpo.eps', 0.01), 'lr', 0.01), 'seed', 7);
    const b = withField(withField(withField(defaultConfig(), 'seed', 7), 'grpo.eps', 0.01), 'lr', 0.01);
    expect(encodeShareLink(a)).toBe('#v=1&seed=7&lr=0.01&grpo.eps=0.01');
    expect(encodeShareLink(b)).toBe(encodeShareLink(a));
    const order = Object.keys(CONFIG_FIELDS);
    expect(order.indexOf('seed')).toBeLessThan(order.indexOf('lr'));
  });

  it('round-trips the view: step, focus, hidden panels and the backend', () => {
    const cfg = withField(withField(defaultConfig(), 'batch', 4), 'group', 4);
    const hash = encodeShareLink(cfg, { step: 3, focus: { kind: 'traj', index: 2 }, hide: ['methods', 'task'], backend: 'cpu' });
    expect(hash).toBe('#v=1&batch=4&group=4&backend=cpu&step=3&focus=traj:2&hide=methods,task');
    const d = decodeShareLink(hash);
    expect(d.errors).toEqual([]);
    expect(d).toMatchObject({ step: 3, focus: { kind: 'traj', index: 2 }, hide: ['methods', 'task'], backend: 'cpu' });
    expect(decodeShareLink('#v=1&focus=group:15').focus).toEqual({ kind: 'group', index: 15 });
    expect(decodeShareLink(`#v=1&hide=${PANEL_IDS.join(',')}`).hide).toEqual([...PANEL_IDS]);
    expect(encodeShareLink(cfg, { backend: 'auto' })).toBe('#v=1&batch=4&group=4');
  });

  it('reads a full URL, a hash, bare text and URL-encoded values', () => {
    const want = withField(withField(defaultConfig(), 'seed', 7), 'lossAgg', 'seq-mean-token-mean');
    for (const link of [
      'https://example.org/rl/?x=1#v=1&seed=7&lossAgg=seq-mean-token-mean',
      '#v=1&seed=7&lossAgg=seq-mean-token-mean',
      'v=1&seed=7&lossAgg=seq-mean-token-mean',
      '#v=1&seed=%37&lossAgg=seq%2Dmean%2Dtoken%2Dmean',
      '#v=1&&seed=7&lossAgg=seq-mean-token-mean&',
      '  #v=1&seed=7&lossAgg=seq-mean-token-mean  ',
    ]) {
      const d = decodeShareLink(link);
      expect(d.errors, link).toEqual([]);
      expect(d.config, link).toEqual(want);
    }
  });
});

describe('link versions', () => {
  const saved = structuredClone(LINK_MIGRATIONS);
  afterEach(() => {
    for (const k of Object.keys(LINK_MIGRATIONS)) delete LINK_MIGRATIONS[Number(k)];
    Object.assign(LINK_MIGRATIONS, structuredClone(saved));
  });

  it('a link without v is read as version 0, which migrates to the current version', () => {
    const d = decodeShareLink('#seed=5&batch=2');
    expect(d.errors).toEqual([]);
    expect(d.config.seed).toBe(5);
    expect(d.version).toBe(LINK_VERSION);
    expect(d.migratedFrom).toBeUndefined();
    const v0 = decodeShareLink('#v=0&seed=5');
    expect(v0.errors).toEqual([]);
    expect(v0.config.seed).toBe(5);
    expect(v0.migratedFrom).toBe(0);
  });

  it('a migration renames keys on the way forward', () => {
    LINK_MIGRATIONS[0] = { to: 1, renames: { prompts: 'batch', G: 'group' } };
    const d = decodeShareLink('#v=0&prompts=3&G=2');
    expect(d.errors).toEqual([]);
    expect(d.config.batch).toBe(3);
    expect(d.config.group).toBe(2);
  });

  it('a newer, unknown or unreadable version is refused as a whole, with a clear message', () => {
    const newer = decodeShareLink(`#v=${LINK_VERSION + 1}&seed=5`);
    expect(newer.config).toEqual(defaultConfig());
    expect(newer.errors).toEqual([{ key: 'v', message: expect.stringMatching(/^link version 2 is newer than this playground/) }]);
    for (const v of ['abc', '-1', '1.5', '']) {
      const d = decodeShareLink(`#v=${v}&seed=5`);
      expect(d.config, v).toEqual(defaultConfig());
      expect(d.errors[0], v).toMatchObject({ key: 'v', message: expect.stringContaining('expected a link version number') });
    }
    delete LINK_MIGRATIONS[0];
    const gone = decodeShareLink('#v=0&seed=5');
    expect(gone.errors).toEqual([{ key: 'v', message: expect.stringContaining('link version 0 is no longer supported') }]);
    expect(gone.config.seed).toBe(1);
  });
});

describe('problems are named, and the rest of the link applies', () => {
  const one = (link: string) => {
    const d = decodeShareLink(link);
    expect(d.errors, link).toHaveLength(1);
    return describeProblem(d.errors[0]!);
  };

  it('names each bad value with what was expected', () => {
    expect(one('#v=1&batch=0')).toBe('batch = "0": expected an integer in [1, 1024]');
    expect(one('#v=1&batch=2.5')).toBe('batch = "2.5": expected an integer in [1, 1024]');
    expect(one('#v=1&lr=fast')).toMatch(/^lr = "fast": expected a number in \[/);
    expect(one('#v=1&lr=')).toMatch(/^lr = "": expected a number/);
    expect(one('#v=1&lossAgg=sum')).toMatch(/^lossAgg = "sum": expected one of token-mean, /);
    expect(one('#v=1&grpo.scaleStd=yes')).toBe('grpo.scaleStd = "yes": expected true or false');
    expect(one('#v=1&methods=grpo,nope')).toMatch(/^methods = "grpo,nope": unknown method "nope"/);
    expect(one('#v=1&step=-2')).toBe('step = "-2": expected an integer in [0, 100000]');
    expect(one('#v=1&step=1e9')).toMatch(/^step = "1e9": expected an integer/);
    expect(one('#v=1&focus=row:1')).toMatch(/^focus = "row:1": expected group:G or traj:T/);
    expect(one('#v=1&backend=tpu')).toBe('backend = "tpu": expected one of auto, gpu, cpu');
    expect(one('#v=1&hide=task,bogus')).toMatch(/^hide = "bogus": unknown panel "bogus"; expected some of run, task/);
    expect(decodeShareLink('#v=1&hide=task,bogus').hide).toEqual(['task']);
  });

  it('names unknown keys, with a suggestion when one is close', () => {
    expect(one('#v=1&bach=4')).toMatch(/^bach = "4": unknown key \(did you mean batch\?\)/);
    expect(one('#v=1&model.hiden=4')).toMatch(/did you mean model\.hidden\?/);
    expect(one('#v=1&zzzzzzzz=1')).toMatch(/^zzzzzzzz = "1": unknown key; expected a config key/);
    expect(one('#v=1&__proto__=1')).toMatch(/^__proto__ = "1": unknown key/);
  });

  it('names duplicates (the first applies), keys without a value and bad URL encoding', () => {
    const dup = decodeShareLink('#v=1&seed=3&seed=4');
    expect(dup.config.seed).toBe(3);
    expect(describeProblem(dup.errors[0]!)).toBe('seed = "4": given more than once; the first value (3) applies');
    expect(one('#v=1&seed')).toBe('seed: expected key=value');
    expect(one('#v=1&seed=%zz')).toBe('seed = "%zz": the value is not valid URL encoding');
    expect(one('#v=1&s%e=1')).toBe('s%e: the key is not valid URL encoding');
  });

  it('checks a focus against the batch it points into', () => {
    expect(one('#v=1&batch=4&group=4&focus=traj:16')).toBe('focus = "traj:16": trajectory 16 is outside this batch (expected traj:0 to traj:15)');
    expect(one('#v=1&batch=4&focus=group:4')).toMatch(/group 4 is outside this batch \(expected group:0 to group:3\)/);
    expect(decodeShareLink('#v=1&batch=4&group=4&focus=traj:15').focus).toEqual({ kind: 'traj', index: 15 });
  });

  it('applies every good key of a link that also has bad ones', () => {
    const d = decodeShareLink('#v=1&seed=9&batch=x&bogus=1&model.hidden=32&grpo.eps=0.01&step=4&hide=charts,nope');
    expect(d.errors.map((e) => e.key)).toEqual(['batch', 'bogus', 'hide']);
    expect(d.config.seed).toBe(9);
    expect(d.config.batch).toBe(16);
    expect(d.config.model.hidden).toBe(32);
    expect(d.config.methodParams.grpo!.eps).toBe(0.01);
    expect(d.step).toBe(4);
    expect(d.hide).toEqual(['charts']);
  });

  it('refuses oversized links before reading them', () => {
    const long = decodeShareLink(`#v=1&seed=1&x=${'a'.repeat(MAX_LINK_CHARS)}`);
    expect(long.errors).toEqual([{ key: 'link', message: expect.stringMatching(/^too long \(\d+ characters; a link holds at most 8192\)/) }]);
    expect(long.config).toEqual(defaultConfig());
    const many = decodeShareLink(`#v=1&${Array.from({ length: MAX_LINK_KEYS + 1 }, (_, i) => `k${i}=1`).join('&')}`);
    expect(many.errors).toEqual([{ key: 'link', message: `too many keys (${MAX_LINK_KEYS + 2}; at most ${MAX_LINK_KEYS})` }]);
    expect(decodeShareLink('https://example.org/page').errors[0]!.message).toMatch(/no #… part/);
    expect(decodeShareLink(42).errors[0]).toEqual({ key: 'link', message: 'expected the text of a link' });
    expect(decodeShareLink(null).errors[0]!.key).toBe('link');
  });

  it('shortens very long keys and values in problems', () => {
    const d = decodeShareLink(`#v=1&${'k'.repeat(300)}=${'v'.repeat(300)}`);
    expect(d.errors[0]!.key.length).toBeLessThanOrEqual(49);
    expect(d.errors[0]!.value!.length).toBeLessThanOrEqual(49);
  });
});
