/**
 * The page's store against a trainer that dies, hangs or is moved mid-run. The "worker" is the real
 * trainer API (CPU backend) in this process (tests/helpers/inProcessTrainer.ts); killing it makes
 * every call to it wait forever, as calls to a terminated worker do. The heartbeat's interval and
 * the clock are faked, so 15 s of silence pass in an instant; everything else runs for real.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { MetricRow } from '../../workers/core/metrics';

vi.mock('../../app/trainerClient', () => import('../helpers/inProcessTrainer'));

interface Faults {
  killSilently(): void;
  crash(message: string): void;
}
let faults: Faults;

type Store = typeof import('../../app/store').useAppStore;
let store: Store;
const noMs = (r: MetricRow) => ({ ...r, ms: 0, adv_hist: [], ratio_hist: [], adv_hist_edges: [], ratio_hist_edges: [] });

/** A fresh page: new store modules, a new worker. */
async function openPage(size = { batch: 2, group: 4, hidden: 8 }, linkStep: number | null = null): Promise<Store> {
  vi.resetModules();
  const { useAppStore } = await import('../../app/store');
  faults = (await import('../../app/trainerClient')) as unknown as Faults;
  const s = useAppStore.getState();
  // As a link sets it (applyLink): the state only; init() builds the run.
  useAppStore.setState({ config: { ...s.config, batch: size.batch, group: size.group, model: { ...s.config.model, hidden: size.hidden }, seed: 5 }, linkStep });
  s.init();
  await until(() => expect(useAppStore.getState().configured || useAppStore.getState().linkGate !== null).toBe(true), 30_000);
  return useAppStore;
}

const killSilently = () => faults.killSilently();

/**
 * Waits for `check` to pass, polling every 20 ms of real time and letting the faked clock move 5 ms
 * per poll (the run paces its metrics by it). Not vi.waitFor: it moves the faked clock as fast as
 * the real one, so on a slow machine the heartbeat's 15 s of silence could pass while the test only
 * waited for a live worker; here 20 s of waiting is 5 s of faked time.
 */
async function until(check: () => void, timeout = 1000): Promise<void> {
  const end = performance.now() + timeout;
  for (;;) {
    try {
      check();
      return;
    } catch (e) {
      if (performance.now() > end) throw e;
      await new Promise((r) => setTimeout(r, 20));
      if (vi.isFakeTimers()) vi.advanceTimersByTime(5);
    }
  }
}

/** Lets the heartbeat run for `ms` of faked time. */
async function silence(ms: number): Promise<void> {
  for (let t = 0; t < ms; t += 1000) {
    vi.advanceTimersByTime(1000);
    await new Promise((r) => setImmediate(r));
  }
}

const lastIter = () => store.getState().series.at(-1)?.iter ?? 0;

beforeEach(async () => {
  vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'Date'] });
  store = await openPage();
}, 60_000);
afterEach(() => {
  vi.useRealTimers();
});

describe('a dead or hung worker is noticed in every phase', () => {
  it('killed after one Step, the next Step ends in the failure notice with the restart offer', async () => {
    await store.getState().step();
    killSilently();
    const step = store.getState().step();
    await until(() => expect(store.getState().phase).toBe('stepping'), 10_000);
    await silence(24_000);
    await step;
    expect(store.getState().failure).toMatchObject({ lastIter: 1, message: expect.stringMatching(/stopped responding/) });
    expect(store.getState().phase).toBe('idle');
  });

  it('killed while idle, an export of the batch fails with a message instead of waiting forever', async () => {
    await store.getState().step();
    killSilently();
    const blob = store.getState().batchJson();
    const settled = blob.then(
      () => 'resolved',
      (e: Error) => e.message,
    );
    await silence(24_000);
    expect(await settled).toMatch(/the trainer stopped/);
    expect(store.getState().failure).not.toBeNull();
    // Start and Step no longer queue behind the export.
    expect(store.getState().phase).toBe('idle');
  });

  it('after the notice, Start (not Restart) trains on a new worker: the notice goes, and the new worker is watched too', async () => {
    await store.getState().step();
    killSilently();
    await silence(24_000);
    expect(store.getState().failure).not.toBeNull();
    void store.getState().start();
    // The run starts again from the beginning on the new worker: two of its iterations shown.
    await until(() => expect(store.getState().phase === 'running' && lastIter() >= 2).toBe(true), 20_000);
    expect(store.getState().failure).toBeNull();
    await store.getState().pause();
    killSilently();
    await silence(24_000);
    expect(store.getState().failure).not.toBeNull();
  });

  it('a worker that dies while an imported run is shown leaves the imported batch on screen', async () => {
    await store.getState().step();
    const { createRunFile, serializeRunFile } = await import('../../workers/formats/runFile');
    const { currentBatch } = await import('../../app/store');
    const trainer = await import('../../workers/core/trainer');
    const { createCpuBackend } = await import('../../workers/core/cpuBackend');
    const config = store.getState().config;
    const t = await trainer.createTrainer(config, createCpuBackend);
    const metrics = [await t.step()];
    const { dumpBatch } = await import('../../workers/formats/batchDump');
    const batch = await dumpBatch(t);
    t.destroy();
    expect(await store.getState().importRun(serializeRunFile(createRunFile({ config, metrics, batch })), 'run.json')).toBe(true);
    await until(() => expect(currentBatch(store.getState())?.trajs.length).toBe(batch.trajs.length), 10_000);
    killSilently();
    await silence(24_000);
    expect(store.getState().failure).not.toBeNull();
    expect(currentBatch(store.getState())?.trajs.length).toBe(batch.trajs.length);
  });

  it('idle and untouched, a dead worker is noticed by the heartbeat', async () => {
    killSilently();
    await silence(24_000);
    expect(store.getState().failure).not.toBeNull();
  });

  it('a Pause sent to a hung run ends in the failure notice', async () => {
    void store.getState().start();
    await until(() => expect(lastIter()).toBeGreaterThan(0), 20_000);
    killSilently();
    const pause = store.getState().pause();
    await silence(24_000);
    await pause;
    expect(store.getState().failure).not.toBeNull();
    expect(store.getState().phase).toBe('idle');
  });
});

