/**
 * `npm run -s diagnose -- FILE [--json]` (cli/diagnose.ts): what it prints for each fixture log, the
 * alarms with their steps (the page's rules), --json lines, and the one-line refusals with exit
 * status 2 for bad flags and bad files, the file's name echoed with its control characters escaped.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { UsageError } from '../../cli/args';
import { diagnose, parseDiagnoseArgs, readLog, report } from '../../cli/diagnose';
import { defaultConfig } from '../../workers/core/config';
import { createRunFile, serializeRunFile } from '../../workers/formats/runFile';
import { SCALAR_METRICS, type MetricRow } from '../../workers/core/metrics';
import { runCli } from '../helpers/cliNode';

const FIXTURES = join(import.meta.dirname, '../fixtures/runLogs');
const tmp = mkdtempSync(join(tmpdir(), 'diagnose-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function cli(...args: string[]) {
  return runCli('cli/diagnose.ts', args);
}

describe('diagnose: arguments', () => {
  it('takes one FILE and --json; anything else is one line naming it', () => {
    expect(parseDiagnoseArgs(['a.log', '--json'])).toEqual({ file: 'a.log', json: true, help: false });
    expect(parseDiagnoseArgs(['--help'])).toEqual({ file: null, json: false, help: true });
    const bad: Array<[string[], string]> = [
      [[], 'FILE: missing; give the log to read (npm run -s diagnose -- FILE [--json])'],
      [['a', 'b'], 'b: one log at a time (already given: a)'],
      [['a', '--csv'], '--csv: unknown flag; expected FILE, --json or --help'],
      [['a', '--x\u001b[2J'], '--x\\x1b[2J: unknown flag; expected FILE, --json or --help'],
    ];
    for (const [argv, msg] of bad) {
      expect(() => parseDiagnoseArgs(argv)).toThrow(UsageError);
      expect(() => parseDiagnoseArgs(argv)).toThrow(msg);
    }
  });
});

describe('diagnose: reports', () => {
  it('a TRL log: what was read, the mapped names, what cannot be checked, the NaN, each alarm with its step', () => {
    const r = readLog(readFileSync(join(FIXTURES, 'trl_trainer_state.json'), 'utf8'));
    if (!r.ok) throw new Error(r.error);
    const text = report('trl_trainer_state.json', r, diagnose(r.rows));
    expect(text.split('\n')).toEqual([
      "trl_trainer_state.json: TRL's trainer_state.json (log_history), TRL, 60 steps (1 to 60)",
      expect.stringMatching(/^charted: reward_mean <- reward, success_rate <- toy\/success, groups_all_equal_frac <- frac_reward_zero_std, entropy <- entropy, /),
      'not checked: Effective sample size (ESS) drop (ess is not logged by TRL)',
      'non-finite: grad_norm NaN at step 60',
      'alarms (3):',
      '  step 22  Gradient-norm spike  grad_norm 4',
      '  step 38  Advantage Collapse  groups_all_equal_frac 0.52',
      '  step 46  Entropy collapse  entropy 0.145455',
    ]);
  });

  it('a playground run file is read too, with the same rules', () => {
    const row = (iter: number, entropy: number) => ({ ...Object.fromEntries(SCALAR_METRICS.map((m) => [m, 0.1])), iter, entropy, ess: 0.9, adv_hist: [], adv_hist_edges: [], ratio_hist: [], ratio_hist_edges: [] }) as unknown as MetricRow;
    const rows = Array.from({ length: 12 }, (_, i) => row(i + 1, i < 6 ? 1 : 0.1));
    const r = readLog(serializeRunFile(createRunFile({ config: defaultConfig(), metrics: rows })));
    if (!r.ok) throw new Error(r.error);
    expect([r.what, r.log]).toEqual(['a playground run file', null]);
    expect(diagnose(r.rows).map((a) => [a.kind, a.iter])).toEqual([['entropy', 7]]);
    const broken = readLog(JSON.stringify({ format: 'agentic-rl-playground/run', version: 1, config: {}, metrics: [{ iter: 'one' }] }));
    expect(broken.ok).toBe(false);
    expect((broken as { error: string }).error).toMatch(/^a playground run file with \d+ problems?, the first: /);
  });
});

describe('diagnose: the CLI', () => {
  it('prints each fixture\'s alarms with their steps; --json is one object per alarm and line', () => {
    const human = cli(join(FIXTURES, 'verl_console.txt'));
    expect(human.stderr).toBe('');
    expect(human.status).toBe(0);
    expect(human.stdout).toContain("verl_console.txt: verl's console log (step:N - key:value lines), verl, 40 steps (1 to 40)");
    expect(human.stdout).toContain('not checked: Advantage Collapse (groups_all_equal_frac is not logged by verl); Effective sample size (ESS) drop (ess is not logged by verl)');
    expect(human.stdout.trim().split('\n').slice(-2)).toEqual(['alarms (1):', '  step 30  Gradient-norm spike  grad_norm 6']);
    const json = cli(join(FIXTURES, 'trl_trainer_state.json'), '--json');
    expect(json.status).toBe(0);
    expect(json.stdout.trim().split('\n').map((l) => JSON.parse(l) as unknown)).toEqual([
      { alarm: 'grad', title: 'Gradient-norm spike', step: 22, value: 4, metric: 'grad_norm' },
      { alarm: 'collapse', title: 'Advantage Collapse', step: 38, value: 0.52, metric: 'groups_all_equal_frac' },
      { alarm: 'entropy', title: 'Entropy collapse', step: 46, value: 0.8 * (1 - 36 / 44), metric: 'entropy' },
    ]);
    const csv = cli(join(FIXTURES, 'wandb_verl_panel.csv'), '--json');
    expect(csv.stdout).toBe('{"alarm":"entropy","title":"Entropy collapse","step":28,"value":0.19,"metric":"entropy"}\n');
  });

  it('refuses a missing file, a folder, an unknown format and a malformed log: exit 2, one line, the name escaped', () => {
    const junkName = join(tmp, 'junk\u001b[2J.log');
    writeFileSync(junkName, 'hello\nworld\n');
    const cut = join(tmp, 'cut.json');
    writeFileSync(cut, '{"log_history": [{"step": 1, "loss": ');
    mkdirSync(join(tmp, 'dir'));
    const cases: Array<[string[], string]> = [
      [[join(tmp, 'nope.json')], `error: ${join(tmp, 'nope.json')}: no such file\n`],
      [[join(tmp, 'dir')], `error: ${join(tmp, 'dir')}: a folder, not a log file\n`],
      [[junkName], `error: ${join(tmp, 'junk\\x1b[2J.log')}: not a run log this reads: expected TRL's trainer_state.json, verl's console lines (step:N - key:value) or file logger lines ({"step": N, "data": {...}}), or a W&B CSV export\n`],
      [[cut, '--json'], `error: ${cut}: not JSON (`],
      [['--bogus'], 'error: --bogus: unknown flag; expected FILE, --json or --help\n'],
    ];
    for (const [args, err] of cases) {
      const r = cli(...args);
      expect(r.status, args.join(' ')).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr.split('\n')).toHaveLength(2);
      if (err.endsWith('\n')) expect(r.stderr).toBe(err);
      else expect(r.stderr.startsWith(err)).toBe(true);
    }
  });
});
