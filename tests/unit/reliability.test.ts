/** Faults on the CPU backend: NaN roll-back, exact resume from snapshots, events from the API. */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { TrainerEvent } from '../../workers/entry/api';
import { defaultConfig, withFieldText, type RunConfig } from '../../workers/core/config';
import { CPU_BACKEND_MAX_BYTES, cpuBackendBytes, createCpuBackend } from '../../workers/core/cpuBackend';
import type { MetricRow } from '../../workers/core/metrics';
import { createTrainer, NonFiniteError, type TrainerSnapshot } from '../../workers/core/trainer';
import { createTrainerApi } from '../../workers/entry/trainerApi';

function cfg(overrides: Record<string, string> = {}): RunConfig {
  let c = defaultConfig();
  for (const [k, v] of Object.entries({ batch: '4', group: '4', 'model.hidden': '16', seed: '3', ...overrides })) c = withFieldText(c, k, v);
  return c;
}
const noMs = (r: MetricRow) => ({ ...r, ms: 0 });

describe('non-finite numbers', () => {
  it('a NaN in the parameters is detected, named, rolled back to the last snapshot, and training can go on', async () => {
    const t = await createTrainer(cfg(), createCpuBackend, { snapshotEvery: 2 });
    for (let i = 0; i < 3; i++) await t.step();
    expect(t.lastGood.iter).toBe(2);
    t.backend.injectNaN();
    const err = await t.step().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NonFiniteError);
    const e = err as NonFiniteError;
    expect(e.iter).toBe(4);
    expect(e.rolledBackTo).toBe(2);
    expect(e.quantities).toContain('parameters');
    expect(e.message).toMatch(/non-finite .*parameters.* at iteration 4: parameters rolled back to iteration 2/);
    const params = await t.backend.readParams();
    expect(params.every(Number.isFinite)).toBe(true);
    expect(Array.from(params)).toEqual(Array.from(t.lastGood.state.params));
    expect(t.iter).toBe(2);
    const next = await t.step();
    expect(next.iter).toBe(3);
    expect(Number.isFinite(next.loss)).toBe(true);
  });

  it('the replayed iteration equals the original one (roll-back is exact)', async () => {
    const a = await createTrainer(cfg(), createCpuBackend, { snapshotEvery: 2 });
    const rows: MetricRow[] = [];
    for (let i = 0; i < 3; i++) rows.push(noMs(await a.step()));
    a.backend.injectNaN();
    await a.step().catch(() => undefined);
    expect(noMs(await a.step())).toEqual(rows[2]);
  });
});

describe('snapshots and resume', () => {
  it('resuming from a snapshot reproduces the same iterations as the uninterrupted run', async () => {
    const snaps: TrainerSnapshot[] = [];
    const a = await createTrainer(cfg({ epochs: '2', klCoef: '0.01' }), createCpuBackend, { snapshotEvery: 3, onSnapshot: (s) => snaps.push(s) });
    const rows: MetricRow[] = [];
    for (let i = 0; i < 7; i++) rows.push(noMs(await a.step()));
    expect(snaps.map((s) => s.iter)).toEqual([3, 6]);
    const b = await createTrainer(cfg({ epochs: '2', klCoef: '0.01' }), createCpuBackend, { resume: snaps[0]! });
    expect(b.iter).toBe(3);
    const again: MetricRow[] = [];
    for (let i = 0; i < 4; i++) again.push(noMs(await b.step()));
    expect(again).toEqual(rows.slice(3));
    expect(Array.from(await b.backend.readParams())).toEqual(Array.from(await a.backend.readParams()));
  });
});

describe('trainer API faults (CPU backend)', () => {
  it('a NaN during start() pauses the run and reports a named event; no metrics row of the bad iteration is sent', async () => {
    const api = createTrainerApi(undefined);
    await api.configure(cfg(), 'cpu');
    const events: TrainerEvent[] = [];
    await api.subscribe((e) => events.push(e));
    for (let i = 0; i < 10; i++) await api.step();
    expect(events.filter((e) => e.type === 'snapshot').map((e) => (e.type === 'snapshot' ? e.snapshot.iter : 0))).toEqual([10]);
    await api.debug('nan');
    const seen: number[] = [];
    await api.start((rows) => seen.push(...rows.map((r) => r.iter)));
    expect(seen).toEqual([]);
    const nf = events.find((e) => e.type === 'non-finite');
    expect(nf).toMatchObject({ type: 'non-finite', iter: 11, rolledBackTo: 10 });
    expect((await api.step()).iter).toBe(11);
    await expect(api.debug('lose-device')).rejects.toThrow(/CPU backend/);
    await api.dispose();
  });

  it('configure with resume replays silently to the given iteration and goes on from there', async () => {
    const snaps: TrainerSnapshot[] = [];
    const a = createTrainerApi(undefined);
    await a.configure(cfg(), 'cpu');
    await a.subscribe((e) => e.type === 'snapshot' && snaps.push(e.snapshot));
    const rows: MetricRow[] = [];
    for (let i = 0; i < 14; i++) rows.push(noMs(await a.step()));
    const b = createTrainerApi(undefined);
    await b.configure(cfg(), 'cpu', { snapshot: snaps[0]!, replayTo: 12 });
    expect(noMs(await b.step())).toEqual(rows[12]);
    expect(noMs(await b.step())).toEqual(rows[13]);
  });
});

