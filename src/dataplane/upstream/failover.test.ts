import { describe, expect, it } from 'vitest';
import { DEFAULT_TIMEOUTS, type CompiledBackend, type RetryPolicy } from '../../model/routing-table.js';
import { BackendHealth } from '../policy/health.js';
import type { AttemptOutcome } from '../policy/retry-policy.js';
import { runFailover, type AttemptContext, type AttemptResponse, type FailoverOptions } from './failover.js';

const backend = (name: string): CompiledBackend => ({
  id: `ns/r/${name}`,
  name,
  baseURL: 'http://x/v1',
  origin: 'http://x',
  basePath: '/v1',
  auth: { kind: 'none' },
  headers: [],
  query: [],
  pathStyle: 'openai',
  api: 'openai',
  account: 'a',
  model: 'm',
  priority: 0,
  weight: 1,
  limits: [],
});
const [a, b, c] = [backend('a'), backend('b'), backend('c')];
const policy: RetryPolicy = { attempts: 3, budgetMs: 10_000, onConnectFailure: true, onTimeout: true, statuses: new Set([429, 500, 502, 503, 504]) };

type Behaviour = { status: number; headers?: Record<string, string> } | { error: string } | 'hang';
const refused = { error: 'ECONNREFUSED' };

function harness(behaviours: Record<string, Behaviour>, overrides: Partial<FailoverOptions<AttemptResponse>> = {}) {
  const calls: string[] = [];
  const outcomes: [string, AttemptOutcome][] = [];
  const bodies: { dropped: string | undefined; destroy(): void; dump(limit: number): void }[] = [];
  const client = new AbortController();
  const send = (be: CompiledBackend, ctx: AttemptContext): Promise<AttemptResponse> => {
    calls.push(be.name);
    const beh = behaviours[be.name]!;
    if (beh === 'hang')
      return new Promise((_, reject) => ctx.signal.listen({ attemptAborted: () => reject(Object.assign(new Error('aborted'), { name: 'AbortError' })) }));
    if ('error' in beh) return Promise.reject(Object.assign(new Error(beh.error), { code: beh.error }));
    const body = {
      dropped: undefined as string | undefined,
      destroy() {
        this.dropped = 'destroyed';
      },
      dump(limit: number) {
        this.dropped = `dumped up to ${limit}`;
      },
    };
    bodies.push(body);
    return Promise.resolve({ statusCode: beh.status, headers: beh.headers ?? {}, body });
  };
  const arrived = Date.now();
  const run = (extra: Partial<FailoverOptions<AttemptResponse>> = {}) =>
    runFailover<AttemptResponse>({
      backends: [a, b, c],
      policy,
      timeouts: DEFAULT_TIMEOUTS,
      budgetMs: policy.budgetMs,
      now: () => Date.now() - arrived,
      client: {
        get aborted() {
          return client.signal.aborted;
        },
        onEnd: (fn: () => void) => client.signal.addEventListener('abort', fn),
      },
      send,
      onAttempt: (be, o) => outcomes.push([be.name, o]),
      ...overrides,
      ...extra,
    });
  return { calls, outcomes, bodies, client, run };
}

