// The openai SDK's chat.completions through the gateway to a backend that speaks Anthropic's Messages API
// (api: anthropic), answered whole: the fake Anthropic API sees Messages requests at /v1/messages with its key in
// x-api-key and anthropic-version, the SDK sees chat completions, and the usage recorded is what the backend
// reported. A tool round trip, structured outputs through chat.completions.parse with a zod schema, failover to an
// OpenAI-compatible backend, refusals in OpenAI's shape, and Anthropic's 429 and 529 retold so the SDK retries.
import OpenAI from 'openai';
import { zodResponseFormat } from 'openai/helpers/zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type AnthropicUpstream, startAnthropicUpstream } from '../fakes/anthropic-upstream.js';
import { type ScriptedChatUpstream, startScriptedChatUpstream } from '../fakes/scripted-chat-upstream.js';
import { ALICE_KEY, deadBaseURL, startGateway, type TestGateway } from '../helpers/gateway.js';
import { ANTHROPIC_KEY, chatClaudeManifests } from './manifests.js';
import { claudeTurns, QUESTION, recordedClaude, WEATHER_TOOL } from './weather-claude.js';

let claude: AnthropicUpstream;
let structured: AnthropicUpstream;
let throttled: AnthropicUpstream;
let overloaded: AnthropicUpstream;
let openai: ScriptedChatUpstream;
let gw: TestGateway;
let client: OpenAI;

const CITY = z.object({ city: z.string(), celsius: z.number() });

beforeAll(async () => {
  claude = await startAnthropicUpstream(claudeTurns);
  structured = await startAnthropicUpstream([
    { content: [{ type: 'text', text: '{"city":"Paris","celsius":18}' }], stop_reason: 'end_turn', usage: claudeTurns[1]!.usage },
  ]);
  const retried = (status: number, type: string) => ({
    content: [{ type: 'text' as const, text: 'after the retry' }],
    stop_reason: 'end_turn' as const,
    usage: claudeTurns[1]!.usage,
    error: { status, type, message: `${type} from the fake`, retryAfter: '0', times: 2 },
  });
  throttled = await startAnthropicUpstream([retried(429, 'rate_limit_error')]);
  overloaded = await startAnthropicUpstream([retried(529, 'overloaded_error')]);
  openai = await startScriptedChatUpstream([
    { text: 'from the OpenAI backend', finish: 'stop', usage: { prompt_tokens: 9, completion_tokens: 4, cached_tokens: 0 } },
  ]);
  const dead = await deadBaseURL();
  gw = await startGateway(
    chatClaudeManifests(dead, {
      'extra-claude': [['anthropic', claude.baseURL]],
      'extra-structured': [['anthropic', structured.baseURL]],
      'extra-throttled': [['anthropic', throttled.baseURL]],
      'extra-overloaded': [['anthropic', overloaded.baseURL]],
      'extra-failover': [
        ['anthropic', dead],
        ['openai', openai.baseURL],
      ],
    }),
  );
  client = new OpenAI({ apiKey: ALICE_KEY, baseURL: gw.baseURL, maxRetries: 0, timeout: 10_000 });
});

afterAll(async () => {
  await gw?.close();
  await Promise.all([claude, structured, throttled, overloaded, openai].map((u) => u?.close()));
});

