// Connection hygiene through the real stack: a client abort stops the upstream at once and starts no retry;
// 1,000 aborted requests leave no socket behind; config reloads that remove backends close their pools (after
// in-flight streams finish) and health forgets them.
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { UpstreamClient } from '../../src/dataplane/upstream/upstream-client.js';
import { BackendHealth } from '../../src/dataplane/policy/health.js';
import { startFaultyUpstream, type FaultyUpstream } from '../fakes/faulty-upstream.js';
import type { TestGateway } from '../helpers/gateway.js';
import { chat, drain, gatewayWith, reload, route, streamChat } from './harness.js';
import { waitUntil } from '../support/wait.js';

let hang: FaultyUpstream, backup: FaultyUpstream, a: FaultyUpstream, b: FaultyUpstream;
let gw: TestGateway;
let client: OpenAI;
// Owned by the test so its pools can be inspected; idle sockets are kept long so only a pool close can free them.
const upstream = new UpstreamClient({ keepAliveTimeoutMs: 60_000 });
const health = new BackendHealth({ consecutiveFailures: 1_000_000 });

const abortRoute = () =>
  route('extra-abort', [
    { name: 'hang', baseURL: hang.baseURL },
    { name: 'backup', baseURL: backup.baseURL, priority: 1 },
  ]);
const aRoute = () => route('extra-a', [{ name: 'a', baseURL: a.baseURL }]);
const bRoute = () => route('extra-b', [{ name: 'b', baseURL: b.baseURL }]);

beforeAll(async () => {
  [hang, backup, a, b] = await Promise.all([
    startFaultyUpstream('hang', { kind: 'hang' }),
    startFaultyUpstream('backup'),
    startFaultyUpstream('a'),
    startFaultyUpstream('b'),
  ]);
  gw = await gatewayWith([abortRoute(), aRoute(), bRoute()], { upstream, health });
  client = gw.client();
});
afterAll(async () => {
  await gw?.close();
  await upstream.destroy();
  await Promise.all([hang, backup, a, b].map((u) => u?.close()));
});
beforeEach(() => {
  for (const u of [hang, backup, a, b]) u.requests.length = 0;
});

describe('client abort', () => {
  it('aborts the upstream request at once and starts no retry', async () => {
    const ac = new AbortController();
    const call = chat(client, 'extra-abort', { signal: ac.signal }).catch((e: unknown) => e);
    await waitUntil(() => hang.requests.length === 1, 3_000, 'the upstream to get the request');
    const abortedBefore = hang.abortedRequests();
    const t0 = Date.now();
    ac.abort();
    expect(await call).toBeInstanceOf(OpenAI.APIUserAbortError);
    await waitUntil(() => hang.abortedRequests() === abortedBefore + 1, 1_000, 'the upstream to see the abort');
    expect(Date.now() - t0).toBeLessThan(250);
    await new Promise((r) => setTimeout(r, 100));
    expect(backup.requests).toHaveLength(0);
  });

  it('leaves no socket behind after 1,000 aborted requests', async () => {
    const abortedBefore = hang.abortedRequests();
    const t0 = Date.now();
    const batch = 100;
    for (let done = 0; done < 1_000; done += batch) {
      const controllers = Array.from({ length: batch }, () => new AbortController());
      const calls = controllers.map((ac) => chat(client, 'extra-abort', { signal: ac.signal }).catch(() => undefined));
      await waitUntil(() => hang.requests.length === done + batch, 5_000, 'the batch to reach the upstream');
      for (const ac of controllers) ac.abort();
      await Promise.all(calls);
    }
    await waitUntil(() => hang.openSockets() === 0, 3_000, 'every upstream socket to close');
    expect(hang.requests).toHaveLength(1_000);
    expect(hang.abortedRequests() - abortedBefore).toBe(1_000);
    expect(backup.requests).toHaveLength(0);
    // The gateway holds nothing towards the hanging upstream either (its pool may keep idle sockets elsewhere).
    expect(upstream.socketCount).toBeLessThanOrEqual(backup.openSockets() + a.openSockets() + b.openSockets());
    console.log(`1,000 aborted requests in ${Date.now() - t0} ms`);
  }, 60_000);
});