describe('runFailover', () => {
  it('fails over on a connect failure and reports every attempt', async () => {
    const h = harness({ a: refused, b: { status: 200 }, c: { status: 200 } });
    const r = await h.run();
    expect(r).toMatchObject({ ok: true, attempts: 2, backend: { name: 'b' } });
    expect(h.calls).toEqual(['a', 'b']);
    expect(h.outcomes.map(([n, o]) => `${n}:${o.kind}`)).toEqual(['a:connect-failure', 'b:response']);
  });

  it('tells the client side of each attempt that is not the answer (failed over, or last with none), and of nothing else', async () => {
    const failed = (h: ReturnType<typeof harness>, extra: Partial<FailoverOptions<AttemptResponse>> = {}) => {
      const seen: string[] = [];
      const client = { aborted: false, onEnd: () => {}, attemptFailed: (why: string) => seen.push(why) };
      return h.run({ ...extra, client }).then(() => seen);
    };
    expect(await failed(harness({ a: refused, b: { status: 503 }, c: { status: 200 } }))).toEqual(['a:ECONNREFUSED', 'b:503']);
    expect(await failed(harness({ a: { status: 200 }, b: refused, c: refused }))).toEqual([]); // answered at once: never told
    // b's 503 is the answer relayed: not a failed attempt.
    expect(await failed(harness({ a: refused, b: { status: 503 }, c: { status: 200 } }), { policy: { ...policy, attempts: 2 } })).toEqual(['a:ECONNREFUSED']);
    const hanging = { timeouts: { ...DEFAULT_TIMEOUTS, firstByteMs: 20 } };
    expect(await failed(harness({ a: refused, b: refused, c: 'hang' }), hanging)).toEqual(['a:ECONNREFUSED', 'b:ECONNREFUSED', 'c:timeout']);
  });

  it('passes a 4xx through without failover', async () => {
    const h = harness({ a: { status: 400 }, b: { status: 200 }, c: { status: 200 } });
    const r = await h.run();
    expect(r).toMatchObject({ ok: true, attempts: 1, response: { statusCode: 400 } });
    expect(h.calls).toEqual(['a']);
  });

  it('drops failover responses while attempts remain, then passes the last one on', async () => {
    const h = harness({ a: { status: 503 }, b: { status: 429, headers: { 'retry-after': '5' } }, c: { status: 200 } });
    const r = await h.run({ policy: { ...policy, attempts: 2 } });
    expect(r).toMatchObject({ ok: true, attempts: 2, backend: { name: 'b' }, response: { statusCode: 429 } });
    expect(h.calls).toEqual(['a', 'b']);
    expect(h.bodies[0]!.dropped).toBe(`dumped up to ${64 * 1024}`);
    expect(h.bodies[1]!.dropped).toBeUndefined();
  });

  it('tries each backend once and reports why it stopped', async () => {
    const h = harness({ a: refused, b: refused, c: refused });
    const r = await h.run({ policy: { ...policy, attempts: 10 } });
    expect(r).toMatchObject({ ok: false, attempts: 3, reason: 'backends', last: { kind: 'connect-failure', code: 'ECONNREFUSED' } });
    expect(h.calls).toEqual(['a', 'b', 'c']);
  });

  it('stops at the attempts limit', async () => {
    const h = harness({ a: refused, b: refused, c: refused });
    const r = await h.run({ policy: { ...policy, attempts: 2 } });
    expect(r).toMatchObject({ ok: false, attempts: 2, reason: 'attempts' });
  });

  it('does not fail over on outcomes outside the policy', async () => {
    const h = harness({ a: { status: 503 }, b: { status: 200 }, c: { status: 200 } });
    const r = await h.run({ policy: { ...policy, statuses: new Set([429]) } });
    expect(r).toMatchObject({ ok: true, attempts: 1, response: { statusCode: 503 } });
  });

  it('clips hanging attempts to the budget: the loop ends at the budget, not attempts × timeout', async () => {
    const h = harness({ a: 'hang', b: 'hang', c: 'hang' });
    const t0 = Date.now();
    const r = await h.run({ timeouts: { ...DEFAULT_TIMEOUTS, firstByteMs: 150 }, budgetMs: 250 });
    const took = Date.now() - t0;
    expect(r).toMatchObject({ ok: false, attempts: 2, last: { kind: 'timeout' } });
    expect(took).toBeGreaterThanOrEqual(245);
    expect(took).toBeLessThan(400);
  });

  it('a client abort stops the attempt in flight at once and starts no other', async () => {
    const h = harness({ a: 'hang', b: { status: 200 }, c: { status: 200 } });
    setTimeout(() => h.client.abort(), 30);
    const t0 = Date.now();
    const r = await h.run();
    expect(Date.now() - t0).toBeLessThan(200);
    expect(r).toMatchObject({ ok: false, reason: 'client-gone', last: { kind: 'aborted' } });
    expect(h.calls).toEqual(['a']);
  });

  it('starts nothing for a client already gone', async () => {
    const h = harness({ a: { status: 200 }, b: { status: 200 }, c: { status: 200 } });
    h.client.abort();
    expect(await h.run()).toMatchObject({ ok: false, attempts: 0, reason: 'client-gone' });
    expect(h.calls).toEqual([]);
  });

  it('reports outcomes to passive health: failures eject, 429 retry-after ejects for that long', async () => {
    const health = new BackendHealth({ consecutiveFailures: 1 });
    const h = harness({ a: refused, b: { status: 429, headers: { 'retry-after': '30' } }, c: { status: 200 } });
    const r = await h.run({ health });
    expect(r).toMatchObject({ ok: true, backend: { name: 'c' }, attempts: 3 });
    expect(health.isEjected('ns/r/a')).toBe(true);
    expect(health.ejectedForMs('ns/r/b')).toBeGreaterThan(29_000);
    expect(health.state('ns/r/c')).toBe('healthy');
  });

  it('times health outcomes on the health clock, not the request-relative one', async () => {
    const health = new BackendHealth({ consecutiveFailures: 1 });
    health.recordFailure('ns/r/a');
    const h = harness({ a: { status: 200 }, b: { status: 200 }, c: { status: 200 } });
    const t0 = performance.now();
    expect(await h.run({ backends: [a], health, now: () => performance.now() - t0 })).toMatchObject({ ok: true });
    expect(health.state('ns/r/a')).toBe('healthy');
  });

  it('reports a budget that ran out before any attempt', async () => {
    const h = harness({ a: { status: 200 }, b: { status: 200 }, c: { status: 200 } });
    expect(await h.run({ now: () => 20_000 })).toMatchObject({ ok: false, attempts: 0, reason: 'budget', last: undefined });
  });
});
