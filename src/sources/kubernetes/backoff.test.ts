import { describe, expect, it } from 'vitest';
import { Backoff, sleep } from './backoff.js';

describe('Backoff', () => {
  it('doubles up to the maximum and randomises within the jitter band', () => {
    const top = new Backoff({ initialMs: 100, maxMs: 1000, jitter: 0.5, random: () => 0 });
    expect([top.next(), top.next(), top.next(), top.next(), top.next(), top.next()]).toEqual([100, 200, 400, 800, 1000, 1000]);
    const bottom = new Backoff({ initialMs: 100, maxMs: 1000, jitter: 0.5, random: () => 0.999999 });
    expect([bottom.next(), bottom.next()]).toEqual([50, 100]);
  });

  it('spreads replicas that fail together', () => {
    const delays = Array.from({ length: 50 }, () => new Backoff({ initialMs: 1000 }).next());
    expect(new Set(delays).size).toBeGreaterThan(10);
    for (const d of delays) expect(d).toBeGreaterThanOrEqual(500);
  });

  it('starts over after reset', () => {
    const b = new Backoff({ initialMs: 10, random: () => 0 });
    b.next();
    b.next();
    b.reset();
    expect(b.next()).toBe(10);
  });

  it('sleep ends early when aborted', async () => {
    const ac = new AbortController();
    const started = Date.now();
    const p = sleep(10_000, ac.signal);
    ac.abort();
    expect(await p).toBe(false);
    expect(Date.now() - started).toBeLessThan(1000);
  });
});
