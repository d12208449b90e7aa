/**
 * The recipe's Python environment against the TypeScript tasks: for 1,000 seeded episodes of each
 * task (ten playground batches of 100 prompts, 2 rollouts each), python3 draws the same rows from the
 * seed, and replaying the same action transcripts through its text interface gives the same
 * observations, masks and rewards, bit for bit. Transcripts mix the task's oracle (successes) with
 * seeded random grammar-valid actions (failures), per row and per turn. Every generated .py file
 * must compile. Needs python3 on PATH; without it the test names itself skipped.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { defaultConfig, type RunConfig } from '../../workers/core/config';
import { createEnv, type EpisodeBatch, type TaskEnv } from '../../workers/core/envs';
import { buildRecipe, pythonConfig } from '../../workers/formats/recipe';
import { batchRows, type RecipeRow } from '../../workers/formats/recipe/rows';
import { createRng, type Rng } from '../../workers/core/rng';

const hasPython = spawnSync('python3', ['--version']).status === 0;
const PROMPTS = 100;
const GROUP = 2;
const ITERATIONS = 10;

function config(task: RunConfig['task'], env: Partial<RunConfig['env']>, seed: number): RunConfig {
  const d = defaultConfig();
  return { ...d, task, seed, batch: PROMPTS, group: GROUP, env: { ...d.env, ...env } };
}

/** Every task, with its noise channels on, and a plain variant. */
const CASES: Array<[string, RunConfig]> = [
  ['search, 2 hops, exp noise curriculum crossing its end, format penalty, RM noise', config('search', { hops: 2, maxTurns: 4, noise: 0.4, noiseSchedule: 'exp', noiseStart: 0.05, noiseIters: 6, formatPenalty: 0.5, rmNoise: 0.3 }, 7)],
  ['search, exp curriculum from 0 (JSON writes its first noise as 0)', config('search', { noiseSchedule: 'exp', noise: 0.5, noiseIters: 3 }, 23)],
  ['search, 1 hop, fixed noise', config('search', { noise: 0.25, entities: 4, values: 6 }, 11)],
  ['tools, 4 steps, distractors, judge noise, strict arguments, checklist reward, RM noise', config('tools', { toolSteps: 4, toolValues: 4, distractors: 3, judgeNoise: 0.15, strictArgs: true, toolReward: 'checklist', rmNoise: 0.2 }, 3)],
  ['tools, outcome reward', config('tools', {}, 5)],
  ['roles, scaled and offset executor, RM noise', config('roles', { roleScale: 3, roleOffset: -0.5, rmNoise: 0.5 }, 13)],
  ['sequence, partial reward', config('sequence', { symbols: 3, seqLen: 4, targets: 5, seqReward: 'partial' }, 17)],
  ['sequence, exact reward', config('sequence', {}, 19)],
];

function allowedAfter(env: TaskEnv, prev: number): number[] {
  const V = env.vocab.length;
  const out: number[] = [];
  for (let t = 0; t < V; t++) if (env.grammar[prev * V + t]) out.push(t);
  return out;
}

interface Replay {
  actions: number[][];
  obs: number[][];
  mask: number[][];
  batch: EpisodeBatch;
}

/** Rolls one batch out: per row a style (oracle, random, or oracle with random slips), seeded. */
function drive(env: TaskEnv, batch: EpisodeBatch, rng: Rng): Replay {
  const { promptLen: P, actionLen: L, obsLen: O, maxTurns } = env.layout;
  const N = batch.size;
  const style = Array.from({ length: N }, () => rng.int(3));
  const last = Array.from({ length: N }, (_, n) => batch.prompt[n * P + P - 1]!);
  const out: Replay = { actions: [], obs: [], mask: [], batch };
  for (let turn = 0; turn < maxTurns; turn++) {
    const actions = new Int32Array(N * L);
    for (let n = 0; n < N; n++) {
      const useOracle = style[n] === 0 || (style[n] === 2 && rng.next() < 0.7);
      if (useOracle) {
        actions.set(batch.oracle!(n, turn), n * L);
        continue;
      }
      let prev = last[n]!;
      for (let a = 0; a < L; a++) {
        const allowed = allowedAfter(env, prev);
        prev = allowed[rng.int(allowed.length)]!;
        actions[n * L + a] = prev;
      }
    }
    const r = batch.step(turn, actions);
    for (let n = 0; n < N; n++) if (r.obs[n * O + O - 1]) last[n] = r.obs[n * O + O - 1]!;
    out.actions.push(Array.from(actions));
    out.obs.push(Array.from(r.obs));
    out.mask.push(Array.from(r.actionMask));
  }
  return out;
}

