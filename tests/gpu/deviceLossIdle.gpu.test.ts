/**
 * A GPU device lost while the run is paused (no step to notice it): the next call that reads the
 * device (an export of the batch, the group view's batch) moves the run to a new device and answers
 * from there, with the same batch the lost device held.
 */
import { describe, expect, it } from 'vitest';
import type { TrainerEvent } from '../../workers/entry/api';
import { defaultConfig, withFieldText, type RunConfig } from '../../workers/core/config';
import { DEFAULT_SNAPSHOT_EVERY } from '../../workers/core/trainer';
import { createTrainerApi } from '../../workers/entry/trainerApi';

function cfg(): RunConfig {
  let c = defaultConfig();
  for (const [k, v] of Object.entries({ batch: '2', group: '4', 'model.hidden': '16', seed: '8' })) c = withFieldText(c, k, v);
  return c;
}

describe('device lost while paused', () => {
  // After 10 iterations the last snapshot (every DEFAULT_SNAPSHOT_EVERY = 10) is of the iteration
  // reached: the move must replay from the one before it, or the batch is gone (an e2e run paused there).
  it.each([3, DEFAULT_SNAPSHOT_EVERY])('after %i iterations, Export → Batch after lose-device writes the same batch through a new device, and says the device moved', async (steps) => {
    const reference = createTrainerApi(navigator.gpu);
    await reference.configure(cfg(), 'gpu');
    for (let i = 0; i < steps; i++) await reference.step();
    const expected = JSON.parse(await (await reference.batchJson())!.text());
    await reference.dispose();

    const api = createTrainerApi(navigator.gpu);
    expect((await api.configure(cfg(), 'gpu')).kind).toBe('gpu');
    const events: TrainerEvent[] = [];
    await api.subscribe((e) => events.push(e));
    for (let i = 0; i < steps; i++) await api.step();
    await api.debug('lose-device');
    const blob = await api.batchJson();
    expect(blob).not.toBeNull();
    expect(JSON.parse(await blob!.text())).toEqual(expected);
    const lost = events.filter((e) => e.type === 'device-lost');
    expect(lost).toHaveLength(1);
    expect(lost[0]).toMatchObject({ message: expect.stringMatching(/lost while writing the batch/) });
    // The group view's batch and the next step run on the new device too.
    expect(await api.packBatch()).not.toBeNull();
    expect((await api.step()).iter).toBe(steps + 1);
    await api.dispose();
  });
});
