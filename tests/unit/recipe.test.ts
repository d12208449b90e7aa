/**
 * "Download recipe": the files each task's recipe holds, the hyperparameters that do not carry over
 * (with the playground's value beside them), the CLI's flags and errors, and the page's ZIP writer.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseRecipeArgs } from '../../cli/recipeArgs';
import { UsageError } from '../../cli/args';
import { defaultConfig, withField, withFieldText, withMethods, type RunConfig } from '../../workers/core/config';
import { buildRecipe, defaultEpisodes } from '../../workers/formats/recipe';
import { UPSTREAM } from '../../workers/formats/recipe/readme';
import { crc32, zipFiles } from '../../workers/formats/recipe/zip';
import { encodeShareLink } from '../../workers/content/shareLink';

const hasPython = spawnSync('python3', ['--version']).status === 0;
const tmp = mkdtempSync(join(tmpdir(), 'recipe-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const TASKS = ['search', 'tools', 'roles', 'sequence'] as const;
const cfgFor = (task: RunConfig['task']) => withFieldText(defaultConfig(), 'task', task);
const file = (cfg: RunConfig, path: string, episodes = 40) => buildRecipe(cfg, { episodes }).files.find((f) => f.path === path)!.text;

describe('buildRecipe', () => {
  it.each(TASKS)('%s: the same file list, data rows as asked, scripts and README for the task', (task) => {
    const cfg = cfgFor(task);
    const r = buildRecipe(cfg, { episodes: 40 });
    expect(r.name).toBe(`recipe-${task}-seed1`);
    expect(r.files.map((f) => f.path).sort()).toEqual(
      [
        'README.md', 'config.json', 'data/train.jsonl', 'make_data.py', 'toyenv/__init__.py', 'toyenv/common.py', 'toyenv/parity.py', 'toyenv/rng.py',
        'toyenv/roles.py', 'toyenv/search.py', 'toyenv/sequence.py', 'toyenv/text.py', 'toyenv/tools.py', 'trl_run/train_grpo.py',
        'verl_run/interaction_config.yaml', 'verl_run/prepare_data.py', 'verl_run/reward.py', 'verl_run/run.sh', 'verl_run/toy_interaction.py',
      ].sort(),
    );
    const rows = file(cfg, 'data/train.jsonl').trim().split('\n').map((l) => JSON.parse(l) as { task: string; iteration: number; index: number });
    expect(rows).toHaveLength(40);
    expect(rows.every((row) => row.task === task)).toBe(true);
    // 16 prompts per playground batch: rows 32..39 are iteration 3's first eight.
    expect(rows.map((row) => [row.iteration, row.index])[35]).toEqual([3, 3]);
    expect(JSON.parse(file(cfg, 'config.json'))).toEqual({ task, seed: 1, batch: 16, group: 8, env: cfg.env });
    expect(file(cfg, 'README.md')).toContain(`# Recipe: the toy ${task} task on verl and TRL`);
    expect(file(cfg, 'verl_run/run.sh')).toContain('"trainer.total_training_steps=3"');
    expect(r.files.find((f) => f.path === 'verl_run/run.sh')!.executable).toBe(true);
  });

  it('the learning rate, lengths and per-device batch are LLM-sane, each with the playground value beside it', () => {
    const cfg = withFieldText(withFieldText(defaultConfig(), 'lr', '0.01'), 'env.maxTurns', '4');
    const verl = file(cfg, 'verl_run/run.sh');
    expect(verl).toContain('  # playground: 0.01 for a tiny MLP; an LLM diverges at that rate\n  "actor_rollout_ref.actor.optim.lr=0.000001"');
    expect(verl).toContain('"data.max_response_length=1024"');
    // One more than the toy's 4 turns: verl's loop stops at the limit before the environment sees that turn.
    expect(verl).toContain('"actor_rollout_ref.rollout.multi_turn.max_assistant_turns=5"');
    expect(verl).toContain('"data.shuffle=False"');
    const trl = file(cfg, 'trl_run/train_grpo.py');
    expect(trl).toContain('learning_rate=0.000001,  # playground: 0.01');
    expect(trl).toContain('per_device_train_batch_size=8,  # playground: 128 completions per optimizer step; kept as 8 x 16 accumulation steps');
    expect(trl).toContain('steps_per_generation=16,');
    expect(trl).toContain('max_tool_calling_iterations=4,');
    expect(trl).not.toContain('# @GENERATED@');
    const readme = file(cfg, 'README.md');
    expect(readme).toContain('| `actor_rollout_ref.actor.optim.lr` | 0.000001 | 0.01 for a tiny MLP; an LLM diverges at that rate |');
    expect(readme).toContain('| `learning_rate` | 0.000001 | 0.01 for a tiny MLP; an LLM diverges at that rate |');
  });

  it("the method's mapped settings carry over (a raised clip and a KL loss)", () => {
    let cfg = withField(defaultConfig(), 'clipHigh', 0.28);
    cfg = withField(cfg, 'klCoef', 0.001);
    const verl = file(cfg, 'verl_run/run.sh');
    expect(verl).toContain('"actor_rollout_ref.actor.clip_ratio_high=0.28"');
    expect(verl).toContain('"actor_rollout_ref.actor.kl_loss_coef=0.001"');
    expect(verl).toContain('"actor_rollout_ref.actor.kl_loss_type=low_var_kl"');
    const trl = file(cfg, 'trl_run/train_grpo.py');
    expect(trl).toContain('epsilon_high=0.28,');
    expect(trl).toContain('beta=0.001,');
  });

  it('the README cites the upstream files and commits the adapters follow', () => {
    const readme = file(cfgFor('tools'), 'README.md');
    for (const fw of ['verl', 'trl'] as const) expect(readme).toContain(UPSTREAM[fw].commit);
    for (const path of ['verl/interactions/base.py', 'verl/experimental/agent_loop/tool_agent_loop.py', 'verl/workers/reward_manager/naive.py', 'trl/trainer/grpo_trainer.py']) {
      expect(readme).toContain(path);
    }
    expect(readme).not.toMatch(/METHODS\.md|DESIGN\.md|shared\//);
  });

  it("the scripts' headers say what runs: grpo+edge is GRPO with EDGE-GRPO named as not carried over, RLOO is GRPO on TRL", () => {
    const edge = withMethods(defaultConfig(), ['grpo', 'edge']);
    const head = (text: string) => text.split('\n').filter((l) => l.startsWith('# ')).join('\n');
    const verl = head(file(edge, 'verl_run/run.sh'));
    expect(verl).toContain("# What runs: verl's GRPO (algorithm.adv_estimator=grpo), with PPO's clipped surrogate.");
    expect(verl).toContain('# Not carried over: EDGE-GRPO (edge): entropy-scaled advantages and error correction need the EDGE-GRPO reference code (a TRL fork).');
    const trl = head(file(edge, 'trl_run/train_grpo.py'));
    expect(trl).toContain("# What runs: TRL's GRPOTrainer: GRPO");
    expect(trl).toContain('# Not carried over: EDGE-GRPO (edge)');
    const rloo = withMethods(defaultConfig(), ['rloo']);
    expect(head(file(rloo, 'verl_run/run.sh'))).toContain("# What runs: verl's RLOO (algorithm.adv_estimator=rloo)");
    expect(head(file(rloo, 'trl_run/train_grpo.py'))).toContain("# In place of the playground's RLOO (rloo): TRL's GRPOTrainer has no leave-one-out baseline");
    // No script header says GRPO alone where another estimator runs.
    expect(file(rloo, 'verl_run/run.sh')).not.toMatch(/verl GRPO/);
    const readme = file(rloo, 'README.md');
    expect(readme).toContain("- What runs: verl's RLOO (algorithm.adv_estimator=rloo)");
  });

  it('an estimator verl lacks runs as GRPO, said in the script and the README; PPO gets a critic on the small model', () => {
    const igpo = withMethods(defaultConfig(), ['igpo']);
    const run = file(igpo, 'verl_run/run.sh');
    expect(run).toContain("# In place of the playground's IGPO (igpo): information-gain turn rewards need the reference IGPO code");
    expect(run).toContain('  # playground: IGPO (igpo), which verl has no estimator for; GRPO runs in its place (see the header)\n  "algorithm.adv_estimator=grpo"');
    expect(file(igpo, 'README.md')).toContain('| `algorithm.adv_estimator` | grpo | IGPO (igpo), which verl has no estimator for;');
    const ppo = file(withMethods(defaultConfig(), ['ppo']), 'verl_run/run.sh');
    expect(ppo).toContain('"algorithm.adv_estimator=gae"');
    expect(ppo).toContain('"critic.model.path=Qwen/Qwen2.5-0.5B-Instruct"');
    expect(ppo).toContain('"actor_rollout_ref.model.path=Qwen/Qwen2.5-0.5B-Instruct"');
    expect(ppo).toContain('"critic.ppo_micro_batch_size_per_gpu=4"');
  });

  it('the README has pinned install and launch steps: verl from source, TRL with jmespath, a Ray cluster, accelerate launch', () => {
    const readme = file(cfgFor('search'), 'README.md');
    expect(readme).toContain(`git checkout ${UPSTREAM.verl.commit}`);
    expect(readme).toContain('pip install -e ".[sglang]"');
    expect(readme).toContain(`"trl @ git+https://github.com/huggingface/trl.git@${UPSTREAM.trl.commit}" \\\n        "transformers>=5.2.0" datasets jmespath`);
    expect(readme).toContain('trl/trainer/grpo_trainer.py`:600-604');
    expect(readme).toContain('export PYTHONPATH=/mnt/recipe/verl_run:/mnt/recipe:$PYTHONPATH');
    expect(readme).toContain('NNODES=2 GPUS=8 bash verl_run/run.sh');
    expect(readme).toContain('accelerate launch --num_processes P trl_run/train_grpo.py');
    expect(readme).toContain('(8 x 16 = 128 completions per optimizer step, 128 per generation: 16 prompts x 8)');
    expect(file(cfgFor('search'), 'verl_run/run.sh')).toContain('"trainer.nnodes=${NNODES:-1}"');
  });

  it('refuses an episode count it cannot write, naming it', () => {
    expect(() => buildRecipe(defaultConfig(), { episodes: 0 })).toThrow('episodes 0: expected an integer from 1 to 200000');
    expect(() => buildRecipe(defaultConfig(), { episodes: 2.5 })).toThrow('episodes 2.5');
    expect(defaultEpisodes(defaultConfig())).toBe(3200);
  });
});

describe('recipe CLI', () => {
  it('parses --url, --config, --out, --episodes; one line for each bad input', () => {
    expect(parseRecipeArgs(['--url', 'x', '--out', 'd', '--episodes=12'])).toEqual({ configArgs: ['--url', 'x'], out: 'd', episodes: 12, help: false });
    const bad: Array<[string[], string]> = [
      [['--url', 'x'], '--out: missing; give the folder to write the recipe to'],
      [['--out', 'd', '--episodes', 'ten'], '--episodes ten: expected an integer from 1 to 200000'],
      [['--out', 'd', '--episodes', '0'], '--episodes 0: expected an integer from 1 to 200000'],
      [['--out', 'd', '--iters', '3'], '--iters: unknown flag; expected --url, --config, --set, --seed, --out, --episodes or --help'],
      [['--out'], '--out: expected a value after it'],
    ];
    for (const [argv, msg] of bad) {
      expect(() => parseRecipeArgs(argv)).toThrow(UsageError);
      expect(() => parseRecipeArgs(argv)).toThrow(msg);
    }
  });

  it('writes the recipe of a share link; bad input exits 2 with one line', () => {
    const link = encodeShareLink(withFieldText(defaultConfig(), 'task', 'roles'));
    const out = join(tmp, 'cli');
    const ok = spawnSync('npm', ['run', '-s', 'recipe', '--', '--url', link, '--out', out, '--episodes', '20'], { encoding: 'utf8' });
    expect(ok.stderr).toBe('');
    expect(ok.status).toBe(0);
    expect(ok.stdout).toContain('recipe-roles-seed1: 19 files written to');
    expect(readFileSync(join(out, 'data/train.jsonl'), 'utf8').trim().split('\n')).toHaveLength(20);
    expect(statSync(join(out, 'verl_run/run.sh')).mode & 0o111).not.toBe(0);
    const again = spawnSync('npm', ['run', '-s', 'recipe', '--', '--url', link, '--out', out], { encoding: 'utf8' });
    expect(again.status).toBe(2);
    expect(again.stderr).toBe(`error: --out ${out}: the folder is not empty\n`);
    const cfgFile = join(tmp, 'bad.json');
    writeFileSync(cfgFile, '{"task": "chess"}');
    const bad = spawnSync('npm', ['run', '-s', 'recipe', '--', '--config', cfgFile, '--out', join(tmp, 'x')], { encoding: 'utf8' });
    expect(bad.status).toBe(2);
    expect(bad.stderr.trim().split('\n')).toHaveLength(1);
    expect(bad.stderr).toMatch(/^error: task: /);
  });
});

describe('zip writer', () => {
  it('crc32 gives the standard check value', () => {
    expect(crc32(new TextEncoder().encode('123456789'))).toBe(0xcbf43926);
  });

  it('refuses paths outside the archive and duplicates', () => {
    expect(() => zipFiles([{ path: '../x', text: '' }])).toThrow('zip: "../x" is not a relative path inside the archive');
    expect(() => zipFiles([{ path: 'a', text: '' }, { path: 'a', text: '' }])).toThrow('zip: a is listed twice');
  });

  it.skipIf(!hasPython)(hasPython ? "python3's zipfile reads the recipe back: names, text, CRCs and the script's mode" : 'SKIPPED: python3 not on PATH, so the archive is not read back', () => {
    const r = buildRecipe(cfgFor('search'), { episodes: 16 });
    const entries = r.files.map((f) => ({ path: `${r.name}/${f.path}`, text: f.text, mode: f.executable ? 0o755 : 0o644 }));
    const zipPath = join(tmp, 'r.zip');
    writeFileSync(zipPath, zipFiles(entries));
    const py = [
      'import json, sys, zipfile',
      'z = zipfile.ZipFile(sys.argv[1])',
      'assert z.testzip() is None',
      'print(json.dumps({i.filename: [z.read(i).decode("utf-8"), (i.external_attr >> 16) & 0o777] for i in z.infolist()}))',
    ].join('\n');
    const run = spawnSync('python3', ['-c', py, zipPath], { encoding: 'utf8', maxBuffer: 64 << 20 });
    expect(run.stderr).toBe('');
    const got = JSON.parse(run.stdout) as Record<string, [string, number]>;
    expect(Object.keys(got)).toEqual(entries.map((e) => e.path));
    for (const e of entries) expect(got[e.path]).toEqual([e.text, e.mode]);
  });
});

describe('the framework adapters drive the toy through text', () => {
  /**
   * verl and TRL are not installed here: the smallest modules with the import names the adapters
   * use (verl.interactions.base.BaseInteraction, datasets.Dataset, trl.GRPOConfig / GRPOTrainer)
   * let Python import them; the episode logic they call is the real toyenv.
   */
  const SHIMS: Record<string, string> = {
    'shims/verl/__init__.py': '',
    'shims/verl/interactions/__init__.py': '',
    'shims/verl/interactions/base.py': 'class BaseInteraction:\n    def __init__(self, config):\n        self.config = config\n',
    'shims/datasets.py': 'class Dataset:\n    @staticmethod\n    def from_list(rows):\n        return rows\n',
    'shims/trl.py': 'class GRPOConfig:\n    def __init__(self, **kw):\n        self.kw = kw\nclass GRPOTrainer:\n    pass\n',
  };
  const DRIVER = `
import asyncio, json, sys
sys.path[:0] = ["shims", "verl_run", "trl_run", "."]
from toy_interaction import ToyEnvInteraction
from reward import compute_score
import train_grpo

rows = [json.loads(l) for l in open("data/train.jsonl")]
out = {"verl": [], "trl": [], "stopped": None}
async def verl(row, replies):
    it = ToyEnvInteraction({})
    await it.start_interaction("rollout-%s" % row["id"], row=json.dumps(row))
    scores, msgs = [], [{"role": "user", "content": " ".join(row["question"])}]
    for reply in replies:
        msgs.append({"role": "assistant", "content": "Let me think.\\n" + reply})
        done, obs, score, _ = await it.generate_response("rollout-%s" % row["id"], msgs)
        scores.append(score)
        msgs.append({"role": "user", "content": obs})
        if done:
            break
    return compute_score("toyenv/" + row["task"], "", json.dumps(row["answer"]), {"turn_scores": scores}), scores, done
for row in rows[:4]:
    out["verl"].append(asyncio.run(verl(row, json.loads(sys.argv[1])[row["id"]])))
data = train_grpo.dataset("data/train.jsonl")
envs = []
for item in data[:4]:
    env = train_grpo.ToyEnv()
    env.reset(row=item["row"])
    for reply in json.loads(sys.argv[1])[json.loads(item["row"])["id"]]:
        env.act(reply)
    envs.append(env)
out["trl"] = train_grpo.toy_reward(prompts=[], completions=[], completion_ids=[], environments=envs)
stopped = train_grpo.ToyEnv()
stopped.reset(row=data[0]["row"])
out["stopped"] = train_grpo.toy_reward(prompts=[], completions=[], completion_ids=[], environments=[stopped])
print(json.dumps(out))
`;

  const EVICT = `
import asyncio, json, sys
sys.path[:0] = ["shims", "verl_run", "."]
from toy_interaction import ToyEnvInteraction
rows = [json.loads(l) for l in open("data/train.jsonl")]
out = {"sizes": [], "default": ToyEnvInteraction({}).max_live}
async def main():
    it = ToyEnvInteraction({"max_live_episodes": 3})
    say = lambda r: [{"role": "assistant", "content": "SEARCH " + r["question"][1] + " " + r["question"][2]}]
    await it.start_interaction("keep", row=json.dumps(rows[0]))
    for k in range(1, 7):
        # A rollout verl cuts off after one turn (its response budget): started, answered once, never again.
        rid = "cut-%d" % k
        await it.start_interaction(rid, row=json.dumps(rows[k]))
        await it.generate_response(rid, say(rows[k]))
        # A rollout still going is used between them.
        done, _, _, _ = await it.generate_response("keep", say(rows[0]))
        out["sizes"].append(it.live_episodes())
    out["keep_done"] = done
    try:
        await it.generate_response("cut-1", say(rows[1]))
    except KeyError as e:
        out["dropped"] = str(e)
asyncio.run(main())
print(json.dumps(out))
`;

  it.skipIf(!hasPython)(hasPython ? 'the interaction does not keep the episodes verl cuts off: at most max_live_episodes, least recently used dropped, named if one comes back' : 'SKIPPED: python3 not on PATH', () => {
    const cfg = withFieldText(withFieldText(defaultConfig(), 'task', 'search'), 'env.maxTurns', '8');
    const dir = join(tmp, 'evict');
    for (const f of buildRecipe(cfg, { episodes: 8 }).files) {
      mkdirSync(join(dir, f.path, '..'), { recursive: true });
      writeFileSync(join(dir, f.path), f.text);
    }
    for (const [p, text] of Object.entries(SHIMS)) {
      mkdirSync(join(dir, p, '..'), { recursive: true });
      writeFileSync(join(dir, p), text);
    }
    const run = spawnSync('python3', ['-c', EVICT], { cwd: dir, encoding: 'utf8' });
    expect(run.stderr).toBe('');
    const got = JSON.parse(run.stdout) as { sizes: number[]; keep_done: boolean; dropped: string; default: number };
    expect(got.sizes).toEqual([2, 3, 3, 3, 3, 3]);
    expect(got.keep_done).toBe(false);
    expect(got.dropped).toContain('episode cut-1 was dropped: more than max_live_episodes=3 episodes were live');
    expect(got.default).toBe(4096);
  });

  it.skipIf(!hasPython)(hasPython ? 'verl interaction + compute_score and the TRL environment + reward give the toy rewards' : 'SKIPPED: python3 not on PATH', () => {
    const cfg = withFieldText(withFieldText(defaultConfig(), 'task', 'search'), 'env.formatPenalty', '0.5');
    const dir = join(tmp, 'adapters');
    for (const f of buildRecipe(cfg, { episodes: 4 }).files) {
      mkdirSync(join(dir, f.path, '..'), { recursive: true });
      writeFileSync(join(dir, f.path), f.text);
    }
    for (const [p, text] of Object.entries(SHIMS)) {
      mkdirSync(join(dir, p, '..'), { recursive: true });
      writeFileSync(join(dir, p), text);
    }
    const rows = readFileSync(join(dir, 'data/train.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { id: string; question: string[]; answer: string[]; tables: { kb: number[] } });
    // Rows 0, 1: search the asked fact, then answer (right); row 2: answer wrong at once; row 3: search twice, never answer.
    const replies: Record<string, string[]> = {};
    rows.forEach((r, k) => {
      const [, e, a] = r.question;
      const truth = r.answer[1]!;
      const wrong = truth === 'v0' ? 'v1' : 'v0';
      replies[r.id] = k < 2 ? [`SEARCH ${e} ${a}`, `ANSWER ${truth}`] : k === 2 ? [`ANSWER ${wrong}`] : [`SEARCH ${e} ${a}`, `SEARCH ${e} ${a}`];
    });
    const run = spawnSync('python3', ['-c', DRIVER, JSON.stringify(replies)], { cwd: dir, encoding: 'utf8' });
    expect(run.stderr).toBe('');
    const got = JSON.parse(run.stdout) as { verl: Array<[number, number[], boolean]>; trl: number[]; stopped: number[] };
    expect(got.verl.map((v) => v[0])).toEqual([1, 1, 0, -0.5]);
    // Before the answer the score is the reward of stopping there: unanswered, -formatPenalty.
    expect(got.verl[0]![1]).toEqual([-0.5, 1]);
    expect(got.verl[3]![2]).toBe(false);
    expect(got.trl).toEqual([1, 1, 0, -0.5]);
    expect(got.stopped).toEqual([-0.5]);
  });
});