const tmp = mkdtempSync(join(tmpdir(), 'recipe-parity-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function writeRecipe(cfg: RunConfig, dir: string, episodes = 8): string[] {
  const recipe = buildRecipe(cfg, { episodes });
  for (const f of recipe.files) {
    mkdirSync(dirname(join(dir, f.path)), { recursive: true });
    writeFileSync(join(dir, f.path), f.text);
  }
  return recipe.files.map((f) => f.path);
}

describe('recipe: the Python environment against the TypeScript tasks', () => {
  it.skipIf(!hasPython)(hasPython ? 'every generated .py file compiles (python3 -m py_compile)' : 'SKIPPED: python3 not on PATH, so the generated Python is not compiled', () => {
    for (const task of ['search', 'tools', 'roles', 'sequence'] as const) {
      const dir = join(tmp, `compile-${task}`);
      const py = writeRecipe(config(task, {}, 1), dir).filter((p) => p.endsWith('.py'));
      expect(py.length).toBeGreaterThan(10);
      const r = spawnSync('python3', ['-m', 'py_compile', ...py], { cwd: dir, encoding: 'utf8' });
      expect(r.stderr).toBe('');
      expect(r.status).toBe(0);
    }
  });

  it.skipIf(!hasPython)(hasPython ? "make_data.py writes the page's data/train.jsonl byte for byte (every case, 250 episodes)" : 'SKIPPED: python3 not on PATH, so make_data.py is not compared', () => {
    for (const [name, cfg] of CASES) {
      const dir = join(tmp, `data-${name.replace(/[^a-z0-9]+/gi, '-')}`);
      writeRecipe(cfg, dir, 250);
      const r = spawnSync('python3', ['make_data.py', '--episodes', '250', '--out', 'again.jsonl'], { cwd: dir, encoding: 'utf8' });
      expect(r.status, r.stderr).toBe(0);
      expect(readFileSync(join(dir, 'again.jsonl'), 'utf8'), name).toBe(readFileSync(join(dir, 'data/train.jsonl'), 'utf8'));
    }
  });

  it.skipIf(!hasPython)(hasPython ? 'a long noise curriculum (noiseIters 500, 2,000 rows over 500 iterations): make_data.py writes the same bytes' : 'SKIPPED: python3 not on PATH', () => {
    const cfg = config('search', { noise: 0.5, noiseSchedule: 'exp', noiseStart: 0.1, noiseIters: 500 }, 29);
    const dir = join(tmp, 'long-curriculum');
    writeRecipe({ ...cfg, batch: 4 }, dir, 2000);
    const r = spawnSync('python3', ['make_data.py', '--episodes', '2000', '--out', 'again.jsonl'], { cwd: dir, encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    const page = readFileSync(join(dir, 'data/train.jsonl'), 'utf8').split('\n');
    const again = readFileSync(join(dir, 'again.jsonl'), 'utf8').split('\n');
    expect(page).toHaveLength(2001);
    expect(again.filter((line, i) => line !== page[i]).length).toBe(0);
    expect(new Set(page.filter(Boolean).map((l) => (JSON.parse(l) as { search_noise: number }).search_noise)).size).toBe(500);
  });

  it.skipIf(!hasPython)(hasPython ? "the Python episode reads its search noise from its row, never from the config" : 'SKIPPED: python3 not on PATH', () => {
    const dir = join(tmp, 'row-noise');
    writeRecipe(config('search', { noise: 0 }, 31), dir, 8);
    const py = [
      'import json, sys',
      'sys.path.insert(0, ".")',
      'from toyenv.text import TextEpisode',
      'config = json.load(open("config.json"))',
      'rows = [json.loads(l) for l in open("data/train.jsonl")]',
      'out = []',
      'for p in (0, 1):',
      '    seen = []',
      '    for n, row in enumerate(rows):',
      '        ep = TextEpisode(config, dict(row, search_noise=p), n)',
      '        seen.append(ep.act("SEARCH %s %s" % (row["question"][1], row["question"][2])) == "RES v%d" % row["tables"]["truth"])',
      '    out.append(seen)',
      'missing = dict(rows[0]); del missing["search_noise"]',
      'try:',
      '    TextEpisode(config, missing, 0)',
      'except ValueError as e:',
      '    out.append(str(e))',
      'print(json.dumps(out))',
    ].join('\n');
    const run = spawnSync('python3', ['-c', py], { cwd: dir, encoding: 'utf8' });
    expect(run.stderr).toBe('');
    const [clean, noisy, missing] = JSON.parse(run.stdout) as [boolean[], boolean[], string];
    // config.json says noise 0; a row that says 1 makes every search return a wrong document.
    expect(clean).toEqual(Array(8).fill(true));
    expect(noisy).toEqual(Array(8).fill(false));
    expect(missing).toBe("row 'search-1-0' has no search_noise: write the rows with make_data.py or the page");
  });

  for (const [name, cfg] of CASES) {
    it.skipIf(!hasPython)(hasPython ? `${name}: 1,000 episodes, same rows, observations and rewards` : `SKIPPED: python3 not on PATH (${name})`, () => {
      const dir = join(tmp, name.replace(/[^a-z0-9]+/gi, '-'));
      writeRecipe(cfg, dir);
      const env = createEnv(cfg);
      const policy = createRng(cfg.seed ^ 0x7e57);
      const replays: Replay[] = [];
      const rows: RecipeRow[][] = [];
      for (let it = 1; it <= ITERATIONS; it++) {
        const batch = env.sample(PROMPTS, GROUP, createRng(cfg.seed).fork(it), it - 1);
        replays.push(drive(env, batch, policy.fork(it)));
        rows.push(batchRows(cfg, it, PROMPTS));
      }
      // The TypeScript rows are the env's own prompts and answers.
      for (const [i, batchRowsTs] of rows.entries()) {
        const b = replays[i]!.batch;
        const P = env.layout.promptLen;
        batchRowsTs.forEach((row, k) => {
          const words = Array.from(b.prompt.subarray(k * GROUP * P + 1, k * GROUP * P + P), (t) => env.vocab[t]);
          expect(words).toEqual(row.question);
          const ans = Array.from(b.answerTokens!.subarray(k * GROUP * env.layout.actionLen, (k * GROUP + 1) * env.layout.actionLen), (t) => env.vocab[t]);
          const expected = cfg.task === 'tools' ? (row.answer as string[][]).at(-1)! : (row.answer as string[]);
          expect(ans.slice(0, expected.length)).toEqual(expected);
        });
      }
      const casePath = join(dir, 'case.json');
      const outPath = join(dir, 'out.json');
      writeFileSync(casePath, JSON.stringify({ config: pythonConfig(cfg), prompts: PROMPTS, group: GROUP, batches: replays.map((r, i) => ({ iteration: i + 1, actions: r.actions })) }));
      const run = spawnSync('python3', ['-m', 'toyenv.parity', casePath, outPath], { cwd: dir, encoding: 'utf8' });
      expect(run.stderr).toBe('');
      expect(run.status).toBe(0);
      const py = JSON.parse(readFileSync(outPath, 'utf8')) as Array<Record<string, unknown>>;
      let solved = 0;
      let failed = 0;
      replays.forEach((r, i) => {
        const b = r.batch;
        const got = py[i]!;
        expect(got.rows).toEqual(JSON.parse(JSON.stringify(rows[i])));
        expect(got.obs).toEqual(r.obs);
        expect(got.mask).toEqual(r.mask);
        expect(got.reward).toEqual(Array.from(b.reward));
        expect(got.reward_true).toEqual(Array.from(b.rewardTrue));
        expect(got.success).toEqual(Array.from(b.success));
        if (b.turnRewards) expect(got.turn_rewards).toEqual(Array.from(b.turnRewards));
        if (b.stepRewards) expect(got.step_rewards).toEqual(Array.from(b.stepRewards));
        if (b.roleReward) expect(got.role_reward).toEqual(Array.from(b.roleReward));
        if (b.turnRole) expect(got.turn_role).toEqual(Array.from(b.turnRole));
        for (const s of b.success) s ? solved++ : failed++;
      });
      // Both outcomes occur, so the rewards compared are not all one kind.
      expect(solved).toBeGreaterThan(100);
      expect(failed).toBeGreaterThan(100);
    });
  }
});
