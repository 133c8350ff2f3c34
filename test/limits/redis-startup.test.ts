// Limits right after start, against a real Redis: a replica reports ready only once its counter store has
// answered, and the first burst after start is counted exactly, as in a rolling update where every replica
// starts afresh and traffic arrives the moment it is ready.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DeadlineExceeded } from '../../src/features/limits/deadline.js';
import { RedisStore } from '../../src/features/limits/redis-store.js';
import { startGateway } from '../../src/gateway/main.js';
import { FileSource } from '../../src/sources/file/file-source.js';
import { createMetrics } from '../../src/observability/metrics.js';
import { startRecordingUpstream, type RecordingUpstream } from '../fakes/recording-upstream.js';
import { captureLogs } from '../support/log-capture.js';
import { startRedis, type TestRedis } from '../support/redis-server.js';
import { waitUntil } from '../support/wait.js';
import { insideOneMinute } from './minute.js';
import { KEYS, limitsManifests } from './manifests.js';
import { type Replica, startReplica, stopReplicas } from './replica.js';

const TRIES = 4;
const BURST = 50;
const LIMIT = 10;

let redis: TestRedis;
let upstream: RecordingUpstream;
let dir: string;

beforeAll(async () => {
  redis = await startRedis();
  upstream = await startRecordingUpstream();
  dir = mkdtempSync(join(tmpdir(), 'mg-limits-start-'));
  writeFileSync(join(dir, 'limits.yaml'), limitsManifests({ upstream: upstream.baseURL, group: `{requestsPerMinute: ${LIMIT}}` }));
});
afterAll(async () => {
  await upstream?.close();
  await redis?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/**
 * A replica as a rollout starts it. Its store deadline is 250 ms, not the default 50: other test files share the
 * machine's two cores with this Redis, which may then answer past 50 ms (a real timeout, not a late read); a busy
 * event loop against the default deadline is the last test's subject.
 */
const replica = (): Promise<Replica> => startReplica({ dir, redisUrl: redis.url, storeTimeout: '250ms', listeningWithinMs: 60_000 });

async function readyz(api: string): Promise<number> {
  return (await fetch(`${api}/readyz`)).status;
}

async function storeErrors(metricsURL: string): Promise<number> {
  const text = await (await fetch(metricsURL)).text();
  const line = text.split('\n').find((l) => l.startsWith('model_gateway_limit_store_errors_total'));
  return Number(line?.split(' ')[1] ?? 0);
}

async function statusOf(c: OpenAI): Promise<number> {
  try {
    await c.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], max_tokens: 8 });
    return 200;
  } catch (err) {
    return (err as InstanceType<typeof OpenAI.APIError>).status ?? 0;
  }
}

