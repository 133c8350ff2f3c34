// Kept responses in a real Redis (--responses-redis-url), shared by replicas: a response one gateway answered is
// continued (previous_response_id), and its items found (item_reference), through another, under the key that got
// it, one Redis key per response expiring an hour after it was kept. With Redis gone an answer is not held (it is
// simply not kept, the failure logged and counted) and a request that refers to a kept response (continues,
// retrieves) is answered 503 in OpenAI's shape, which the SDKs retry, rather than refused as if the response had
// never been kept.
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
  a = await startGateway(manifests, { responsesRedisUrl: redis.url });
  b = await startGateway(manifests, { responsesRedisUrl: redis.url });
});

afterAll(async () => {
  await Promise.all([a?.close(), b?.close()]);
  await chat?.close();
  await redis?.stop();
});

const client = (gw: TestGateway) => new OpenAI({ apiKey: ALICE_KEY, baseURL: gw.baseURL, maxRetries: 0, timeout: 10_000 });
const QUESTION = { role: 'user' as const, content: 'Weather in Paris?' };
const TOOL_OUTPUT = { type: 'function_call_output' as const, call_id: 'call_weather_1', output: '{"forecast":"sunny"}' };

/** The first turn through `gw`, once its record is in Redis (keeping does not hold the answer: it lands just after). */
async function firstTurn(gw: TestGateway): Promise<OpenAI.Responses.Response> {
  const first = await client(gw).responses.create({ model: 'extra-chat', input: [QUESTION], tools: [WEATHER_TOOL] });
  const probe = new Redis(redis.url);
  try {
    const key = `mg:response:default/alice:${first.id}`;
    await waitUntil(async () => (await probe.exists(key)) === 1, 5_000, 'the kept response in Redis');
    const ttl = await probe.pttl(key);
    expect(ttl).toBeGreaterThan(3_590_000);
    expect(ttl).toBeLessThanOrEqual(3_600_000);
  } finally {
    probe.disconnect();
  }
  return first;
}

/** The chat messages the backend got for the second turn: the first turn's text and call again, then the output. */
function expectSecondTurnSent() {
  expect(chat.requests.at(-1)!.body!['messages']).toMatchObject([
    QUESTION,
    { role: 'assistant', content: PREAMBLE, tool_calls: [{ id: 'call_weather_1' }] },
    { role: 'tool', tool_call_id: 'call_weather_1' },
  ]);
}

describe('kept responses in Redis', () => {
  it('a response answered through one replica is continued through another (previous_response_id)', async () => {
    const first = await firstTurn(a);
    const second = await client(b).responses.create({ model: 'extra-chat', previous_response_id: first.id, input: [TOOL_OUTPUT], tools: [WEATHER_TOOL] });
    expect(second.output_text).toBe(ANSWER);
    expectSecondTurnSent();
  });

  it('its items are found through another replica (item_reference)', async () => {
    const first = await firstTurn(a);
    const input: OpenAI.Responses.ResponseInputItem[] = [QUESTION, ...first.output.map((i) => ({ type: 'item_reference' as const, id: i.id! })), TOOL_OUTPUT];
    const second = await client(b).responses.create({ model: 'extra-chat', input, tools: [WEATHER_TOOL] });
    expect(second.output_text).toBe(ANSWER);
    expectSecondTurnSent();
  });

  it('with Redis gone: answers still come (not kept, logged, counted); a continuation is answered 503, the backend not asked', async () => {
    const first = await firstTurn(a);
    await redis.kill();
    try {
      const again = await client(a).responses.create({ model: 'extra-chat', input: [QUESTION], tools: [WEATHER_TOOL] });
      expect(again.output.map((i) => i.type)).toEqual(['message', 'function_call']);
      await waitUntil(() => a.logs.find((l) => String(l['msg']).startsWith('the Redis of kept responses failed')), 5_000, 'the warning of the failed keep');
      const asked = chat.requests.length;
      const run = client(b).responses.create({ model: 'extra-chat', previous_response_id: first.id, input: [TOOL_OUTPUT], tools: [WEATHER_TOOL] });
      await expect(run).rejects.toMatchObject({ status: 503, error: { type: 'server_error', code: 'service_unavailable' } });
      await expect(client(b).responses.retrieve(first.id)).rejects.toMatchObject({ status: 503 });
      // Ids the translation never mints are not looked up: not found (a reference refused), Redis or not.
      await expect(client(b).responses.retrieve('resp_not-one-of-ours')).rejects.toMatchObject({ status: 404 });
      const foreign = client(b).responses.create({ model: 'extra-chat', input: [QUESTION, { type: 'item_reference', id: 'msg_upstream_1' }] });
      await expect(foreign).rejects.toMatchObject({ status: 400, error: { param: 'input[1]' } });
      expect(chat.requests.length).toBe(asked);
      for (const gw of [a, b]) {
        const errors = await gw.metrics.registry.getSingleMetric('model_gateway_kept_responses_errors_total')!.get();
        expect(errors.values[0]!.value).toBeGreaterThan(0);
      }
    } finally {
      await redis.restart();
    }
  });
});
