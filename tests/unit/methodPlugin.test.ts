/**
 * Adding a method whose math reuses the existing kernels is one file and one line: this file is
 * that file. It defines a method here, registers it, and trains with it through the same config,
 * link and trainer as the built-in ones.
 */
import { describe, expect, it } from 'vitest';
import { defaultConfig, parseConfig, withFieldText, type RunConfig } from '../../workers/core/config';
import { createCpuBackend } from '../../workers/core/cpuBackend';
import { conflictsOf, defineMethod, METHOD_IDS, methodDef, registerMethod } from '../../workers/core/methods';
import { resolvePlan } from '../../workers/core/plan';
import { decodeShareLink, encodeShareLink } from '../../workers/content/shareLink';
import { createTrainer } from '../../workers/core/trainer';
import { dumpBatch } from '../../workers/formats/batchDump';

/** A tight token clip with token-mean aggregation: new behaviour, no new kernel. */
const tightClip = defineMethod({
  id: 'tightclip',
  name: 'Tight clip',
  paper: '0000.00000',
  idea: 'A narrow PPO clip range and token-mean aggregation.',
  stage: 'ratio',
  conflicts: ['gspo'],
  params: {
    eps: { kind: 'number', default: 0.01, min: 0, max: 1, label: 'clip', doc: 'Ratio range 1 +- eps.' },
    agg: { kind: 'choice', default: 'token-mean', options: ['token-mean', 'seq-mean-token-mean'], label: 'aggregation', doc: 'Loss aggregation while active.' },
  },
  plan(plan, p) {
    // Typed params: p.eps is a number and p.agg one of its options, with no cast.
    if (plan.ratio.mode === 'token') plan.ratio = { ...plan.ratio, clipLow: p.eps, clipHigh: p.eps };
    plan.lossAgg = p.agg;
  },
});

registerMethod(tightClip);
const ID = 'tightclip';

function config(extra: Record<string, string>): RunConfig {
  let cfg = defaultConfig();
  for (const [k, v] of Object.entries({ batch: '4', group: '4', 'model.hidden': '16', epochs: '3', lr: '0.05', seed: '5', ...extra })) cfg = withFieldText(cfg, k, v);
  return cfg;
}

describe('a method registered from outside workers/core/methods', () => {
  it('joins the registry, the config schema, the conflicts and the share link', () => {
    expect(METHOD_IDS).toContain(ID);
    expect(methodDef(ID).name).toBe('Tight clip');
    expect(conflictsOf(ID)).toContain('gspo');
    expect(conflictsOf('gspo')).toContain(ID);
    const cfg = config({ methods: 'grpo,tightclip', 'tightclip.eps': '0.05' });
    expect(cfg.methods).toEqual(['grpo', ID]);
    expect(() => withFieldText(cfg, 'methods', 'grpo,tightclip,gspo')).toThrow(/conflicts/);
    expect(() => withFieldText(cfg, 'tightclip.eps', '2')).toThrow(/tightclip.eps: expected a number in \[0, 1\]/);
    const back = decodeShareLink(encodeShareLink(cfg));
    expect(back.errors).toEqual([]);
    expect(back.config).toEqual(cfg);
    expect(parseConfig(JSON.parse(JSON.stringify(cfg)))).toEqual(cfg);
  });

  it('its hook shapes the plan only while it is active', () => {
    const off = resolvePlan(config({}));
    const on = resolvePlan(config({ methods: 'grpo,tightclip', 'tightclip.eps': '0.05', 'tightclip.agg': 'seq-mean-token-mean' }));
    expect([off.ratio, off.lossAgg]).toEqual([{ mode: 'token', clipLow: 0.2, clipHigh: 0.2, dualClip: 3 }, 'token-mean']);
    expect([on.ratio, on.lossAgg]).toEqual([{ mode: 'token', clipLow: 0.05, clipHigh: 0.05, dualClip: 3 }, 'seq-mean-token-mean']);
  });

  it('trains, and its clip range is the one the loss applies', async () => {
    const t = await createTrainer(config({ methods: 'grpo,tightclip' }), createCpuBackend);
    // One iteration: its groups still differ (later ones of this tiny run collapse).
    expect(Number.isFinite((await t.step()).loss)).toBe(true);
    const tokens = (await dumpBatch(t)).trajs.flatMap((tr) => tr.tokens.filter((k) => k.mask === 1 && k.adv !== 0));
    // Ratios between the tight range and GRPO's 0.2 are clipped only because this method is on.
    const between = tokens.filter((k) => Math.abs(k.ratio - 1) > 0.011 && Math.abs(k.ratio - 1) < 0.19);
    expect(between.filter((k) => k.clip !== 0).length).toBeGreaterThan(0);
    for (const k of between) {
      if (k.adv > 0 && k.ratio > 1) expect(k.clip).toBe(1);
      if (k.adv < 0 && k.ratio < 1) expect(k.clip).toBe(-1);
    }
  });

  it('refuses a second registration and a malformed id', () => {
    expect(() => registerMethod(tightClip)).toThrow(/already registered/);
    expect(() => registerMethod({ ...tightClip, id: 'Bad Id' })).toThrow(/lowercase/);
  });
});
