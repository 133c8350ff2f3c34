import { expect, it } from 'vitest';
import { WorkerRestarts } from './worker-restarts.js';

const policy = { baseDelayMs: 1_000, maxDelayMs: 5_000, youngMs: 60_000, maxDeaths: 5, windowMs: 300_000 };

it('doubles the delay for a slot that keeps dying young, up to the cap', () => {
  const r = new WorkerRestarts({ ...policy, maxDeaths: 100 });
  const delays = [0, 1, 2, 3, 4].map((i) => r.died(0, i * 10_000, i * 10_000 + 5_000));
  expect(delays).toEqual([1_000, 2_000, 4_000, 5_000, 5_000].map((delayMs) => ({ replace: true, delayMs })));
});

it('resets a slot that lived past youngMs, and keeps slots apart', () => {
  const r = new WorkerRestarts({ ...policy, maxDeaths: 100, windowMs: 1 });
  expect(r.died(0, 0, 1_000)).toEqual({ replace: true, delayMs: 1_000 });
  expect(r.died(0, 2_000, 3_000)).toEqual({ replace: true, delayMs: 2_000 });
  expect(r.died(1, 0, 3_000)).toEqual({ replace: true, delayMs: 1_000 });
  expect(r.died(0, 5_000, 5_000 + 60_000)).toEqual({ replace: true, delayMs: 1_000 });
});

it('gives up at maxDeaths within the window, and forgets deaths older than it', () => {
  const r = new WorkerRestarts({ ...policy, maxDeaths: 3, windowMs: 100_000 });
  expect(r.died(0, 0, 0).replace).toBe(true);
  expect(r.died(1, 0, 50_000).replace).toBe(true);
  expect(r.died(0, 90_000, 120_000).replace).toBe(true); // the first death is out of the window
  expect(r.died(1, 130_000, 140_000)).toEqual({ replace: false, deaths: 3 });
});
