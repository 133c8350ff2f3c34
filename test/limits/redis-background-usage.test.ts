// What a background Responses request generates, counted once over two gateway replicas sharing one real Redis:
// both retrieve the same finished response at once and only one records it; its cost reaches the shared money
// counters, so the other replica refuses the creator's next request (costPerDay), and the group's spend holds the
// create's estimate plus the completion, to the micro-unit.
import { Redis } from 'ioredis';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeVideoResponsesUpstream } from '../fakes/video-responses-upstream.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { ALICE, newKey, sealedManifests } from '../helpers/sealed-setup.js';
import { startRedis, type TestRedis } from '../support/redis-server.js';
import { waitUntil } from '../support/wait.js';

const USAGE = { input_tokens: 1200, cached_tokens: 200, output_tokens: 30_000 };
const PRICING = '{inputPerMTok: "2.00", cachedInputPerMTok: "1.00", outputPerMTok: "8.00"}';
/** The response's exact cost in micro-units: 1,000 uncached × 2 + 200 cached × 1 + 30,000 × 8. */
const EXACT_MICROS = 2_000 + 200 + 240_000;
/** 0.10 a day: a create reserves about 0.001; the completion costs 0.24. */
const LIMIT_MICROS = 100_000;

let redis: TestRedis;
let store: Redis;
let upstream: FakeVideoResponsesUpstream;
const replicas: TestGateway[] = [];

beforeAll(async () => {
  redis = await startRedis();
  store = new Redis(redis.url);
  upstream = await FakeVideoResponsesUpstream.start({ backgroundSteps: 1, backgroundUsage: USAGE });
  const manifests = sealedManifests({ video: [upstream.baseURL], responses: upstream.baseURL, responsesPricing: PRICING, groupLimits: '{costPerDay: "0.10"}' });
  // Replicas of one deployment: the same sealed-id key, the same store (a deadline no busy machine passes).
  const idKeys = [newKey()];
  for (let i = 0; i < 2; i++) replicas.push(await startGateway(manifests, { idKeys, usageLimits: { redisUrl: redis.url, timeoutMs: 1000 } }));
});
afterAll(async () => {
  for (const r of replicas) await r.close();
  store?.disconnect();
  await upstream?.close();
  await redis?.stop();
});

const micros = (cost: unknown) => Math.round(Number(cost) * 1e6);

/** The record of a request on whichever replica served it. */
function recordOn(gw: TestGateway, reqId: string | null): Promise<Record<string, unknown>> {
  return gw.record(reqId, 10_000);
}

/** A group counter in Redis (the costPerDay limit's, or its spend), one key per window. */
async function counter(pattern: string): Promise<number> {
  const keys = await store.keys(pattern);
  expect(keys.length).toBeLessThanOrEqual(1);
  return keys.length === 0 ? 0 : Number(await store.get(keys[0]!));
}

describe('a background response retrieved on two replicas sharing Redis', () => {
  it('is recorded once, and its cost reaches the shared money limit: the next request on the other replica gets 429', async () => {
    const [a, b] = replicas.map((r) => r.client(ALICE)) as [OpenAI, OpenAI];
    const { data: created, response } = await a.responses
      .create({ model: 'gpt-r', input: 'write a long story', background: true, max_output_tokens: 100 })
      .withResponse();
    expect(created.status).toBe('queued');
    const create = await recordOn(replicas[0]!, response.headers.get('x-request-id'));
    expect((await b.responses.retrieve(created.id)).status).toBe('in_progress');

    // Both replicas, several times each, at once: every one sees it completed.
    const calls = await Promise.all(
      [a, b, a, b, a, b].map(async (c, i) => {
        const r = await c.responses.retrieve(created.id).withResponse();
        return { replica: replicas[i % 2]!, status: r.data.status, reqId: r.response.headers.get('x-request-id') };
      }),
    );
    expect(calls.every((c) => c.status === 'completed')).toBe(true);
    const records = await Promise.all(calls.map((c) => recordOn(c.replica, c.reqId)));
    const recorded = records.filter((r) => r['background'] === true);
    expect(recorded).toHaveLength(1);
    expect(recorded[0]).toMatchObject({
      responseId: created.id,
      createReqId: response.headers.get('x-request-id'),
      inputTokens: USAGE.input_tokens - (create['inputTokens'] as number),
      outputTokens: USAGE.output_tokens,
    });
    expect(records.filter((r) => r['outputTokens'] !== undefined)).toHaveLength(1);
    // The group's spend: the create's estimate and the completion, the response's exact cost in all.
    const spent = micros(create['cost']) + micros(recorded[0]!['cost']);
    expect(spent).toBe(EXACT_MICROS);
    await waitUntil(async () => (await counter('mg:group/default/team:spend:day:*')) === spent, 10_000, 'the spend to reach Redis');
    await waitUntil(async () => (await counter('mg:group/default/team:costPerDay:*')) >= spent, 10_000, 'the charge to reach the limit counter');
    expect(spent).toBeGreaterThan(LIMIT_MICROS);

    // Past the limit on both replicas: the one that never reserved anything asks Redis, which refuses.
    for (const c of [b, a]) {
      const err = await c.responses.create({ model: 'gpt-r', input: 'more', max_output_tokens: 100 }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(OpenAI.RateLimitError);
      expect((err as InstanceType<typeof OpenAI.RateLimitError>).code).toBe('insufficient_quota');
    }
  });
});