describe('a long CPU iteration is busy, not hung', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('the CPU backend reports progress after each forward of a rollout turn and between the stages of an update', async () => {
    let calls = 0;
    const t = await createTrainer(cfg({ epochs: '2', minibatches: '2' }), (shape, p) => createCpuBackend(shape, p, { progress: () => calls++ }));
    const b = t.backend;
    const perTurn: number[] = [];
    const sampleTurn = b.sampleTurn.bind(b);
    b.sampleTurn = async (turn, iter) => {
      const before = calls;
      const out = await sampleTurn(turn, iter);
      perTurn.push(calls - before);
      return out;
    };
    let inUpdate = 0;
    const update = b.update.bind(b);
    b.update = async (inp) => {
      const before = calls;
      const out = await update(inp);
      inUpdate = calls - before;
      return out;
    };
    await t.step();
    expect(perTurn.length).toBeGreaterThan(0);
    expect(perTurn.every((n) => n === t.shape.actionLen)).toBe(true);
    // Reference and old forwards, then per optimizer step (2 epochs x 2 minibatches) a backward
    // and an Adam step, and a fresh forward for every step but the first.
    expect(inUpdate).toBe(2 + 4 * 2 + 3);
  });

  it("the API sends 'working' events from inside an iteration, at most one a second, naming the iteration", async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(1_000_000);
    const api = createTrainerApi(undefined);
    await api.configure(cfg(), 'cpu');
    const events: TrainerEvent[] = [];
    await api.subscribe((e) => events.push(e));
    const working = () => events.filter((e) => e.type === 'working');
    await api.step();
    expect(working()).toEqual([{ type: 'working', iter: 1 }]);
    await api.step();
    expect(working()).toHaveLength(1);
    vi.setSystemTime(1_000_000 + 1000);
    await api.step();
    expect(working()).toEqual([{ type: 'working', iter: 1 }, { type: 'working', iter: 3 }]);
    await api.dispose();
  });
});

describe('the CPU backend refuses a run too big for a browser tab', () => {
  const big = (o: Record<string, string>) => {
    let c = defaultConfig();
    for (const [k, v] of Object.entries(o)) c = withFieldText(c, k, v);
    return c;
  };

  it('1,024 prompts x 64 rollouts at 1,024 hidden units: refused before anything runs, with its size and what to shrink', async () => {
    const err = await createTrainer(big({ batch: '1024', group: '64', 'model.hidden': '1024' }), createCpuBackend).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toBe(
      "cpu backend: 65,536 rollouts of 9 training rows with 1,024 hidden units need about 6.9 GiB for their activations and gradients, over the CPU backend's 4.0 GiB; " +
        'use fewer prompts, a smaller group, fewer turns or fewer hidden units (the GPU backend keeps them in GPU memory)',
    );
  });

  it('the estimate: what the defaults and the largest batch at 64 hidden units need is far below the budget; more forwards cost more', async () => {
    const bytes: Record<string, number> = {};
    const at = async (name: string, o: Record<string, string>) => {
      await createTrainer(big(o), (shape, p) => {
        bytes[name] = cpuBackendBytes(shape);
        return createCpuBackend(shape, p);
      });
    };
    await at('default', {});
    await at('two minibatches', { minibatches: '2' });
    await at('stale', { minibatches: '2', staleness: '1' });
    // Per row: 2 forwards x (64 + 19 + 1) words, dz and da (83), 16 of row tensors.
    expect(bytes.default).toBe(4 * (2 * 1152 * 84 + 1152 * 83 + 16 * 1152));
    expect(bytes['two minibatches']).toBe(4 * (3 * 1152 * 84 + 576 * 83 + 16 * 1152));
    expect(bytes.stale).toBe(4 * (4 * 1152 * 84 + 576 * 83 + 16 * 1152));
    expect(bytes.default).toBeLessThan(CPU_BACKEND_MAX_BYTES / 1000);
  });

  it('a smaller budget refuses a smaller run (the limit is an option)', async () => {
    await expect(createTrainer(cfg(), (shape, p) => createCpuBackend(shape, p, { maxBytes: 1000 }))).rejects.toThrow(/cpu backend: 16 rollouts of 9 training rows with 16 hidden units/);
  });
});

describe('applyConfig: a settings change carried into a run', () => {
  it('keeps the model and the iteration count when the shape stays, and refuses a shape change by name', async () => {
    const api = createTrainerApi(undefined);
    await api.configure(cfg(), 'cpu');
    for (let i = 0; i < 4; i++) await api.step();
    expect(await api.applyConfig(cfg({ lr: '0.02', clipHigh: '0.28' }))).toMatchObject({ applied: true, snapshot: { iter: 4 } });
    const next = await api.step();
    expect(next.iter).toBe(5);
    expect(next.lr).toBe(0.02);
    const refused = await api.applyConfig(cfg({ lr: '0.02', 'env.values': '12' }));
    expect(refused.applied).toBe(false);
    expect(!refused.applied && refused.reason).toMatch(/vocabulary 19 to 23/);
    expect((await api.step()).iter).toBe(6);
    await api.dispose();
  });

  it('the carried run equals one that had the new settings from that iteration on', async () => {
    // Reference: 3 iterations, then a snapshot resumed under the new config.
    const a = createTrainerApi(undefined);
    await a.configure(cfg(), 'cpu');
    for (let i = 0; i < 3; i++) await a.step();
    await a.applyConfig(cfg({ lr: '0.02' }));
    const carried = noMs(await a.step());
    const t = await createTrainer(cfg(), createCpuBackend);
    for (let i = 0; i < 3; i++) await t.step();
    const snap = await t.snapshotNow();
    const b = await createTrainer(cfg({ lr: '0.02' }), createCpuBackend, { resume: snap });
    expect(noMs(await b.step())).toEqual(carried);
  });
});