describe('a replica right after start', () => {
  it(
    `two fresh replicas, ${BURST} concurrent requests the moment both are ready: exactly ${LIMIT} admitted, no store error (${TRIES} fresh starts)`,
    async () => {
      const flusher = new Redis(redis.url);
      try {
        let done = 0;
        for (let attempt = 0; done < TRIES; attempt++) {
          expect(attempt).toBeLessThan(TRIES * 2); // a few tries may be redone for a minute boundary, not many
          await flusher.flushall();
          const replicas = await Promise.all([replica(), replica()]);
          try {
            await waitUntil(async () => (await Promise.all(replicas.map((r) => readyz(r.api)))).every((s) => s === 200), 60_000, 'both replicas ready');
            const clients = replicas.map((r) => new OpenAI({ apiKey: KEYS.alice, baseURL: `${r.api}/v1`, maxRetries: 0, timeout: 10_000 }));
            const before = upstream.requests.length;
            const from = Date.now();
            const statuses = await Promise.all(Array.from({ length: BURST }, (_, i) => statusOf(clients[i % 2]!)));
            // Counters are per calendar minute: a burst that straddled two minutes may rightly admit more; redo it.
            if (Math.floor(from / 60_000) !== Math.floor(Date.now() / 60_000)) continue;
            const errors = await Promise.all(replicas.map((r) => storeErrors(r.metrics)));
            expect({ try: done, admitted: statuses.filter((s) => s === 200).length, refused: statuses.filter((s) => s === 429).length, errors }).toEqual({
              try: done,
              admitted: LIMIT,
              refused: BURST - LIMIT,
              errors: [0, 0],
            });
            expect(upstream.requests.length - before).toBe(LIMIT);
            done++;
          } finally {
            await stopReplicas(replicas);
          }
        }
      } finally {
        flusher.disconnect();
      }
    },
    TRIES * 2 * 60_000,
  );

  it('is not ready while its counter store has not answered (Redis paused); requests that come meanwhile wait for it and are counted', async () => {
    const flusher = new Redis(redis.url);
    await flusher.flushall();
    flusher.disconnect();
    await insideOneMinute(15_000);
    redis.pause();
    let resumed = false;
    const metrics = createMetrics({ defaultMetrics: false });
    const gw = await startGateway({
      source: (ctx) => new FileSource({ dir, logger: ctx.logger }),
      host: '127.0.0.1',
      port: 0,
      metricsPort: null,
      logger: captureLogs().logger,
      metrics,
      usageLimits: { redisUrl: redis.url },
      demo: false,
    });
    try {
      await gw.ready; // the config is loaded: only the store is missing
      expect((await fetch(`${gw.apiURL}/healthz`)).status).toBe(200);
      expect(await readyz(gw.apiURL)).toBe(503);
      expect(gw.isReady()).toBe(false);
      // Traffic that does not wait for readiness (a client on the pod's address) waits for the store, bounded.
      const client = new OpenAI({ apiKey: KEYS.alice, baseURL: `${gw.apiURL}/v1`, maxRetries: 0, timeout: 10_000 });
      const statuses = Promise.all(Array.from({ length: LIMIT + 1 }, () => statusOf(client)));
      const buffered = metrics.registry.getSingleMetric('model_gateway_buffered_body_bytes')!;
      await waitUntil(async () => (await buffered.get()).values[0]!.value > 0, 5_000, 'a request held in the gateway');
      expect(await readyz(gw.apiURL)).toBe(503);
      redis.resume();
      resumed = true;
      await waitUntil(async () => (await readyz(gw.apiURL)) === 200, 10_000, '/readyz 200 once Redis answers');
      const all = await statuses;
      expect({ admitted: all.filter((s) => s === 200).length, refused: all.filter((s) => s === 429).length }).toEqual({ admitted: LIMIT, refused: 1 });
      const errors = await metrics.registry.getSingleMetric('model_gateway_limit_store_errors_total')!.get();
      expect(errors.values[0]?.value ?? 0).toBe(0);
    } finally {
      if (!resumed) redis.resume();
      await gw.close({ timeoutMs: 0 });
    }
  });

  it('a reply that came within the deadline is not late because the event loop was busy (a cold start takes its first burst)', async () => {
    const store = new RedisStore({ url: redis.url, timeoutMs: 50, startupWaitMs: 5_000 });
    try {
      expect(await store.ready(5_000)).toBe(true);
      const take = store.take([{ key: 'mg:test:busy', kind: 'window', need: 1, extra: 0, limit: 100, ttlMs: 60_000 }]);
      const until = performance.now() + 200; // busy for four deadlines, as a cold process on its first requests
      while (performance.now() < until);
      await expect(take).resolves.toMatchObject({ ok: true, granted: [1] });
      // A Redis that really does not answer is still late after the deadline.
      redis.pause();
      try {
        const started = performance.now();
        await expect(store.take([{ key: 'mg:test:busy', kind: 'window', need: 1, extra: 0, limit: 100, ttlMs: 60_000 }])).rejects.toThrow(DeadlineExceeded);
        expect(performance.now() - started).toBeLessThan(50 + 400);
      } finally {
        redis.resume();
      }
    } finally {
      await store.close();
    }
  });
});
