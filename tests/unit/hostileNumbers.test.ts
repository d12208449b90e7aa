/**
 * Property tests (seeded, so a failure reproduces) over extreme numbers where they enter: a run
 * file's metrics and batch, a share link's values, and the chart axes they reach. ±1e308, the
 * largest double, NaN and Infinity written as strings, 2^32-1 indices and arrays past their caps:
 * each is either read into bounded, finite values or refused with an error naming where.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { MAX_TICKS, niceScale, ticksWithin } from '../../app/charts/scale';
import { allFields, defaultConfig, getField, withField } from '../../workers/core/config';
import { createCpuBackend } from '../../workers/core/cpuBackend';
import { SCALAR_METRICS, type MetricRow } from '../../workers/core/metrics';
import { createRng } from '../../workers/core/rng';
import { createRunFile, MAX_RUN_ROWS, parseRunFile, serializeRunFile } from '../../workers/formats/runFile';
import { decodeShareLink } from '../../workers/content/shareLink';
import { MAX_LINK_STEP } from '../../workers/formats/shareUrl';
import { parseNumberText } from '../../workers/core/numberText';
import { createTrainer } from '../../workers/core/trainer';
import { dumpBatch } from '../../workers/formats/batchDump';

const EXTREME_NUMBERS = [1e308, -1e308, Number.MAX_VALUE, -Number.MAX_VALUE, Number.MIN_VALUE, -Number.MIN_VALUE, 0, -0, 2 ** 32 - 1, 2 ** 53, -(2 ** 53), 1e-300, 4294967294, 1e8];
/** JSON text that is not a number JSON allows, or that overflows to ±Infinity when parsed. */
const EXTREME_TEXTS = ['"NaN"', '"Infinity"', '"-Infinity"', '1e400', '-1e400', '"1e308"', 'true', '[]', '{}'];
const LINK_TEXTS = ['1e308', '-1e308', '1.7976931348623157e308', '1e400', 'NaN', 'Infinity', '-Infinity', '4294967295', '0x10', '0b10', '1e-400', '9'.repeat(400), '', ' 1', '1_000', '+1', '.5', '5.', '-0'];

let base: ReturnType<typeof JSON.parse>;

beforeAll(async () => {
  const config = withField(withField(withField(defaultConfig(), 'batch', 2), 'group', 4), 'model.hidden', 8);
  const trainer = await createTrainer(config, createCpuBackend);
  const metrics: MetricRow[] = [];
  for (let i = 0; i < 3; i++) metrics.push(await trainer.step());
  const batch = await dumpBatch(trainer);
  trainer.destroy();
  base = JSON.parse(serializeRunFile(createRunFile({ config, metrics, batch })));
});

/** The axis a chart would draw for these values: bounded ticks, finite and ascending. */
function expectDrawable(values: number[]): void {
  const finite = values.filter(Number.isFinite);
  const lo = finite.length ? Math.min(...finite) : NaN;
  const hi = finite.length ? Math.max(...finite) : NaN;
  const s = niceScale(lo, hi);
  const inner = ticksWithin(lo, hi, 6);
  // Bounded work is the tick count's bound (the axis makes one value per tick), not a time: a
  // 50 ms limit here failed at 116 ms on a loaded machine.
  for (const ticks of [s.ticks, inner]) {
    expect(ticks.length).toBeLessThanOrEqual(MAX_TICKS + 1);
    for (let i = 0; i < ticks.length; i++) {
      expect(Number.isFinite(ticks[i])).toBe(true);
      if (i > 0) expect(ticks[i]!).toBeGreaterThan(ticks[i - 1]!);
    }
  }
  expect(s.domain.every(Number.isFinite)).toBe(true);
}

describe('chart axes over extreme values', () => {
  it('1e308 then -1e308, the largest double then 0, and random magnitudes give a few finite ticks', () => {
    expectDrawable([1e308, -1e308]);
    expectDrawable([Number.MAX_VALUE, 0]);
    expectDrawable([-Number.MAX_VALUE, Number.MAX_VALUE]);
    expectDrawable([Infinity, -Infinity]);
    const rng = createRng(36);
    for (let i = 0; i < 3000; i++) {
      const pick = () => (rng.next() < 0.5 ? EXTREME_NUMBERS[rng.int(EXTREME_NUMBERS.length)]! : (rng.next() - 0.5) * 10 ** (rng.int(617) - 308));
      expectDrawable([pick(), pick()]);
      expect(niceScale(pick(), pick(), 2 + rng.int(10), rng.next() < 0.5).ticks.length).toBeLessThanOrEqual(MAX_TICKS + 1);
    }
  });
});

