import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { isOutageError, ReconnectSignal, type WakeReason } from './reconnect-signal.js';

/** A wait whose outcome can be read without awaiting it. */
function track(p: Promise<WakeReason>): { reason: WakeReason | undefined } {
  const t: { reason: WakeReason | undefined } = { reason: undefined };
  void p.then((r) => (t.reason = r));
  return t;
}

const never = new AbortController().signal;

describe('ReconnectSignal', () => {
  beforeEach(() => void vi.useFakeTimers());
  afterEach(() => void vi.useRealTimers());

  it('in normal operation (a watch is open) an outage waiter waits its own delay: no probes', async () => {
    const signal = new ReconnectSignal({ probeIntervalMs: 1000 });
    signal.watchOpened();
    const w = track(signal.wait(5000, true, never));
    await vi.advanceTimersByTimeAsync(4999);
    expect(w.reason).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    expect(w.reason).toBe('elapsed');
  });

  it('during an outage lets one waiter through per probe interval, jittered, the longest-waiting first', async () => {
    const randoms = [0.999, 0, 0.5];
    const signal = new ReconnectSignal({ probeIntervalMs: 1000, random: () => randoms.shift() ?? 0 });
    const a = track(signal.wait(30_000, true, never));
    const b = track(signal.wait(30_000, true, never));
    // First probe: 1000 × (1 − ½ × 0.999) ≈ 500 ms.
    await vi.advanceTimersByTimeAsync(499);
    expect([a.reason, b.reason]).toEqual([undefined, undefined]);
    await vi.advanceTimersByTimeAsync(1);
    expect([a.reason, b.reason]).toEqual(['probe', undefined]);
    // No second probe until a waiter (here the probe, having failed again) waits: they never pile up.
    await vi.advanceTimersByTimeAsync(5000);
    expect(b.reason).toBeUndefined();
    const a2 = track(signal.wait(30_000, true, never));
    await vi.advanceTimersByTimeAsync(1000); // 1000 × (1 − 0) = 1000 ms
    expect([a2.reason, b.reason]).toEqual([undefined, 'probe']);
  });

  it('the first success wakes every outage waiter within the spread; a waiter for another error keeps its delay', async () => {
    const randoms = [0.9, 0.1, 0.5];
    const signal = new ReconnectSignal({ probeIntervalMs: 10_000, wakeSpreadMs: 200, random: () => randoms.shift() ?? 0 });
    const outage1 = track(signal.wait(30_000, true, never)); // probe timer takes 0.9
    const outage2 = track(signal.wait(30_000, true, never));
    const forbidden = track(signal.wait(30_000, false, never)); // e.g. a 403: its own backoff
    signal.listed();
    expect(signal.waiting).toEqual({ all: 1, outage: 0 });
    await vi.advanceTimersByTimeAsync(20); // 200 × 0.1
    expect([outage1.reason, outage2.reason]).toEqual(['back', undefined]);
    await vi.advanceTimersByTimeAsync(80); // 200 × 0.5
    expect([outage1.reason, outage2.reason, forbidden.reason]).toEqual(['back', 'back', undefined]);
    await vi.advanceTimersByTimeAsync(30_000);
    expect(forbidden.reason).toBe('elapsed');
  });

  it('a watch opening counts as success; probes resume once every watch has closed', async () => {
    const signal = new ReconnectSignal({ probeIntervalMs: 1000, random: () => 0 });
    signal.watchOpened();
    const w = track(signal.wait(30_000, true, never));
    await vi.advanceTimersByTimeAsync(2000);
    expect(w.reason).toBeUndefined();
    signal.watchClosed();
    await vi.advanceTimersByTimeAsync(1000);
    expect(w.reason).toBe('probe');
  });

  it('replicas that lose the server together probe at spread-out times', async () => {
    const fired: number[] = [];
    for (let i = 0; i < 40; i++) {
      const start = Date.now();
      void new ReconnectSignal({ probeIntervalMs: 1000 }).wait(60_000, true, never).then(() => fired.push(Date.now() - start));
    }
    await vi.advanceTimersByTimeAsync(1000);
    expect(fired).toHaveLength(40);
    expect(new Set(fired).size).toBeGreaterThan(20);
    for (const t of fired) expect(t).toBeGreaterThanOrEqual(500);
  });

  it('stop ends a wait at once and leaves no probe scheduled', async () => {
    const signal = new ReconnectSignal();
    const stop = new AbortController();
    const w = track(signal.wait(30_000, true, stop.signal));
    stop.abort();
    await vi.advanceTimersByTimeAsync(0);
    expect(w.reason).toBe('stopped');
    expect(signal.waiting).toEqual({ all: 0, outage: 0 });
    expect(await signal.wait(1, true, stop.signal)).toBe('stopped');
  });
});

describe('isOutageError', () => {
  const network = (code: string) => Object.assign(new TypeError('fetch failed'), { cause: Object.assign(new Error(code), { code }) });
  it.each<[string, unknown, boolean]>([
    ['connection refused (undici fetch)', network('ECONNREFUSED'), true],
    ['connection reset', network('ECONNRESET'), true],
    ['socket closed by the other side', network('UND_ERR_SOCKET'), true],
    ['503 from a list (KubeApiError.code)', { code: 503, message: 'GET …: HTTP 503' }, true],
    ['500 from a watch (statusCode)', { statusCode: 500, message: 'Internal Server Error' }, true],
    ['501 Not Implemented', { statusCode: 501 }, false],
    ['403 Forbidden', { code: 403 }, false],
    ['404 (a CRD not installed)', { code: 404 }, false],
    ['410 Gone', { code: 410 }, false],
    ['429 Too Many Requests (back off, do not probe)', { statusCode: 429 }, false],
    ['an auth plugin failing', new Error('exec: executable aws not found'), false],
  ])('%s → %s', (_, err, outage) => {
    expect(isOutageError(err)).toBe(outage);
  });
});
