/**
 * Real runs' metric logs read into the playground's metric rows (workers/formats/runLog.ts), the
 * page's import routing (workers/formats/importRun.ts), and the fixtures they are checked on: logs
 * written in each framework's own format by tests/fixtures/runLogs/make_run_logs.py, which cites the
 * lines that write each. Bad files are refused with one line naming what is wrong.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import * as pageAlarms from '../../app/alarms';
import { detectAlarms, initialAlarmState } from '../../workers/core/alarmRules';
import { defaultConfig } from '../../workers/core/config';
import { readImport } from '../../workers/formats/importRun';
import { LOG_METRICS, MAX_RUN_LOG_CHARS, parseRunLog, type RunLog } from '../../workers/formats/runLog';
import { createRunFile, serializeRunFile } from '../../workers/formats/runFile';

const FIXTURES = join(import.meta.dirname, '../fixtures/runLogs');
const fixture = (name: string) => readFileSync(join(FIXTURES, name), 'utf8');

function read(text: string): RunLog {
  const r = parseRunLog(text);
  if (!r.ok) throw new Error(r.error);
  return r.log;
}

const alarmsOf = (log: RunLog) => detectAlarms(log.rows, initialAlarmState()).map((a) => [a.kind, a.iter]);

describe('the fixtures, each in its framework\'s format', () => {
  it("TRL's trainer_state.json: every step of log_history, TRL's names mapped, NaN kept as NaN", () => {
    const log = read(fixture('trl_trainer_state.json'));
    expect([log.format, log.framework, log.rows.length, log.rows[0]!.iter, log.rows.at(-1)!.iter]).toEqual(['trl-trainer-state', 'trl', 60, 1, 60]);
    expect(log.mapped.map((m) => `${m.metric}<-${m.key}`)).toEqual([
      'reward_mean<-reward', 'success_rate<-toy/success', 'groups_all_equal_frac<-frac_reward_zero_std', 'entropy<-entropy', 'kl_ref<-kl',
      'clip_frac<-clip_ratio/region_mean', 'clip_frac_low<-clip_ratio/low_mean', 'clip_frac_high<-clip_ratio/high_mean', 'grad_norm<-grad_norm',
      'tokens<-completions/mean_length', 'lr<-learning_rate', 'loss<-loss',
    ]);
    const r22 = log.rows[21]!;
    expect([r22.iter, r22.grad_norm, r22.entropy, r22.groups_all_equal_frac, r22.tokens]).toEqual([22, 4, 0.8 * (1 - 12 / 44), 0.1, 118]);
    // The closing summary entry (train_loss, train_runtime at step 60) adds nothing charted; step 60's NaN stays.
    expect(log.rows[59]!.grad_norm).toBeNaN();
    expect(log.nonFinite).toEqual([{ step: 60, metric: 'grad_norm', value: NaN }]);
    expect(log.rows[0]!.ess).toBeNaN();
  });

  it("verl's console and file loggers give the same rows (Ray prefixes, numpy reprs, the validation step left out)", () => {
    const consoleLog = read(fixture('verl_console.txt'));
    const fileLog = read(fixture('verl_metrics.jsonl'));
    expect([consoleLog.format, fileLog.format, consoleLog.framework, fileLog.framework]).toEqual(['verl-console', 'verl-file', 'verl', 'verl']);
    expect(consoleLog.rows).toHaveLength(40);
    expect(consoleLog.rows).toEqual(fileLog.rows);
    expect(consoleLog.mapped).toEqual(fileLog.mapped);
    const r30 = consoleLog.rows[29]!;
    expect([r30.iter, r30.grad_norm, r30.reward_mean, r30.tokens, r30.lr]).toEqual([30, 6, 0.2 + 0.015 * 30, 180 + 6 * 30, 1e-6]);
    expect(consoleLog.mapped.map((m) => m.key)).toEqual(['critic/score/mean', 'critic/advantages/mean', 'actor/entropy', 'actor/pg_clipfrac', 'actor/grad_norm', 'response_length/mean', 'actor/lr', 'actor/pg_loss']);
  });

  it("W&B CSVs: a TRL history (train/ keys, train/global_step over W&B's _step, table rows left out) and a verl panel export", () => {
    const trl = read(fixture('wandb_trl_history.csv'));
    expect([trl.format, trl.framework, trl.rows.length, trl.rows[0]!.iter, trl.rows.at(-1)!.iter]).toEqual(['wandb-csv', 'trl', 30, 1, 30]);
    expect(trl.mapped.find((m) => m.metric === 'groups_all_equal_frac')!.key).toBe('train/frac_reward_zero_std');
    expect(trl.notes).toEqual(['30 CSV rows without a step value (other logging calls) left out']);
    const panel = read(fixture('wandb_verl_panel.csv'));
    expect([panel.framework, panel.rows.length, panel.mapped]).toEqual(['verl', 35, [{ metric: 'entropy', key: 'actor/entropy' }]]);
    expect(panel.rows[27]!.entropy).toBe(0.19);
  });

  it('the alarms, by the rules the page runs, fire at the steps the fixtures were written for', () => {
    // The page's alarms module re-exports these very functions: one set of rules.
    expect(pageAlarms.detectAlarms).toBe(detectAlarms);
    expect(pageAlarms.ALARM_THRESHOLDS.entropy).toBe(0.2);
    expect(alarmsOf(read(fixture('trl_trainer_state.json')))).toEqual([['grad', 22], ['collapse', 38], ['entropy', 46]]);
    expect(alarmsOf(read(fixture('verl_console.txt')))).toEqual([['grad', 30]]);
    expect(alarmsOf(read(fixture('verl_metrics.jsonl')))).toEqual([['grad', 30]]);
    expect(alarmsOf(read(fixture('wandb_trl_history.csv')))).toEqual([['collapse', 1]]);
    expect(alarmsOf(read(fixture('wandb_verl_panel.csv')))).toEqual([['entropy', 28]]);
  });

  const hasNumpy = spawnSync('python3', ['-c', 'import numpy']).status === 0;
  const tmp = mkdtempSync(join(tmpdir(), 'run-logs-'));
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));
  it.skipIf(!hasNumpy)(hasNumpy ? 'are what make_run_logs.py writes, byte for byte' : 'SKIPPED: python3 with numpy not found, so the fixtures are not regenerated', () => {
    const r = spawnSync('python3', [join(FIXTURES, 'make_run_logs.py'), tmp], { encoding: 'utf8' });
    expect(r.stderr).toBe('');
    for (const name of r.stdout.trim().split(' ')) expect(readFileSync(join(tmp, name), 'utf8'), name).toBe(fixture(name));
  });
});

describe('bad logs are refused with one line naming what is wrong', () => {
  const cases: Array<[string, string, string | RegExp]> = [
    ['empty', '', 'the file is empty'],
    ['blank', '  \n\n', 'the file is empty'],
    ['prose', 'hello world\nthis is not a log\n', /^not a run log this reads: expected TRL's trainer_state\.json/],
    ['binary', 'PK\u0003\u0004\u0000\u0000garbage', 'not a text file (it holds NUL bytes)'],
    ['log_history not a list', '{"log_history": 5}', 'trainer_state.json: log_history is 5, not a list of log entries'],
    ['entry not an object', '{"log_history": [3]}', 'log_history[0] is 3, not an object'],
    ['entry without a step', '{"log_history": [{"loss": 1}]}', 'log_history[0].step is undefined, not a whole number of steps'],
    ['fractional step', '{"log_history": [{"loss": 1, "step": 1.5}]}', 'log_history[0].step is 1.5, not a whole number of steps'],
    ['other JSON', '{"model": "gpt2", "lr": 0.1}', "a JSON object without log_history (keys: model, lr): not TRL's trainer_state.json"],
    ['JSON array', '[1, 2]', "a JSON array: expected TRL's trainer_state.json (an object with log_history)"],
    ['cut JSON', '{"log_history": [{"step": 1, "loss"', /^not JSON \(/],
    ['nothing charted', '{"log_history": [{"step": 1, "eval_loss": 2.5}]}', /^no step logs a metric the playground charts \(for trl: reward, .*\); keys seen: eval_loss$/],
    ['verl line not JSON', '{"step": 1, "data": {"actor/entropy": 1}}\n{oops}\n{"step": 3, "data": {}}\n', /^line 2: not JSON \(/],
    ['verl step not a number', '{"step": "one", "data": {"actor/entropy": 1}}\n', 'line 1: step is "one", not a whole number of steps'],
    ['verl data not an object', '{"step": 1, "data": [1]}\n', 'line 1: data is [1], not an object of metrics'],
    ['CSV of two runs', 'Step,a - actor/entropy,b - actor/entropy\n1,0.5,0.6\n', 'the CSV holds 2 runs (a, b): export one run at a time'],
    ['CSV step not whole', '_step,actor/entropy\n1.5,0.5\n', 'CSV row 2: _step is "1.5", not a whole number of steps'],
    ['CSV ragged', '_step,actor/entropy\n1,0.5\n2\n', 'CSV row 3 has 1 field where the header has 2'],
    ['CSV unknown names', 'Step,foo,bar\n1,2,3\n', "a CSV whose columns are neither verl's nor TRL's metric names (seen: foo, bar)"],
    ['CSV open quote', '_step,"actor/entropy\n1,0.5\n', 'the CSV ends inside a quoted field'],
  ];
  for (const [name, text, want] of cases) {
    it(name, () => {
      const r = parseRunLog(text);
      expect(r.ok).toBe(false);
      const error = (r as { error: string }).error;
      expect(error.split('\n')).toHaveLength(1);
      if (typeof want === 'string') expect(error).toBe(want);
      else expect(error).toMatch(want);
    });
  }

  it('a file over the size cap is refused before it is parsed', () => {
    const r = parseRunLog('x'.repeat(MAX_RUN_LOG_CHARS + 1));
    expect(r).toEqual({ ok: false, error: `too large (${MAX_RUN_LOG_CHARS + 1} characters; at most ${MAX_RUN_LOG_CHARS})` });
  });

  it("a verl file log whose last line was cut off (a killed run) keeps its steps and says so", () => {
    const text = '{"step":1,"data":{"actor/entropy":1.0}}\n{"step":2,"data":{"actor/entropy":0.9}}\n{"step":3,"data":{"actor/ent';
    const log = read(text);
    expect(log.rows.map((r) => [r.iter, r.entropy])).toEqual([[1, 1], [2, 0.9]]);
    expect(log.notes).toEqual(['line 3 is cut off (the run stopped while writing it): left out']);
  });

  it('console values as pprint writes them: nan, inf, numpy and torch reprs; steps logged twice merge', () => {
    const log = read(['step:1 - actor/grad_norm:nan - actor/entropy:np.float32(0.5)', 'noise step:12 not a metric line', 'step:2 - actor/grad_norm:inf - actor/entropy:tensor(0.25, device=\'cuda:0\')', 'step:2 - critic/score/mean:-1e-05'].join('\n'));
    expect(log.rows.map((r) => [r.iter, r.grad_norm, r.entropy, r.reward_mean])).toEqual([[1, NaN, 0.5, NaN], [2, Infinity, 0.25, -1e-5]]);
    expect(log.nonFinite.map((x) => [x.step, x.metric])).toEqual([[1, 'grad_norm'], [2, 'grad_norm']]);
  });

  it("docs/IMPORT.md's table names every key the reader maps, with its source line", () => {
    const doc = readFileSync(join(import.meta.dirname, '../../docs/IMPORT.md'), 'utf8');
    for (const fw of ['verl', 'trl'] as const) {
      for (const m of LOG_METRICS[fw]) {
        expect(doc, m.metric).toContain(`\`${m.metric}\``);
        for (const k of m.keys) expect(doc, k).toContain(`\`${k}\``);
        const line = /:(\d+)/.exec(m.source)?.[1];
        if (line) expect(doc, m.source).toContain(`:${line}`);
      }
    }
  });

  it('every framework name the table maps is unique to its metric', () => {
    for (const fw of ['verl', 'trl'] as const) {
      const keys = LOG_METRICS[fw].flatMap((m) => m.keys);
      expect(new Set(keys).size).toBe(keys.length);
      expect(new Set(LOG_METRICS[fw].map((m) => m.metric)).size).toBe(LOG_METRICS[fw].length);
    }
  });
});

describe("the page's import: a run file as before, a log as its rows under the page's config", () => {
  it('a log becomes a run file with the page config, its notes say so', () => {
    const cfg = defaultConfig();
    const r = readImport(fixture('verl_console.txt'), cfg, 'verl_console.txt', new Date('2026-03-02T10:00:00Z'));
    expect(r.ok).toBe(true);
    const { run, log } = r as Extract<typeof r, { ok: true }>;
    expect(run.config).toEqual(cfg);
    expect(run.metrics).toHaveLength(40);
    expect(run.batch).toBeNull();
    expect(log!.framework).toBe('verl');
    expect(run.notes).toContain('the config is this page\'s, not the run\'s');
  });

  it('a run file is read as a run file; a broken one keeps its own named errors', () => {
    const good = serializeRunFile(createRunFile({ config: defaultConfig(), metrics: [] }));
    const r = readImport(good, defaultConfig(), 'run.json');
    expect(r.ok && r.log === null).toBe(true);
    const bad = readImport(JSON.stringify({ format: 'agentic-rl-playground/run', version: 1, config: { lossAgg: 'x' }, metrics: [] }), defaultConfig(), 'bad.json');
    expect(bad.ok).toBe(false);
    expect((bad as { errors: Array<{ path: string }> }).errors.some((e) => e.path.startsWith('config'))).toBe(true);
    expect((bad as { errors: Array<{ path: string }> }).errors.some((e) => e.path === '(as a run log)')).toBe(false);
  });

  it('JSON that is neither says what a run file and a log each lack; a CSV only what the log lacks', () => {
    const junk = readImport('{ nope', defaultConfig(), 'junk.json');
    expect(junk).toEqual({ ok: false, errors: [expect.objectContaining({ path: '(file)', message: expect.stringContaining('not valid JSON') }), expect.objectContaining({ path: '(as a run log)' })] });
    const csv = readImport('Step,foo\n1,2\n', defaultConfig(), 'x.csv');
    expect(csv).toEqual({ ok: false, errors: [{ path: '(file)', message: "a CSV whose columns are neither verl's nor TRL's metric names (seen: foo)" }] });
  });
});
