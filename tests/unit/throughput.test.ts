import { describe, expect, it } from 'vitest';
import { addArrival, iterRate, rateText, RATE_WINDOW_S, type Arrival } from '../../app/panels/throughput';

describe('wall-clock iterations per second', () => {
  it('is the iterations over the seconds between arrivals, not the compute time', () => {
    let log: Arrival[] = [];
    // 60 iterations arrive in batches of 6 every 400 ms: 15 it/s.
    for (let k = 0; k <= 10; k++) log = addArrival(log, { iter: 6 * k, at: 1000 + 400 * k });
    expect(iterRate(log)).toBeCloseTo(15, 6);
    expect(rateText(iterRate(log))).toBe('15 it/s');
  });

  it('forgets arrivals older than the window, so a slow-down shows', () => {
    let log: Arrival[] = [];
    for (let k = 0; k <= 20; k++) log = addArrival(log, { iter: 10 * k, at: 500 * k });
    for (let k = 1; k <= 20; k++) log = addArrival(log, { iter: 200 + k, at: 10_000 + 500 * k });
    expect(log[log.length - 1]!.at - log[1]!.at).toBeLessThan(RATE_WINDOW_S * 1000);
    expect(iterRate(log)).toBeCloseTo(2, 1);
  });

  it('has no rate before two arrivals, and starts again after a reset', () => {
    expect(iterRate(addArrival([], { iter: 3, at: 0 }))).toBeNull();
    const log = addArrival([{ iter: 50, at: 0 }, { iter: 60, at: 1000 }], { iter: 1, at: 2000 });
    expect(log).toEqual([{ iter: 1, at: 2000 }]);
    expect(rateText(0.42)).toBe('0.4 it/s');
  });
});
