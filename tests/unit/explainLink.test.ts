/**
 * The share link's `explain=ITER.TRAJ.TOKEN[:QUANTITY]` and `stage=NAME` (workers/formats/shareUrl.ts):
 * each round-trips, each bad value is named with what was expected while the rest applies, and an
 * explained iteration other than the link's `step` is refused by name.
 */
import { describe, expect, it } from 'vitest';
import { defaultConfig, withFieldText } from '../../workers/core/config';
import { explainText } from '../../workers/formats/shareUrl';
import { decodeShareLink, encodeShareLink } from '../../workers/content/shareLink';
import { ITERATION_STAGES, STAGE_NAMES } from '../../workers/explain/stages';
import { TOKEN_QUANTITIES } from '../../workers/explain/types';
import { LINK_QUANTITIES } from '../../workers/formats/explainLinkNames';

describe('explain= and stage= in the share link', () => {
  it("accepts exactly step-through's stages, in order, and quantities the explainer knows", () => {
    expect(ITERATION_STAGES.map((s) => s.name)).toEqual([...STAGE_NAMES]);
    for (const q of LINK_QUANTITIES) expect(TOKEN_QUANTITIES).toContain(q);
  });

  it('round-trips an explained token (the advantage by default, another quantity by name) and a stage', () => {
    const cfg = withFieldText(defaultConfig(), 'seed', '7');
    for (const q of ['adv', 'ratio', 'clip', 'loss', 'kl', 'weight'] as const) {
      const hash = encodeShareLink(cfg, { step: 3, explain: { iter: 3, traj: 5, tok: 2, q }, stage: 'ratios' });
      expect(hash).toContain(q === 'adv' ? 'explain=3.5.2&' : `explain=3.5.2:${q}&`);
      const back = decodeShareLink(hash);
      expect(back.errors).toEqual([]);
      expect(back.explain).toEqual({ iter: 3, traj: 5, tok: 2, q });
      expect(back.stage).toBe('ratios');
      expect(back.config.seed).toBe(7);
    }
    for (const s of STAGE_NAMES) expect(decodeShareLink(`#v=1&stage=${s}`).stage).toBe(s);
  });

  it('names a bad value and applies the rest', () => {
    for (const [value, message] of [
      ['two', /expected ITER\.TRAJ\.TOKEN/],
      ['3.5', /expected ITER\.TRAJ\.TOKEN/],
      ['3.5.2:entropy', /optionally :adv\|ratio/],
      ['0.1.1', /expected an iteration in \[1, /],
      ['3.-1.2', /expected ITER\.TRAJ\.TOKEN/],
      ['99999999.1.1', /expected ITER\.TRAJ\.TOKEN/],
    ] as const) {
      const link = decodeShareLink(`#v=1&seed=4&explain=${value}&batch=6`);
      expect(link.explain, value).toBeUndefined();
      expect(link.errors, value).toHaveLength(1);
      expect(link.errors[0]!.key).toBe('explain');
      expect(link.errors[0]!.message).toMatch(message);
      expect(link.config.seed).toBe(4);
      expect(link.config.batch).toBe(6);
    }
    const stage = decodeShareLink('#v=1&stage=backward&seed=4');
    expect(stage.stage).toBeUndefined();
    expect(stage.errors).toEqual([{ key: 'stage', value: 'backward', message: `unknown stage; expected one of ${STAGE_NAMES.join(', ')}` }]);
    expect(stage.config.seed).toBe(4);
  });

  it('an explained iteration must be where the link pauses', () => {
    const link = decodeShareLink('#v=1&step=2&explain=5.0.0');
    expect(link.explain).toBeUndefined();
    expect(link.step).toBe(2);
    expect(link.errors.map((e) => `${e.key}: ${e.message}`)).toEqual(["explain: iteration 5 is not where the link pauses (step=2); the batch shown is iteration 2's"]);
    // Without step= it waits for the run to reach its iteration.
    expect(decodeShareLink('#v=1&explain=5.0.0').explain).toEqual({ iter: 5, traj: 0, tok: 0, q: 'adv' });
    expect(explainText({ iter: 5, traj: 0, tok: 0, q: 'adv' })).toBe('5.0.0');
  });
});
