/**
 * The host's share of a rollout: each task's TypeScript (sample() and step() for every turn) and
 * the collector's bookkeeping (workers/core/collect.ts rollOut), without a model. On a GPU the model's
 * work per turn is a few dispatches, so this is most of a rollout there (BENCHMARKS.md: 43 of the
 * H200's 49 ms per iteration at 64x were the rollout). Prints a table; not part of `npm test`:
 *   npm run bench:host -- [--tasks search,tools,roles,sequence] [--batches 16,128,1024] [--reps 15]
 *
 * What stands in for the policy: a backend whose sampleTurn answers at once, with the task
 * oracle's tokens for 70 % of the rows (where the task has an oracle) and, for the rest, tokens
 * drawn uniformly from what the task's grammar allows after the previous token (a policy's
 * support), all from a seeded generator. Its own time is measured and subtracted, so the figure
 * is rollOut's and the task's time alone.
 *
 * A second table (`--trainer search:grpo,search:ppo,...`, `--trainer-batches`, `--trainer-reps 5`,
 * `--trainer-rounds 4`) times whole trainer iterations (workers/core/trainer.ts step): on the CPU
 * backend, recording what its sampleTurn and update return, then (each round) with a backend that
 * replays them: the replays' time is the host's work of an iteration (the tasks, the rollout's
 * bookkeeping, the reward stage, the loss weights, the metrics row, a host copy of the tokens),
 * which a GPU backend pays as well, without the CPU backend's garbage collections, which
 * subtracting its calls' time from the first run would leave in.
 */
import type { Backend, UpdateInput, UpdateStats } from '../workers/core/backend';
import { rollOut, type RolloutLayout, type RollState } from '../workers/core/collect';
import { defaultConfig, withFieldText } from '../workers/core/config';
import { createCpuBackend } from '../workers/core/cpuBackend';
import { copyRows } from '../workers/core/rowCopy';
import { createTrainer } from '../workers/core/trainer';
import { createEnv, PAD, seqLen, type EpisodeBatch, type TaskEnv } from '../workers/core/envs';
import { createRng, type Rng } from '../workers/core/rng';
import { now, summarize } from './lib/stats';
import { flagsOrExit } from './lib/flags';
import { fmt, table } from './lib/tables';

const GROUP = 8;
const ORACLE_SHARE = 0.7;

const ALL_TASKS = 'search,tools,roles,sequence';

const flags = flagsOrExit(
  {
    tasks: { kind: 'text', fallback: '', oneOf: ALL_TASKS.split(',') },
    batches: { kind: 'counts', fallback: '16,128,1024' },
    reps: { kind: 'count', fallback: '15' },
    trainer: { kind: 'text', fallback: '' },
    'trainer-batches': { kind: 'counts', fallback: '16,128,1024' },
    'trainer-reps': { kind: 'count', fallback: '5' },
    'trainer-rounds': { kind: 'count', fallback: '4' },
  },
  `npm run bench:host -- [--tasks ${ALL_TASKS}] [--batches 16,128,1024] [--reps 15] [--trainer search:grpo,tools] [--trainer-batches 16,128,1024] [--trainer-reps 5] [--trainer-rounds 4]`,
);

/** A token the grammar allows after `prev`, uniformly (every grammar row allows at least one). */
function grammarToken(env: TaskEnv, prev: number, rng: Rng): number {
  const V = env.vocab.length;
  let count = 0;
  for (let t = 0; t < V; t++) count += env.grammar[prev * V + t]!;
  let k = rng.int(count);
  for (let t = 0; t < V; t++) if (env.grammar[prev * V + t] && k-- === 0) return t;
  return PAD;
}

/** The stand-in policy's turn: oracle or grammar tokens per row. */
function standInTurn(env: TaskEnv, ep: EpisodeBatch, st: RollState, l: RolloutLayout, turn: number, rng: Rng): Int32Array {
  const { N, L, actionLen, obsLen, promptLen } = l;
  const actions = new Int32Array(N * actionLen);
  for (let n = 0; n < N; n++) {
    const o = ep.oracle && rng.next() < ORACLE_SHARE ? ep.oracle(n, turn) : null;
    let prev = st.seq[n * L + promptLen + turn * (actionLen + obsLen) - 1]!;
    for (let a = 0; a < actionLen; a++) {
      prev = o ? o[a]! : grammarToken(env, prev, rng);
      actions[n * actionLen + a] = prev;
    }
  }
  return actions;
}

