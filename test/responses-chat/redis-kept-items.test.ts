// Kept items in a real Redis (--items-redis-url), shared by replicas: an item one gateway answered is found by
// another, under the key that got it, for an hour, and a response one answered is continued through another. With Redis gone an answer is not held (its items are simply not
// kept, the failure logged and counted) and a request that refers to an item is answered 503 in OpenAI's shape, which the SDKs
// retry, rather than refused as if the item had never been kept.
import { Redis } from 'ioredis';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ScriptedChatUpstream, startScriptedChatUpstream } from '../fakes/scripted-chat-upstream.js';
import { ALICE_KEY, deadBaseURL, startGateway, type TestGateway } from '../helpers/gateway.js';
import { startRedis, type TestRedis } from '../support/redis-server.js';
import { waitUntil } from '../support/wait.js';
import { responsesChatManifests } from './manifests.js';
import { ANSWER, WEATHER_TOOL, weatherTurns } from './weather-chat.js';

const PREAMBLE = 'Let me look that up.';

let redis: TestRedis;
let chat: ScriptedChatUpstream;
let a: TestGateway;
let b: TestGateway;

beforeAll(async () => {
  redis = await startRedis();
  chat = await startScriptedChatUpstream([{ ...weatherTurns[0]!, text: PREAMBLE }, weatherTurns[1]!]);
  const manifests = responsesChatManifests(await deadBaseURL(), { 'extra-chat': [['chatCompletions', chat.baseURL]] });
  a = await startGateway(manifests, { itemsRedisUrl: redis.url });
  b = await startGateway(manifests, { itemsRedisUrl: redis.url });
});

afterAll(async () => {
  await Promise.all([a?.close(), b?.close()]);
  await chat?.close();
  await redis?.stop();
});

const client = (gw: TestGateway) => new OpenAI({ apiKey: ALICE_KEY, baseURL: gw.baseURL, maxRetries: 0, timeout: 10_000 });
const QUESTION = { role: 'user' as const, content: 'Weather in Paris?' };

async function firstTurn(gw: TestGateway): Promise<OpenAI.Responses.ResponseOutputItem[]> {
  const r = await client(gw).responses.create({ model: 'extra-chat', input: [QUESTION], tools: [WEATHER_TOOL] });
  return r.output;
}

function secondTurn(gw: TestGateway, output: readonly OpenAI.Responses.ResponseOutputItem[]) {
  const input: OpenAI.Responses.ResponseInputItem[] = [
    QUESTION,
    ...output.map((i) => ({ type: 'item_reference' as const, id: i.id! })),
    { type: 'function_call_output', call_id: 'call_weather_1', output: '{"forecast":"sunny"}' },
  ];
  return client(gw).responses.create({ model: 'extra-chat', input, tools: [WEATHER_TOOL] });
}

describe('kept items in Redis', () => {
  it('an item answered through one replica is found through another; each key expires an hour after it was kept', async () => {
    const output = await firstTurn(a);
    const probe = new Redis(redis.url);
    try {
      const key = `mg:item:default/alice:${output[0]!.id}`;
      // Keeping does not hold the answer: the write lands just after it.
      await waitUntil(async () => (await probe.exists(key)) === 1, 5_000, 'the kept message in Redis');
      const ttl = await probe.pttl(key);
      expect(ttl).toBeGreaterThan(3_590_000);
      expect(ttl).toBeLessThanOrEqual(3_600_000);
    } finally {
      probe.disconnect();
    }
    const second = await secondTurn(b, output);
    expect(second.output_text).toBe(ANSWER);
    expect(chat.requests.at(-1)!.body!['messages']).toMatchObject([
      QUESTION,
      { role: 'assistant', content: PREAMBLE, tool_calls: [{ id: 'call_weather_1' }] },
      { role: 'tool', tool_call_id: 'call_weather_1' },
    ]);
  });

  it('a response answered through one replica is continued (previous_response_id) through another', async () => {
    const first = await client(a).responses.create({ model: 'extra-chat', input: [QUESTION], tools: [WEATHER_TOOL], store: true });
    const probe = new Redis(redis.url);
    try {
      await waitUntil(async () => (await probe.exists(`mg:item:default/alice:${first.id}`)) === 1, 5_000, 'the kept response in Redis');
    } finally {
      probe.disconnect();
    }
    const second = await client(b).responses.create({
      model: 'extra-chat',
      previous_response_id: first.id,
      input: [{ type: 'function_call_output', call_id: 'call_weather_1', output: '{"forecast":"sunny"}' }],
      tools: [WEATHER_TOOL],
    });
    expect(second.output_text).toBe(ANSWER);
    expect(chat.requests.at(-1)!.body!['messages']).toMatchObject([QUESTION, { role: 'assistant', content: PREAMBLE }, { role: 'tool' }]);
  });

  it('with Redis gone: answers still come (items not kept, logged); a reference is answered 503, the backend not asked', async () => {
    await redis.kill();
    try {
      const output = await firstTurn(a);
      expect(output.map((i) => i.type)).toEqual(['message', 'function_call']);
      await waitUntil(() => a.logs.find((l) => String(l['msg']).startsWith('the Redis of kept items failed')), 5_000, 'the warning of the failed keep');
      const asked = chat.requests.length;
      await expect(secondTurn(b, output)).rejects.toMatchObject({ status: 503, error: { type: 'server_error', code: 'service_unavailable' } });
      expect(chat.requests.length).toBe(asked);
      for (const gw of [a, b]) {
        const errors = await gw.metrics.registry.getSingleMetric('model_gateway_kept_items_errors_total')!.get();
        expect(errors.values[0]!.value).toBeGreaterThan(0);
      }
    } finally {
      await redis.restart();
    }
  });
});
