// Limits against a real Redis: two gateway processes (the real executable) sharing one budget, limits changed by
// saving the manifest file, Redis killed and restarted under them, and a slow Redis against the store deadline.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitUntil } from '../support/wait.js';
import { insideOneMinute } from './minute.js';
import { startRecordingUpstream, type RecordingUpstream } from '../fakes/recording-upstream.js';
import { startGateway } from '../helpers/gateway.js';
import { startRedis, type TestRedis } from '../support/redis-server.js';
import type { CliRun } from '../support/spawn-cli.js';
import { KEYS, limitsManifests } from './manifests.js';
import { startReplica, stopReplicas } from './replica.js';

/** The store deadline of the in-process gateways (the default). */
const DEADLINE_MS = 50;
/**
 * The two processes' deadline: cold processes under tsx on a busy 2-core machine can take longer than 50 ms for a
 * store call when 50 requests arrive at once, and a call past its deadline fails open (uncounted).
 */
const PROCESS_DEADLINE_MS = 1000;
/** What a request may take on loopback beyond the store deadline (a busy 2-core machine, two gateways, tsx). */
const SLACK_MS = 400;

let redis: TestRedis;
let upstream: RecordingUpstream;

beforeAll(async () => {
  redis = await startRedis();
  upstream = await startRecordingUpstream();
});
afterAll(async () => {
  await upstream?.close();
  await redis?.stop();
});

/**
 * The timeout of a test that waits for room in the minute: up to `waitMs` of waiting on the clock (insideOneMinute,
 * once or more) comes on top of the default 20 s for its own work. Without it, a test that started near the end of a
 * minute timed out while it waited (CI, 2026-11-27).
 */
const withMinuteWaits = (waitMs: number) => 20_000 + waitMs;

const chat = (c: OpenAI) => c.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], max_tokens: 8 });

/** Status of one request (200 or the error's status) and how long it took. */
async function timed(c: OpenAI): Promise<{ status: number; ms: number; code?: string | null }> {
  const t = Date.now();
  try {
    await chat(c);
    return { status: 200, ms: Date.now() - t };
  } catch (err) {
    const e = err as InstanceType<typeof OpenAI.APIError>;
    return { status: e.status ?? 0, ms: Date.now() - t, code: e.code };
  }
}

// Steps of one story, each building on the last: they run in this order even under --sequence.shuffle.
describe('two gateway processes sharing one Redis', { shuffle: false }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'mg-limits-'));
  const file = join(dir, 'limits.yaml');
  const write = (group: string, alice?: string) => writeFileSync(file, limitsManifests({ upstream: upstream.baseURL, group, ...(alice ? { alice } : {}) }));
  const gateways: { run: CliRun; alice: OpenAI; bob: OpenAI }[] = [];

  beforeAll(async () => {
    write('{requestsPerMinute: 10}');
    for (let i = 0; i < 2; i++) {
      const { run, api } = await startReplica({ dir, redisUrl: redis.url, storeTimeout: `${PROCESS_DEADLINE_MS}ms`, listeningWithinMs: 30_000 });
      await run.waitForLog((r) => r.msg === 'first config loaded; ready', 30_000);
      const baseURL = `${api}/v1`;
      const client = (apiKey: string) => new OpenAI({ apiKey, baseURL, maxRetries: 0, timeout: 10_000 });
      gateways.push({ run, alice: client(KEYS.alice), bob: client(KEYS.bob) });
    }
  }, 90_000);

  afterAll(async () => {
    await stopReplicas(gateways);
    rmSync(dir, { recursive: true, force: true });
  });

  it(
    '50 concurrent requests against a group limit of 10 per minute: exactly 10 admitted across both',
    async () => {
      await insideOneMinute(10_000);
      const before = upstream.requests.length;
      const results = await Promise.all(Array.from({ length: 50 }, (_, i) => timed(i % 2 === 0 ? gateways[0]!.alice : gateways[1]!.bob)));
      expect(results.filter((r) => r.status === 200)).toHaveLength(10);
      const refused = results.filter((r) => r.status === 429);
      expect(refused).toHaveLength(40);
      expect(refused.every((r) => r.code === 'rate_limit_exceeded')).toBe(true);
      expect(upstream.requests.length - before).toBe(10);
    },
    withMinuteWaits(10_000),
  );

  it(
    'a limit changed by saving the manifest file takes effect within a second on both',
    async () => {
      await insideOneMinute(10_000);
      // The group's 10 are spent (the previous test, this minute) or are spent here.
      for (let i = 0; i < 10; i++) await timed(gateways[i % 2]!.alice);
      expect((await timed(gateways[0]!.alice)).status).toBe(429);
      expect((await timed(gateways[1]!.alice)).status).toBe(429);
      const saved = Date.now();
      write('{requestsPerMinute: 1000}');
      for (const g of gateways) {
        await waitUntil(async () => (await timed(g.alice)).status === 200, 1000, 'the raised limit to apply');
      }
      expect(Date.now() - saved).toBeLessThan(1000);
    },
    withMinuteWaits(10_000),
  );

  it(
    'Redis killed: requests pass uncounted (fail open) within the deadline; restarted: limits apply again',
    async () => {
      write('{requestsPerMinute: 1000}', '{requestsPerMinute: 1}');
      await insideOneMinute(10_000); // only the first two requests depend on the minute: the rest fail open
      // Wait for the new token limit to apply: alice gets one request then 429 (the window may hold earlier ones).
      await waitUntil(async () => (await timed(gateways[0]!.alice)).status === 429, 2000, "alice's limit of 1");
      expect((await timed(gateways[1]!.alice)).status).toBe(429);

      await redis.kill();
      const down = await Promise.all(Array.from({ length: 6 }, (_, i) => timed(gateways[i % 2]!.alice)));
      expect(down.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200]);
      for (const r of down) expect(r.ms).toBeLessThan(PROCESS_DEADLINE_MS + SLACK_MS);
      for (const g of gateways) await g.run.waitForLog((r) => r.msg === 'limits store (Redis) unreachable');

      await redis.restart();
      // A fresh (empty) Redis: once the gateways reconnect, alice is counted again, one request per minute.
      await insideOneMinute(10_000);
      for (const g of gateways) await waitUntil(async () => (await timed(g.alice)).status === 429, 10_000, 'limits to apply after the restart');
      for (const g of gateways) await g.run.waitForLog((r) => r.msg === 'limits store (Redis) reachable again');
    },
    withMinuteWaits(20_000 + 10_000),
  );
});