describe('config reloads', () => {
  it('closes the pool and sockets of a removed backend, after its in-flight stream finishes', async () => {
    reload(gw, [abortRoute(), aRoute(), bRoute()]);
    await Promise.all(Array.from({ length: 4 }, () => chat(client, 'extra-a')));
    await Promise.all(Array.from({ length: 4 }, () => chat(client, 'extra-b')));
    expect(a.openSockets()).toBeGreaterThan(0);
    expect(b.openSockets()).toBeGreaterThan(0);
    health.recordFailure('default/extra-b/b');

    b.setFault({ kind: 'ok', chunkDelayMs: 150 });
    const { data } = await streamChat(client, 'extra-b');
    const pools = upstream.poolCount;
    reload(gw, [abortRoute(), aRoute()]);
    expect(await drain(data)).toEqual({ text: 'from b', error: undefined });
    await waitUntil(() => b.openSockets() === 0, 3_000, 'b to have no socket left');
    expect(upstream.poolCount).toBe(pools - 1);
    expect(a.openSockets()).toBeGreaterThan(0);
    expect(health.trackedIds()).not.toContain('default/extra-b/b');
    const { data: stillServed } = await chat(client, 'extra-a');
    expect(stillServed.choices[0]?.message.content).toBe('from a');
  });

  it('repeated reloads that swap backends in and out leak nothing', async () => {
    const extras = await Promise.all(Array.from({ length: 5 }, (_, i) => startFaultyUpstream(`x${i}`)));
    try {
      for (const x of extras) {
        reload(gw, [abortRoute(), aRoute(), route('extra-x', [{ name: x.name, baseURL: x.baseURL }])]);
        await Promise.all(Array.from({ length: 3 }, () => chat(client, 'extra-x')));
        expect(x.openSockets()).toBeGreaterThan(0);
      }
      reload(gw, [abortRoute(), aRoute()]);
      await waitUntil(() => extras.every((x) => x.openSockets() === 0), 3_000, 'every swapped-out backend to lose its sockets');
      expect(extras.map((x) => x.requests.length)).toEqual([3, 3, 3, 3, 3]);
    } finally {
      await Promise.all(extras.map((x) => x.close()));
    }
  });
});

describe('a saturated pool', () => {
  it('a request queued behind the connection limit counts against its first-byte deadline and fails over', async () => {
    const slow = await startFaultyUpstream('slow', { kind: 'ok', chunkDelayMs: 1_500 });
    const spare = await startFaultyUpstream('spare');
    const narrow = new UpstreamClient({ connections: 1 });
    const gw2 = await gatewayWith(
      [
        route(
          'extra-narrow-pool',
          [
            { name: 'slow', baseURL: slow.baseURL },
            { name: 'spare', baseURL: spare.baseURL, priority: 1 },
          ],
          { timeouts: { firstByte: '300ms' } },
        ),
      ],
      { upstream: narrow },
    );
    try {
      const c = gw2.client();
      // Holds slow's only connection for ~1.5 s (headers at once, then a slow body).
      const first = await streamChat(c, 'extra-narrow-pool');
      expect(first.response.headers.get('x-model-gateway-backend')).toBe('slow');
      const t0 = Date.now();
      const { response } = await chat(c, 'extra-narrow-pool');
      expect(response.headers.get('x-model-gateway-backend')).toBe('spare');
      expect(Date.now() - t0).toBeLessThan(1_000);
      expect(slow.requests).toHaveLength(1);
      expect((await drain(first.data)).text).toBe('from slow');
    } finally {
      await gw2.close();
      await narrow.destroy();
      await Promise.all([slow.close(), spare.close()]);
    }
  });
});