describe('a restart resumes exactly the run that was shown', () => {
  /** Steps until iteration `n`. */
  const stepTo = async (n: number) => {
    while (lastIter() < n) await store.getState().step();
  };
  /** Changes lr and waits for the debounced change to be carried into the run (its chart marker). */
  const changeLr = async () => {
    store.getState().setField('lr', 0.02);
    await until(() => expect(store.getState().markers.some((m) => m.kind === 'config')).toBe(true), 10_000);
  };

  it('after a settings change mid-run, a crash and a restart give the same iterations as no crash', async () => {
    await stepTo(13);
    await changeLr();
    await stepTo(22);
    const expected = store.getState().series.filter((r) => r.iter > 18).map(noMs);

    store = await openPage();
    await stepTo(13);
    await changeLr();
    await stepTo(18);
    faults.crash('debug: crashed on purpose');
    expect(store.getState().failure).toMatchObject({ lastIter: 18 });
    await store.getState().restartWorker();
    expect(store.getState().failure).toBeNull();
    await stepTo(22);
    const got = store.getState().series.filter((r) => r.iter > 18).map(noMs);
    expect(got.map((r) => r.iter)).toEqual([19, 20, 21, 22]);
    expect(got).toEqual(expected);
  });
});

describe('a costly link asks before anything is built', () => {
  it('1,024 x 64 rollouts at 512 hidden units with step=100000: held with its cost; "Not now" builds nothing', async () => {
    vi.useRealTimers();
    store = await openPage({ batch: 1024, group: 64, hidden: 512 }, 100_000);
    const { LINK_ASK_BYTES } = await import('../../app/store/runSlice');
    const gate = store.getState().linkGate!;
    expect(gate.step).toBe(100_000);
    expect(gate.cost.bytes).toBeGreaterThan(LINK_ASK_BYTES);
    expect(gate.cost.cpuSecondsPerIter).toBeGreaterThan(3);
    expect(store.getState().configured).toBe(false);
    expect(store.getState().phase).toBe('idle');
    // Start waits for the answer too.
    await store.getState().start();
    expect(store.getState().phase).toBe('idle');
    store.getState().answerLinkGate(false);
    expect(store.getState().linkGate).toBeNull();
    expect(store.getState().linkStep).toBeNull();
    expect(store.getState().configured).toBe(false);
  });

  it('the default-sized run of a link starts unasked', async () => {
    expect(store.getState().linkGate).toBeNull();
    expect(store.getState().configured).toBe(true);
  });
});

describe('what the exports hold, and bounded markers', () => {
  const rowAt = (template: MetricRow, iter: number): MetricRow => ({ ...template, iter });

  it('a 5,031-iteration run exports 5,031 rows; the charts hold 2,000', async () => {
    await store.getState().step();
    const template = store.getState().series[0]!;
    const { wholeRun } = await import('../../app/store/metricsSlice');
    const epoch = store.getState().metricsEpoch;
    for (let i = 2; i <= 5031; i += 500) {
      store.getState().appendMetrics(Array.from({ length: Math.min(500, 5032 - i) }, (_, k) => rowAt(template, i + k)), epoch);
      store.getState().flushMetrics();
    }
    const whole = wholeRun();
    expect(whole.rows.map((r) => r.iter)).toEqual(Array.from({ length: 5031 }, (_, i) => i + 1));
    expect(whole.dropped).toBe(0);
    expect(whole.withHistograms).toBe(2000);
    expect(store.getState().series).toHaveLength(2000);
  });

  it('markers stay bounded and inside the charted rows, however many alarms fire', async () => {
    await store.getState().step();
    const template = store.getState().series[0]!;
    const { MAX_MARKERS } = await import('../../app/store/metricsSlice');
    const epoch = store.getState().metricsEpoch;
    for (let i = 2; i <= 15_000; i += 100) {
      for (let k = 0; k < 100; k++) store.getState().addMarker({ iter: i + k, kind: 'alarm-collapse' as never, label: 'alarm' });
      store.getState().appendMetrics(Array.from({ length: 100 }, (_, k) => rowAt(template, i + k)), epoch);
      store.getState().flushMetrics();
    }
    const { markers, series } = store.getState();
    expect(markers.length).toBeLessThanOrEqual(MAX_MARKERS);
    expect(markers.every((m) => m.iter >= series[0]!.iter)).toBe(true);
  });
});
