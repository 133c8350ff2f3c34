import { describe, expect, it, vi } from 'vitest';
import { type IssuedToken, TokenCache } from './token-cache.js';

/** A token source on a fake clock: each fetch issues "t1", "t2", … valid for `lifetimeMs`, resolving when told. */
function source(lifetimeMs: number) {
  let clock = 0;
  let issued = 0;
  const pending: Array<{ resolve: (t: IssuedToken) => void; reject: (e: Error) => void }> = [];
  return {
    now: () => clock,
    advance: (ms: number) => {
      clock += ms;
    },
    fetch: () =>
      new Promise<IssuedToken>((resolve, reject) => {
        pending.push({ resolve, reject });
      }),
    get fetches() {
      return pending.length;
    },
    issue: () => {
      const p = pending.shift();
      if (!p) throw new Error('no fetch pending');
      issued++;
      p.resolve({ token: `t${issued}`, expiresAt: clock + lifetimeMs });
    },
    fail: (message: string) => pending.shift()?.reject(new Error(message)),
  };
}

const flush = () => new Promise((r) => setImmediate(r));

describe('TokenCache', () => {
  it('shares one fetch between concurrent callers', async () => {
    const s = source(3_600_000);
    const cache = new TokenCache(s.fetch, { now: s.now });
    const all = Promise.all([cache.get(), cache.get(), cache.get()]);
    expect(s.fetches).toBe(1);
    s.issue();
    expect((await all).map((t) => t.token)).toEqual(['t1', 't1', 't1']);
    expect((await cache.get()).token).toBe('t1');
    expect(s.fetches).toBe(0);
  });

  it('renews ahead of expiry in the background, serving the current token meanwhile', async () => {
    const s = source(3_600_000);
    const cache = new TokenCache(s.fetch, { now: s.now, refreshAheadMs: 300_000 });
    const first = cache.get();
    s.issue();
    await first;
    s.advance(3_600_000 - 300_000 - 1);
    expect((await cache.get()).token).toBe('t1');
    expect(s.fetches).toBe(0);
    s.advance(2); // inside the renewal window
    expect((await cache.get()).token).toBe('t1');
    expect((await cache.get()).token).toBe('t1');
    expect(s.fetches).toBe(1); // one renewal for both
    s.issue();
    await flush();
    expect((await cache.get()).token).toBe('t2');
  });

  it('never hands out a token inside its safety margin: it waits for the new one', async () => {
    const s = source(60_000);
    const cache = new TokenCache(s.fetch, { now: s.now, refreshAheadMs: 300_000, minValidityMs: 30_000 });
    const first = cache.get();
    s.issue();
    await first;
    // Lifetime 60 s: renewal from 30 s on (half the lifetime), unusable from 54 s (a tenth of it left).
    s.advance(54_000);
    let got: IssuedToken | undefined;
    const waiting = cache.get().then((t) => {
      got = t;
    });
    await flush();
    expect(got).toBeUndefined();
    expect(s.fetches).toBe(1);
    s.issue();
    await waiting;
    expect(got?.token).toBe('t2');
  });

  it('holds a failure briefly instead of every request fetching again, then retries', async () => {
    const s = source(3_600_000);
    const cache = new TokenCache(s.fetch, { now: s.now, failureHoldMs: 2_000 });
    const first = cache.get();
    s.fail('token endpoint said no');
    await expect(first).rejects.toThrow('token endpoint said no');
    await expect(cache.get()).rejects.toThrow('token endpoint said no');
    expect(s.fetches).toBe(0);
    s.advance(2_000);
    const again = cache.get();
    expect(s.fetches).toBe(1);
    s.issue();
    expect((await again).token).toBe('t1');
  });

  it('keeps serving a still-valid token when a background renewal fails, without retrying on every request', async () => {
    const s = source(3_600_000);
    const cache = new TokenCache(s.fetch, { now: s.now, refreshAheadMs: 300_000, failureHoldMs: 2_000 });
    const first = cache.get();
    s.issue();
    await first;
    s.advance(3_400_000);
    expect((await cache.get()).token).toBe('t1');
    s.fail('temporarily down');
    await flush();
    expect((await cache.get()).token).toBe('t1');
    expect(s.fetches).toBe(0); // the failure is held
    s.advance(2_000);
    expect((await cache.get()).token).toBe('t1');
    expect(s.fetches).toBe(1);
  });

  it('gives up on a fetch that does not settle in time: its source is told, the failure held, then a new fetch', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const s = source(3_600_000);
      const signals: AbortSignal[] = [];
      const cache = new TokenCache(
        (signal) => {
          signals.push(signal);
          return s.fetch();
        },
        { now: s.now, fetchTimeoutMs: 30_000, failureHoldMs: 2_000 },
      );
      const first = cache.get();
      const silent = expect(first).rejects.toThrow('the token request did not finish within 30 s');
      vi.advanceTimersByTime(29_999);
      expect(signals[0]?.aborted).toBe(false);
      vi.advanceTimersByTime(1);
      await silent;
      expect(signals[0]?.aborted).toBe(true);
      await expect(cache.get()).rejects.toThrow('did not finish');
      expect(signals).toHaveLength(1); // held, not fetched again by every request
      s.advance(2_000);
      const again = cache.get();
      expect(signals).toHaveLength(2);
      s.issue(); // the silent fetch answering late is not what the new one gets
      s.issue();
      expect((await again).token).toBe('t2');
    } finally {
      vi.useRealTimers();
    }
  });
});