describe('run-file import over extreme numbers', () => {
  const textWith = (mutate: (f: Record<string, any>) => void, raw?: [string, string]) => {
    const f = structuredClone(base);
    mutate(f);
    let text = JSON.stringify(f);
    if (raw) text = text.replace(raw[0], raw[1]);
    return text;
  };

  it('a metric of any extreme value is read as a finite number or NaN, or refused by path; never throws', () => {
    const rng = createRng(7);
    for (let i = 0; i < 400; i++) {
      const key = SCALAR_METRICS[rng.int(SCALAR_METRICS.length)]!;
      const row = rng.int(3);
      const useText = rng.next() < 0.4;
      const marker = '"__EXTREME__"';
      const value = useText ? EXTREME_TEXTS[rng.int(EXTREME_TEXTS.length)]! : EXTREME_NUMBERS[rng.int(EXTREME_NUMBERS.length)]!;
      const text = textWith((f) => (f.metrics[row][key] = useText ? '__EXTREME__' : value), useText ? [marker, String(value)] : undefined);
      const r = parseRunFile(text);
      if (r.ok) {
        for (const m of r.run.metrics) expect(Number.isNaN(m[key]) || Number.isFinite(m[key]), `${key} = ${value}`).toBe(true);
        expectDrawable(r.run.metrics.map((m) => m[key] as number));
      } else {
        expect(r.errors[0]!.path).toBe(`metrics[${row}].${key}`);
      }
    }
  });

  it('trajectory and group indices past the batch (2^32-1, 2^32-2, 1e8, the batch size) are refused by path', () => {
    const n = base.batch.trajs.length;
    for (const bad of [2 ** 32 - 1, 4294967294, 100_000_000, 65_536, n, -1, 0.5, 1e308]) {
      for (const key of ['group', 'id']) {
        const r = parseRunFile(textWith((f) => (f.batch.trajs[0][key] = bad)));
        expect(r.ok, `${key} = ${bad}`).toBe(false);
        if (!r.ok) expect(r.errors.map((e) => e.path)).toContain(`batch.trajs[0].${key}`);
      }
    }
    expect(parseRunFile(textWith((f) => (f.batch.trajs[0].group = n - 1))).ok).toBe(true);
  });

  it('iteration numbers past 1e9 (2^53, 1e308) are refused', () => {
    for (const bad of [2 ** 53, 1e308, 2 ** 32 - 1 + 1e9]) {
      const r = parseRunFile(textWith((f) => (f.metrics[1].iter = bad)));
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.errors[0]!.path).toBe('metrics[1].iter');
      expect(parseRunFile(textWith((f) => (f.batch.iter = bad))).ok).toBe(false);
    }
  });

  it('arrays past their caps are refused without walking them: rows, histograms, tokens, trajectories', () => {
    const rows = parseRunFile({ ...base, metrics: new Array(MAX_RUN_ROWS + 1).fill(base.metrics[0]) });
    expect(rows.ok).toBe(false);
    if (!rows.ok) expect(rows.errors[0]!.path).toBe('metrics');
    const hist = parseRunFile(textWith((f) => (f.metrics[0].adv_hist = new Array(1025).fill(1))));
    expect(hist.ok).toBe(false);
    const tokens = parseRunFile(textWith((f) => (f.batch.trajs[0].tokens = new Array(4097).fill(f.batch.trajs[0].tokens[0]))));
    expect(tokens.ok).toBe(false);
    const trajs = parseRunFile({ ...base, batch: { ...base.batch, trajs: new Array(65_537).fill(base.batch.trajs[0]) } });
    expect(trajs.ok).toBe(false);
  });
});

describe('share links over extreme numbers', () => {
  const numeric = allFields().filter(([, s]) => s.kind === 'number' || s.kind === 'int');

  it('every numeric key with every extreme text decodes to a config inside the key\'s range, or names the key', () => {
    const rng = createRng(11);
    for (let i = 0; i < 1500; i++) {
      const [key, spec] = numeric[rng.int(numeric.length)]!;
      const text = LINK_TEXTS[rng.int(LINK_TEXTS.length)]!;
      const link = decodeShareLink(`#v=1&${key}=${encodeURIComponent(text)}`);
      const v = getField(link.config, key) as number;
      expect(Number.isFinite(v), `${key}=${text}`).toBe(true);
      if (spec.kind === 'number' || spec.kind === 'int') {
        expect(v).toBeGreaterThanOrEqual(spec.min);
        expect(v).toBeLessThanOrEqual(spec.max);
      }
      if (link.errors.length === 0) expect(v).toBe(parseNumberText(text));
      else expect(link.errors[0]!.key).toBe(key);
    }
  });

  it('step beyond the cap (2^32-1, 1e308, NaN) is refused; at the cap it is kept', () => {
    for (const bad of ['4294967295', '1e308', 'NaN', 'Infinity', '1e5', String(MAX_LINK_STEP + 1)]) {
      const link = decodeShareLink(`#v=1&step=${bad}`);
      expect(link.step, bad).toBeUndefined();
      expect(link.errors[0]?.key).toBe('step');
    }
    expect(decodeShareLink(`#v=1&step=${MAX_LINK_STEP}`).step).toBe(MAX_LINK_STEP);
  });

  it('focus indices of 2^32-1 are refused (at most 7 digits)', () => {
    const link = decodeShareLink('#v=1&focus=traj:4294967295');
    expect(link.focus).toBeUndefined();
    expect(link.errors[0]?.key).toBe('focus');
  });
});