interface HostRow {
  task: string;
  rollouts: number;
  turns: number;
  sampleMs: ReturnType<typeof summarize>;
  rolloutMs: ReturnType<typeof summarize>;
}

async function measure(task: string, batch: number, reps: number, warmup: number): Promise<HostRow> {
  const env = createEnv(withFieldText(defaultConfig(), 'task', task));
  const { promptLen, actionLen, obsLen, maxTurns } = env.layout;
  const N = batch * GROUP;
  const L = seqLen(env.layout);
  const l: RolloutLayout = { N, L, Tp: maxTurns * actionLen, promptLen, actionLen, obsLen, maxTurns };
  const sampleMs: number[] = [];
  const rolloutMs: number[] = [];
  let turns = 0;
  for (let r = 0; r < warmup + reps; r++) {
    const t0 = now();
    const ep = env.sample(batch, GROUP, createRng(1000 + r), 0);
    const tSample = now() - t0;
    const seq = new Int32Array(N * L).fill(PAD);
    for (let n = 0; n < N; n++) seq.set(ep.prompt.subarray(n * promptLen, (n + 1) * promptLen), n * L);
    const st: RollState = { ep, seq, mask: new Float32Array(N * l.Tp), actions: new Int32Array(N * l.Tp).fill(PAD) };
    const rng = createRng(2000 + r);
    let standIn = 0;
    let taken = 0;
    const backend = {
      writeSequences() {},
      writeTurn() {},
      async sampleTurn(turn: number) {
        const s = now();
        const a = standInTurn(env, ep, st, l, turn, rng);
        standIn += now() - s;
        taken++;
        return a;
      },
    } as unknown as Backend;
    const t1 = now();
    await rollOut(backend, l, st, 1, null);
    const tRollout = now() - t1 - standIn;
    if (r >= warmup) {
      sampleMs.push(tSample);
      rolloutMs.push(tRollout);
      turns = taken;
    }
  }
  return { task, rollouts: N, turns, sampleMs: summarize(sampleMs), rolloutMs: summarize(rolloutMs) };
}

interface TrainerRow {
  config: string;
  rollouts: number;
  stepMs: ReturnType<typeof summarize>;
  backendMs: ReturnType<typeof summarize>;
  hostMs: ReturnType<typeof summarize>;
}

/**
 * Host time of whole trainer iterations. A first trainer runs on the CPU backend and records what
 * its sampleTurn and update returned; others, same config, replay them from a backend that
 * only keeps a host copy of the tokens (as the GPU backend's shadow does): its step() time is the
 * host's work, with no model and none of the CPU backend's garbage in it.
 */
