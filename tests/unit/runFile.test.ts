/**
 * The run file: export and import of a whole run (config, seed, metrics, notes, batch). It
 * round-trips exactly; a bad or hostile file gives errors that name the path of each problem and
 * never throws.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { defaultConfig, withField } from '../../workers/core/config';
import { createCpuBackend } from '../../workers/core/cpuBackend';
import { SCALAR_METRICS, type MetricRow } from '../../workers/core/metrics';
import {
  createRunFile,
  MAX_NOTES_CHARS,
  MAX_RUN_FILE_CHARS,
  metricsToCsv,
  parseRunFile,
  RUN_FILE_FORMAT,
  serializeRunFile,
  type RunFile,
} from '../../workers/formats/runFile';
import { createTrainer } from '../../workers/core/trainer';
import { dumpBatch } from '../../workers/formats/batchDump';

let run: RunFile;
let text: string;

beforeAll(async () => {
  const config = withField(withField(withField(withField(defaultConfig(), 'batch', 2), 'group', 4), 'model.hidden', 8), 'seed', 11);
  const trainer = await createTrainer(config, createCpuBackend);
  const metrics: MetricRow[] = [];
  for (let i = 0; i < 3; i++) metrics.push(await trainer.step());
  const batch = await dumpBatch(trainer);
  trainer.destroy();
  run = createRunFile({ config, metrics, notes: 'seed 11: <b>collapse</b> by iteration 3', backend: { kind: 'cpu', label: 'CPU (TypeScript reference kernels)' }, batch, createdAt: new Date('2026-01-02T03:04:05Z') });
  text = serializeRunFile(run);
});

const errorsOf = (input: unknown) => {
  const r = parseRunFile(input);
  if (r.ok) throw new Error('expected errors');
  return r.errors;
};

describe('run file', () => {
  it('holds the config, its link, the metrics, the notes and the batch, and reads back exactly', () => {
    expect(run.format).toBe(RUN_FILE_FORMAT);
    expect(run.link).toBe('#v=1&seed=11&batch=2&group=4&model.hidden=8');
    expect(run.createdAt).toBe('2026-01-02T03:04:05.000Z');
    const r = parseRunFile(text);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.run).toEqual(run);
    expect(JSON.parse(JSON.stringify(r.run))).toEqual(JSON.parse(text));
    // Already-parsed JSON works too.
    expect(parseRunFile(JSON.parse(text))).toEqual(r);
  });

  it('keeps NaN metrics (null in JSON) and accepts a file without a batch', () => {
    const withNaN = createRunFile({ config: run.config, metrics: [{ ...run.metrics[0]!, ess: NaN, kl_ref: Infinity }] });
    const r = parseRunFile(serializeRunFile(withNaN));
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.run.metrics[0]!.ess).toBeNaN();
    expect(r.run.metrics[0]!.kl_ref).toBeNaN();
    expect(r.run.batch).toBeNull();
    const noBatchKey = JSON.parse(serializeRunFile(withNaN));
    delete noBatchKey.batch;
    expect(parseRunFile(noBatchKey).ok).toBe(true);
  });

  it('names what is wrong: JSON, format, version, config keys, metric values, notes, unknown keys', () => {
    const base = JSON.parse(text);
    expect(errorsOf('{ "format": ')).toEqual([{ path: '(file)', message: expect.stringMatching(/^not valid JSON/) }]);
    expect(errorsOf('[1, 2]')).toEqual([{ path: '(file)', message: expect.stringMatching(/expected a JSON object/) }]);
    expect(errorsOf('"text"')[0]!.path).toBe('(file)');
    expect(errorsOf({ ...base, format: 'something-else' })).toEqual([{ path: 'format', message: expect.stringMatching(/not a run file/) }]);
    expect(errorsOf({ ...base, version: 2 })).toEqual([{ path: 'version', message: 'run file version 2 is newer than this playground (it reads version 1)' }]);
    expect(errorsOf({ ...base, version: 0 })[0]!.path).toBe('version');
    expect(errorsOf({ ...base, config: { ...base.config, model: { depth: 3 } } })).toEqual([{ path: 'config', message: 'model.depth: unknown key (see --help for the list)' }]);
    expect(errorsOf({ ...base, config: { ...base.config, batch: 0 } })).toEqual([{ path: 'config', message: 'batch: expected an integer in [1, 1024]' }]);
    const badRow = { ...base, metrics: [base.metrics[0], { ...base.metrics[1], reward_mean: 'high' }] };
    expect(errorsOf(badRow)).toEqual([{ path: 'metrics[1].reward_mean', message: expect.stringContaining('expected number') }]);
    expect(errorsOf({ ...base, metrics: 'none' })[0]!.path).toBe('metrics');
    expect(errorsOf({ ...base, notes: 'x'.repeat(MAX_NOTES_CHARS + 1) })).toEqual([{ path: 'notes', message: `expected at most ${MAX_NOTES_CHARS} characters` }]);
    expect(errorsOf({ ...base, extra: 1 })).toEqual([{ path: '(file)', message: expect.stringContaining('"extra"') }]);
    const badTok = structuredClone(base);
    badTok.batch.trajs[1].tokens[0].adv = 'big';
    expect(errorsOf(badTok)[0]!.path).toBe('batch.trajs[1].tokens[0].adv');
  });

  it('caps the size before parsing', () => {
    const big = ' '.repeat(MAX_RUN_FILE_CHARS + 1);
    expect(errorsOf(big)).toEqual([{ path: '(file)', message: expect.stringMatching(/^too large/) }]);
    const rows = JSON.parse(text);
    rows.metrics = Array.from({ length: 100_001 }, () => rows.metrics[0]);
    expect(errorsOf(rows)[0]).toEqual({ path: 'metrics', message: 'expected at most 100000 rows' });
  });

  it('drops prototype keys and never pollutes Object.prototype', () => {
    const hostile = text.replace('"notes":', '"__proto__": { "polluted": 1 }, "constructor": { "prototype": { "polluted": 2 } }, "notes":');
    const r = parseRunFile(hostile);
    expect(r.ok).toBe(false);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    const inMetrics = text.replace('"iter":', '"__proto__": { "polluted": 3 }, "iter":');
    const m = parseRunFile(inMetrics);
    expect(m.ok).toBe(true);
    if (m.ok) {
      expect(Object.getPrototypeOf(m.run.metrics[0])).toBe(Object.prototype);
      expect((m.run.metrics[0] as unknown as Record<string, unknown>).polluted).toBeUndefined();
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('never throws, whatever it is given', () => {
    for (const input of [undefined, null, 0, true, [], '', 'null', '{}', '{"format":"agentic-rl-playground/run"}', Symbol('x'), () => 1, { toJSON: () => { throw new Error('x'); } }]) {
      expect(() => parseRunFile(input)).not.toThrow();
      expect(parseRunFile(input).ok).toBe(false);
    }
  });

  it('writes metrics as CSV: a header of the metric names, one line per iteration', () => {
    const csv = metricsToCsv(run.metrics);
    const lines = csv.trim().split('\n');
    expect(lines[0]).toBe(SCALAR_METRICS.join(','));
    expect(lines).toHaveLength(4);
    expect(lines[1]!.split(',')[0]).toBe('1');
    expect(Number(lines[3]!.split(',')[1])).toBe(run.metrics[2]!.reward_mean);
    expect(metricsToCsv([{ ...run.metrics[0]!, ess: NaN }]).split('\n')[1]!.split(',')[SCALAR_METRICS.indexOf('ess')]).toBe('');
  });
});
