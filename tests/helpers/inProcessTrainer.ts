/**
 * A stand-in for app/trainerClient.ts in Node (no Worker there): each "worker" is the real trainer
 * API (CPU backend) in this process, behind a proxy. A dead worker never answers, as a terminated
 * one does: every call made after it died stays pending, and its callbacks go quiet. Tests mock
 * the client module with this: `vi.mock('../../app/trainerClient', () => import('../helpers/inProcessTrainer'))`.
 */
import { createTrainerApi } from '../../workers/entry/trainerApi';

interface Box {
  raw: Record<string, (...a: unknown[]) => unknown>;
  dead: boolean;
  onError: (message: string) => void;
}

/** The worker spawned last (the page's own, in a test that spawns only that one). */
let current: Box | null = null;

export function spawnTrainer(onError: (message: string) => void) {
  const raw = createTrainerApi(undefined) as unknown as Box['raw'];
  const box: Box = { raw, dead: false, onError };
  current = box;
  const trainer = new Proxy(raw, {
    get: (o, k: string) => (...a: unknown[]) => (box.dead ? new Promise(() => {}) : o[k]!(...a)),
  });
  const end = () => {
    box.dead = true;
    if (current === box) current = null;
  };
  return { trainer, kill: end, terminate: end };
}

function quiet<T extends (...a: never[]) => unknown>(fn: T): T {
  const box = current;
  return ((...a: never[]) => (box?.dead ? undefined : fn(...a))) as T;
}

export const eventsCallback = quiet;
export const metricsCallback = quiet;
export const progressCallback = quiet;

/** The worker dies with no word (an out-of-memory kill): its run loop stops too, as a killed worker's does. */
export function killSilently(): void {
  if (!current) return;
  current.dead = true;
  void current.raw.pause?.();
}

/** The worker raises an uncaught error (its `error` event). */
export function crash(message: string): void {
  current?.onError(message);
}