async function measureTrainer(spec: string, batch: number, reps: number, warmup: number, rounds: number): Promise<TrainerRow> {
  const [task, methods] = spec.split(':') as [string, string | undefined];
  let cfg = withFieldText(withFieldText(defaultConfig(), 'task', task), 'batch', String(batch));
  if (methods) cfg = withFieldText(cfg, 'methods', methods.replaceAll('+', ','));
  const iters = warmup + reps;
  const tokens: Int32Array[] = [];
  const updates: UpdateStats[] = [];
  let inBackend = 0;
  const recorded = await createTrainer(cfg, (shape, init) => {
    const b = createCpuBackend(shape, init);
    return {
      ...b,
      async sampleTurn(turn: number, iter: number) {
        const t = now();
        const out = await b.sampleTurn(turn, iter);
        inBackend += now() - t;
        tokens.push(Int32Array.from(out));
        return out;
      },
      async update(inp: UpdateInput) {
        const t = now();
        const out = await b.update(inp);
        inBackend += now() - t;
        updates.push(out);
        return out;
      },
    };
  });
  const stepMs: number[] = [];
  const backendMs: number[] = [];
  for (let r = 0; r < iters; r++) {
    inBackend = 0;
    const t0 = now();
    await recorded.step();
    stepMs.push(now() - t0);
    backendMs.push(inBackend);
  }
  recorded.destroy();

  // The replay is cheap next to the recording: replayed `rounds` times, each with a fresh trainer
  // (the same iterations again), so that its figure is not one machine hiccup's.
  const hostMs: number[] = [];
  let rollouts = 0;
  for (let round = 0; round < rounds; round++) {
    let nextTokens = 0;
    let nextUpdate = 0;
    const replayed = await createTrainer(cfg, (shape, init) => {
      const b = createCpuBackend(shape, init);
      const shadow = new Int32Array(shape.N * shape.L);
      const w = shape.actionLen + shape.obsLen;
      return {
        ...b,
        writeSequences: (seq: Int32Array) => shadow.set(seq),
        writeTurn: (turn: number, t: Int32Array) => copyRows(shadow, shape.promptLen + turn * w, shape.L, t, 0, w, w, shape.N),
        sampleTurn: async () => tokens[nextTokens++]!,
        update: async () => updates[nextUpdate++]!,
      };
    });
    for (let r = 0; r < iters; r++) {
      const t0 = now();
      await replayed.step();
      if (r >= warmup) hostMs.push(now() - t0);
    }
    if (nextTokens !== tokens.length || nextUpdate !== updates.length) {
      throw new Error(`trainer ${spec}: the replay took ${nextTokens} turns and ${nextUpdate} updates, the run ${tokens.length} and ${updates.length}`);
    }
    rollouts = replayed.shape.N;
    replayed.destroy();
  }
  const timed = (xs: number[]) => summarize(xs.slice(warmup));
  return { config: spec, rollouts, stepMs: timed(stepMs), backendMs: timed(backendMs), hostMs: summarize(hostMs) };
}

const medMin = (s: ReturnType<typeof summarize>) => `${fmt(s.median)} / ${fmt(s.min)}`;

async function main(): Promise<void> {
  const tasks = (flags.tasks || ALL_TASKS).split(',');
  const batches = flags.batches;
  const reps = flags.reps;
  const rows: HostRow[] = [];
  const trainerSpecs = flags.trainer.split(',').filter((x) => x.length > 0);
  if (trainerSpecs.length > 0) {
    const trainerRows: TrainerRow[] = [];
    const trainerReps = flags['trainer-reps'];
    const trainerRounds = flags['trainer-rounds'];
    for (const spec of trainerSpecs) {
      for (const batch of flags['trainer-batches']) {
        const row = await measureTrainer(spec, batch, trainerReps, 2, trainerRounds);
        trainerRows.push(row);
        console.error(`host: trainer ${spec} ${row.rollouts} rollouts: host ${row.hostMs.median.toFixed(2)} ms of ${row.stepMs.median.toFixed(1)}`);
      }
    }
    console.log(`Host work of a trainer iteration (its CPU backend's sampleTurn and update replayed ${trainerRounds} times), Node ${process.version}, ${trainerReps} repetitions after 2 warm-ups (median / min; the host's of all replays):\n`);
    console.log(
      table(
        ['task:methods', 'rollouts', 'iteration ms (CPU backend)', 'in sampleTurn + update ms', 'host ms (replayed)', 'µs per rollout'],
        trainerRows.map((r) => [
          r.config,
          r.rollouts.toLocaleString('en-US'),
          medMin(r.stepMs),
          medMin(r.backendMs),
          medMin(r.hostMs),
          ((1000 * r.hostMs.median) / r.rollouts).toFixed(2),
        ]),
      ),
    );
    if (flags.tasks === '') return;
    console.log('');
  }
  for (const task of tasks) {
    for (const batch of batches) {
      const row = await measure(task, batch, reps, 3);
      rows.push(row);
      console.error(`host: ${task} ${row.rollouts} rollouts: rollout ${row.rolloutMs.median.toFixed(2)} ms`);
    }
  }
  console.log(`Host side of a rollout, Node ${process.version}, ${reps} repetitions after 3 warm-ups (median / min):\n`);
  console.log(
    table(
      ['task', 'rollouts', 'turns', 'sample() ms', 'rollOut + step() ms', 'µs per rollout-turn'],
      rows.map((r) => [
        r.task,
        r.rollouts.toLocaleString('en-US'),
        String(r.turns),
        medMin(r.sampleMs),
        medMin(r.rolloutMs),
        ((1000 * r.rolloutMs.median) / (r.rollouts * Math.max(r.turns, 1))).toFixed(2),
      ]),
    ),
  );
}

await main();