describe('a slow Redis against the store deadline', () => {
  it('fail open: a request passes after at most the deadline; fail closed: 503 after at most the deadline', async () => {
    const manifests = limitsManifests({ upstream: upstream.baseURL, alice: '{requestsPerMinute: 100000}' });
    const open = await startGateway(manifests, { usageLimits: { redisUrl: redis.url, timeoutMs: DEADLINE_MS } });
    const closed = await startGateway(manifests, { usageLimits: { redisUrl: redis.url, timeoutMs: DEADLINE_MS, failClosed: true } });
    try {
      await waitUntil(async () => (await timed(open.client(KEYS.alice))).status === 200, 5000, 'the open gateway');
      await waitUntil(async () => (await timed(closed.client(KEYS.alice))).status === 200, 5000, 'the closed gateway');
      redis.pause();
      try {
        // Each gateway holds a lease (a twentieth of 100,000) from its first request; a changed limit drops it, so the
        // next request must ask the (silent) Redis.
        const manifestsTight = limitsManifests({ upstream: upstream.baseURL, alice: '{requestsPerMinute: 5}' });
        open.load(manifestsTight);
        closed.load(manifestsTight);
        const a = await timed(open.client(KEYS.alice));
        const b = await timed(closed.client(KEYS.alice));
        expect(a.status).toBe(200);
        expect(b.status).toBe(503);
        expect(b.code).toBe('service_unavailable');
        expect(a.ms).toBeLessThan(DEADLINE_MS + SLACK_MS);
        expect(b.ms).toBeLessThan(DEADLINE_MS + SLACK_MS);
        const errors = await open.metrics.registry.getSingleMetric('model_gateway_limit_store_errors_total')!.get();
        expect(errors.values[0]!.value).toBeGreaterThan(0);
        expect(open.logs.some((l) => l.msg?.toString().startsWith('limits store call failed'))).toBe(true);
      } finally {
        redis.resume();
      }
      await waitUntil(async () => (await timed(closed.client(KEYS.alice))).status === 200, 5000, 'the closed gateway after Redis answers again');
    } finally {
      await open.close();
      await closed.close();
    }
  });
});

describe('a client that leaves mid-stream, counted in Redis', () => {
  it('still consumes its tokens: the estimate of what it sent and received is settled into the shared counter', async () => {
    const manifests = limitsManifests({ upstream: upstream.baseURL, alice: '{tokensPerDay: 100000}' });
    // The upstream holds its stream, so the answer is read on after the client left until the read-on bound ends
    // it (then estimated): 200 ms here rather than the default 10 s, the same path.
    const gw = await startGateway(manifests, {
      usageLimits: { redisUrl: redis.url, timeoutMs: PROCESS_DEADLINE_MS },
      usage: { readOn: { ms: 200, bytes: 1024 * 1024 } },
    });
    let used: number;
    try {
      const release = upstream.holdStreams();
      try {
        const controller = new AbortController();
        const stream = await gw
          .client(KEYS.alice)
          .chat.completions.create(
            { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'tell me a story' }], stream: true, max_tokens: 500 },
            { signal: controller.signal },
          );
        const it = stream[Symbol.asyncIterator]();
        await it.next();
        controller.abort();
        await upstream.waitForEarlyClose('/v1/chat/completions');
      } finally {
        release();
      }
      const record = await waitUntil(() => gw.logs.find((l) => l['msg'] === 'request' && l['aborted'] === true), 5_000, 'the usage record');
      expect(record['estimated']).toBe(true);
      used = Number(record['inputTokens']) + Number(record['outputTokens']);
      expect(used).toBeGreaterThan(0);
    } finally {
      // Closing hands back the unspent lease and pushes the settlement: the counter then holds what was used.
      await gw.close();
    }
    const day = Date.now() - (Date.now() % 86_400_000);
    const client = new Redis(redis.url);
    try {
      expect(Number(await client.get(`mg:token/default/alice:tokensPerDay:${day}`))).toBe(used);
    } finally {
      client.disconnect();
    }
  });
});