describe('chat completions on an anthropic backend, whole answers', () => {
  it('a tool round trip: Messages requests upstream, chat completions to the SDK, the usage the backend reported recorded', async () => {
    const first = await client.chat.completions.create({ model: 'extra-claude', messages: QUESTION, tools: [WEATHER_TOOL], max_completion_tokens: 300 });
    const sent = claude.requests.at(-1)!;
    expect(sent.path).toBe('/v1/messages');
    expect(sent.headers['x-api-key']).toBe(ANTHROPIC_KEY);
    expect(sent.headers['anthropic-version']).toBe('2023-06-01');
    expect(sent.headers.authorization).toBeUndefined();
    expect(sent.body).toEqual({
      model: 'upstream-claude',
      max_tokens: 300,
      system: 'Be brief.',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'What is the weather in Paris?' }] }],
      tools: [{ name: 'get_weather', description: 'The weather in a city', input_schema: WEATHER_TOOL.function.parameters }],
    });
    expect(first.id).toMatch(/^chatcmpl-[0-9a-f]{24}$/);
    expect(first.model).toBe('extra-claude');
    expect(first.choices[0]!.finish_reason).toBe('tool_calls');
    const call = first.choices[0]!.message.tool_calls![0]!;
    expect(call).toMatchObject({ id: 'toolu_weather_1', type: 'function', function: { name: 'get_weather' } });
    expect(call.type === 'function' && JSON.parse(call.function.arguments)).toEqual({ city: 'Paris' });
    expect(first.usage).toMatchObject({ prompt_tokens: 168, completion_tokens: 30, prompt_tokens_details: { cached_tokens: 40 } });
    expect(await gw.record(String(sent.headers['x-request-id']))).toMatchObject({ status: 200, family: 'chat.completions', ...recordedClaude(0) });

    const second = await client.chat.completions.create({
      model: 'extra-claude',
      messages: [...QUESTION, first.choices[0]!.message, { role: 'tool', tool_call_id: call.id, content: '18°C, sunny' }],
      tools: [WEATHER_TOOL],
    });
    const again = claude.requests.at(-1)!;
    expect(again.body!['max_tokens']).toBe(4096); // the route's default: Anthropic requires one
    expect(again.body!['messages'].slice(1)).toEqual([
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Let me check.' },
          { type: 'tool_use', id: 'toolu_weather_1', name: 'get_weather', input: { city: 'Paris' } },
        ],
      },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_weather_1', content: '18°C, sunny' }] },
    ]);
    expect(second.choices[0]!.message.content).toBe('It is 18°C and sunny in Paris.');
    expect(second.choices[0]!.finish_reason).toBe('stop');
    expect(await gw.record(String(again.headers['x-request-id']))).toMatchObject({ status: 200, ...recordedClaude(1) });
  });

  it('chat.completions.parse with a zod schema: sent as output_config.format, parsed by the SDK', async () => {
    const r = await client.chat.completions.parse({ model: 'extra-structured', messages: QUESTION, response_format: zodResponseFormat(CITY, 'city') });
    expect(r.choices[0]!.message.parsed).toEqual({ city: 'Paris', celsius: 18 });
    const format = structured.requests.at(-1)!.body!['output_config'].format;
    expect(format).toMatchObject({ type: 'json_schema', schema: { type: 'object', required: ['city', 'celsius'], additionalProperties: false } });
  });

  it('fails over from an anthropic backend that is down to an OpenAI-compatible one, which gets the client body', async () => {
    const r = await client.chat.completions.create({ model: 'extra-failover', messages: QUESTION, max_tokens: 50 });
    expect(r.choices[0]!.message.content).toBe('from the OpenAI backend');
    expect(openai.requests.at(-1)!.body).toMatchObject({ model: 'upstream-chat', messages: QUESTION, max_tokens: 50 });
  });

  it('refuses what Anthropic cannot carry with a 400 in OpenAI shape, no backend asked', async () => {
    const before = claude.requests.length;
    const err = await client.chat.completions.create({ model: 'extra-claude', messages: QUESTION, n: 2 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({ type: 'invalid_request_error', param: 'n' });
    const badArgs = await client.chat.completions
      .create({
        model: 'extra-claude',
        messages: [...QUESTION, { role: 'assistant', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{nope' } }] }],
      })
      .catch((e: unknown) => e);
    expect(badArgs).toBeInstanceOf(OpenAI.BadRequestError);
    expect(claude.requests.length).toBe(before);
  });

  it.each([
    ['429 rate_limit_error', () => throttled, 'extra-throttled', 429],
    ['529 overloaded_error', () => overloaded, 'extra-overloaded', 529],
  ])('retells Anthropic %s in OpenAI shape, retry-after kept, so the SDK retries', async (_name, upstream, model, status) => {
    const raw = await fetch(`${gw.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ALICE_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(raw.status).toBe(status);
    expect(raw.headers.get('retry-after')).toBe('0');
    expect(await raw.json()).toEqual({
      error: {
        message: expect.stringContaining('from the fake'),
        type: status === 429 ? 'rate_limit_error' : 'server_error',
        param: null,
        code: expect.any(String),
      },
    });
    // The fake errs twice: the raw request took the first error, the SDK's first try gets the second, and the SDK
    // (one retry allowed) reads the status and retry-after and tries again.
    const errs = upstream().requests.length;
    const sdk = new OpenAI({ apiKey: ALICE_KEY, baseURL: gw.baseURL, maxRetries: 1, timeout: 10_000 });
    const r = await sdk.chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }] });
    expect(r.choices[0]!.message.content).toBe('after the retry');
    expect(upstream().requests.length).toBe(errs + 2);
  });
});
