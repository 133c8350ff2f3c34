// The openai SDK's client.responses.create through the gateway to a backend that speaks chat completions only
// (api: chatCompletions): a function tool round trip, answered whole; the upstream sees chat completions requests at
// /chat/completions, the SDK sees Responses, and the usage recorded is the chat usage the backend reported. Failover
// across both kinds of backend, the refusals in OpenAI's shape, and follow-ups on a response nothing stored.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ScriptedChatUpstream, startScriptedChatUpstream } from '../fakes/scripted-chat-upstream.js';
import { type ScriptedResponsesUpstream, startScriptedResponsesUpstream } from '../fakes/scripted-responses-upstream.js';
import { deadBaseURL, startGateway, type TestGateway } from '../helpers/gateway.js';
import { responsesChatManifests } from './manifests.js';
import { ANSWER, recorded, responseUsage, WEATHER_TOOL, weatherTurns } from './weather-chat.js';

let chat: ScriptedChatUpstream;
let failing: ScriptedChatUpstream;
let custom: ScriptedChatUpstream;
let native: ScriptedResponsesUpstream;
let gw: TestGateway;
let client: OpenAI;

beforeAll(async () => {
  chat = await startScriptedChatUpstream(weatherTurns);
  custom = await startScriptedChatUpstream([
    {
      toolCalls: [{ id: 'call_patch_1', name: 'apply_patch', arguments: JSON.stringify({ input: PATCH }) }],
      finish: 'tool_calls',
      usage: weatherTurns[0]!.usage,
    },
    { text: 'Patched.', finish: 'stop', usage: weatherTurns[1]!.usage },
  ]);
  failing = await startScriptedChatUpstream([
    { finish: 'stop', usage: weatherTurns[0]!.usage, error: { status: 422, message: 'The model cannot take this.' } },
  ]);
  native = await startScriptedResponsesUpstream([
    { output: [{ type: 'message', text: 'native answer' }], usage: { inputTokens: 7, cachedInputTokens: 0, outputTokens: 2, reasoningTokens: 0 } },
  ]);
  const dead = await deadBaseURL();
  gw = await startGateway(
    responsesChatManifests(dead, {
      'extra-chat': [['chatCompletions', chat.baseURL]],
      'extra-to-chat': [
        ['openai', dead],
        ['chatCompletions', chat.baseURL],
      ],
      'extra-to-native': [
        ['chatCompletions', dead],
        ['openai', native.baseURL],
      ],
      'extra-failing': [['chatCompletions', failing.baseURL]],
      'extra-custom': [['chatCompletions', custom.baseURL]],
    }),
  );
  client = new OpenAI({ apiKey: 'sk-alice-client-key-0123456789', baseURL: gw.baseURL, maxRetries: 0, timeout: 10_000 });
});

afterAll(async () => {
  await gw?.close();
  await Promise.all([chat, failing, native, custom].map((u) => u?.close()));
});

const lastChat = () => chat.requests.at(-1)!;
const PATCH = '*** Begin Patch\n*** Add File: a.txt\n+hello\n*** End Patch';

describe('client.responses.create on a chat completions backend', () => {
  it('a function tool round trip: the call as a function_call item, its output back as a tool message, the answer as a message', async () => {
    const first = await client.responses.create({
      model: 'extra-chat',
      instructions: 'Be brief.',
      input: 'Weather in Paris?',
      tools: [WEATHER_TOOL],
      max_output_tokens: 300,
    });
    expect(lastChat().path).toBe('/v1/chat/completions');
    expect(lastChat().headers['authorization']).toBe('Bearer sk-upstream-secret-abcdef');
    expect(lastChat().body).toEqual({
      model: 'upstream-chat',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Weather in Paris?' },
      ],
      max_tokens: 300,
      tools: [{ type: 'function', function: { name: 'get_weather', description: WEATHER_TOOL.description, parameters: WEATHER_TOOL.parameters } }],
    });
    expect(first).toMatchObject({
      object: 'response',
      status: 'completed',
      model: 'extra-chat',
      instructions: 'Be brief.',
      max_output_tokens: 300,
      usage: responseUsage(0),
    });
    expect(first.id).toMatch(/^resp_[0-9a-f]{32}$/);
    expect(first.output).toEqual([
      expect.objectContaining({ type: 'function_call', call_id: 'call_weather_1', name: 'get_weather', arguments: '{"city":"Paris"}' }),
    ]);
    expect(await gw.record(String(lastChat().headers['x-request-id']))).toMatchObject({
      status: 200,
      family: 'responses',
      model: 'extra-chat',
      ...recorded(0),
    });

    const call = first.output[0] as OpenAI.Responses.ResponseFunctionToolCall;
    const second = await client.responses.create({
      model: 'extra-chat',
      input: [{ role: 'user', content: 'Weather in Paris?' }, call, { type: 'function_call_output', call_id: call.call_id, output: '18°C, sunny' }],
      tools: [WEATHER_TOOL],
    });
    expect(lastChat().body['messages']).toEqual([
      { role: 'user', content: 'Weather in Paris?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_weather_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
      },
      { role: 'tool', tool_call_id: 'call_weather_1', content: '18°C, sunny' },
    ]);
    expect(second.status).toBe('completed');
    expect(second.output_text).toBe(ANSWER);
    expect(second.usage).toMatchObject(responseUsage(1));
    expect(await gw.record(String(lastChat().headers['x-request-id']))).toMatchObject({ status: 200, family: 'responses', ...recorded(1) });
  });

  it('a custom (freeform) tool round trip: offered as a function with one input, called back as a custom_tool_call with that input', async () => {
    const tool = { type: 'custom' as const, name: 'apply_patch', description: 'Edits files.' };
    const first = await client.responses.create({ model: 'extra-custom', input: 'Add a.txt', tools: [tool] });
    expect(custom.requests[0]!.body['tools']).toEqual([
      {
        type: 'function',
        function: {
          name: 'apply_patch',
          description: 'Edits files.',
          parameters: {
            type: 'object',
            properties: { input: { type: 'string', description: 'The raw input of the tool.' } },
            required: ['input'],
            additionalProperties: false,
          },
        },
      },
    ]);
    expect(first.output).toEqual([expect.objectContaining({ type: 'custom_tool_call', call_id: 'call_patch_1', name: 'apply_patch', input: PATCH })]);
    const call = first.output[0] as OpenAI.Responses.ResponseCustomToolCall;
    const second = await client.responses.create({
      model: 'extra-custom',
      input: [{ role: 'user', content: 'Add a.txt' }, call, { type: 'custom_tool_call_output', call_id: call.call_id, output: 'Success.' }],
      tools: [tool],
    });
    expect((custom.requests[1]!.body['messages'] as unknown[]).slice(1)).toEqual([
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_patch_1', type: 'function', function: { name: 'apply_patch', arguments: JSON.stringify({ input: PATCH }) } }],
      },
      { role: 'tool', tool_call_id: 'call_patch_1', content: 'Success.' },
    ]);
    expect(second.output_text).toBe('Patched.');
  });

  it('fails over from a Responses backend to a chat completions one, which gets the translated body', async () => {
    const before = chat.requests.length;
    const r = await client.responses.create({ model: 'extra-to-chat', input: 'Weather in Paris?', tools: [WEATHER_TOOL] });
    expect(chat.requests.length).toBe(before + 1);
    expect(lastChat().path).toBe('/v1/chat/completions');
    expect(lastChat().body['messages']).toEqual([{ role: 'user', content: 'Weather in Paris?' }]);
    expect(r.output[0]).toMatchObject({ type: 'function_call', name: 'get_weather' });
  });

  it('fails over from a chat completions backend to a Responses one, which gets the client body unchanged', async () => {
    const r = await client.responses.create({ model: 'extra-to-native', input: 'Hello', store: false, metadata: { k: 'v' } });
    expect(native.requests).toHaveLength(1);
    expect(native.requests[0]!.path).toBe('/v1/responses');
    expect(native.requests[0]!.body).toEqual({ model: 'upstream-chat', input: 'Hello', store: false, metadata: { k: 'v' } });
    expect(r.output_text).toBe('native answer');
  });

  it('an upstream error reaches the SDK as its status and message', async () => {
    const e = await client.responses.create({ model: 'extra-failing', input: 'x' }).catch((err: unknown) => err);
    expect(e).toBeInstanceOf(OpenAI.UnprocessableEntityError);
    expect((e as InstanceType<typeof OpenAI.APIError>).message).toContain('The model cannot take this.');
  });
});

describe('what a chat completions backend cannot carry, refused in OpenAI shape before any upstream call', () => {
  const refused = async (body: Record<string, unknown>) => {
    const before = chat.requests.length;
    const e = await client.responses.create({ model: 'extra-chat', input: 'x', ...body } as never).catch((err: unknown) => err);
    expect(chat.requests.length).toBe(before);
    expect(e).toBeInstanceOf(OpenAI.BadRequestError);
    return e as InstanceType<typeof OpenAI.BadRequestError>;
  };

  it('a built-in tool, named by its type', async () => {
    const e = await refused({ tools: [WEATHER_TOOL, { type: 'web_search' }] });
    expect(e.error).toMatchObject({ type: 'invalid_request_error', param: 'tools[1].type' });
    expect(e.message).toContain('`web_search`');
  });

  it('previous_response_id, conversation and background, saying to send the whole conversation', async () => {
    for (const body of [{ conversation: 'conv_1' }, { background: true }]) {
      const e = await refused(body);
      expect(e.error).toMatchObject({ type: 'invalid_request_error', code: 'unsupported_parameter' });
      expect(e.message).toContain('whole conversation');
    }
  });

  it('a previous_response_id naming a response the gateway did not keep (store: false): 404 in OpenAI shape', async () => {
    const first = await client.responses.create({ model: 'extra-chat', input: 'Weather in Paris?', store: false });
    const before = chat.requests.length;
    const e = await client.responses.create({ model: 'extra-chat', input: 'more', previous_response_id: first.id }).catch((err: unknown) => err);
    expect(chat.requests.length).toBe(before);
    expect(e).toBeInstanceOf(OpenAI.NotFoundError);
    expect(e).toMatchObject({ error: { code: 'not_found', param: 'previous_response_id', message: expect.stringContaining('store: false') } });
  });
});

describe('follow-ups on a response a chat completions backend answered', () => {
  const notFound = async (call: () => Promise<unknown>) => {
    const e = await call().catch((err: unknown) => err);
    expect(e).toBeInstanceOf(OpenAI.NotFoundError);
    expect((e as InstanceType<typeof OpenAI.NotFoundError>).error).toMatchObject({ type: 'invalid_request_error', code: 'not_found' });
  };

  it('retrieve answers the Response the gateway kept, input_items its input; delete forgets it (then all 404); no backend asked', async () => {
    const input = [
      { role: 'user' as const, content: 'Hello.' },
      { role: 'user' as const, content: 'Weather in Paris?' },
    ];
    const r = await client.responses.create({ model: 'extra-chat', input, tools: [WEATHER_TOOL] });
    const before = chat.requests.length;
    expect(await client.responses.retrieve(r.id)).toEqual(JSON.parse(JSON.stringify(r)));
    const streamed = await client.responses.retrieve(r.id, { stream: true }).catch((err: unknown) => err);
    expect(streamed).toBeInstanceOf(OpenAI.BadRequestError);
    expect(streamed).toMatchObject({ error: { code: 'unsupported_parameter', param: 'stream' } });
    const cancelled = await client.responses.cancel(r.id).catch((err: unknown) => err);
    expect(cancelled).toBeInstanceOf(OpenAI.BadRequestError);
    expect(cancelled).toMatchObject({ error: { type: 'invalid_request_error', message: expect.stringContaining('background') } });
    // The SDK pages through them itself (limit 1: each page's last id is the next one's `after`).
    const listed: OpenAI.Responses.ResponseItem[] = [];
    for await (const item of client.responses.inputItems.list(r.id, { order: 'asc', limit: 1 })) listed.push(item);
    expect(listed).toMatchObject(
      input.map((m) => ({ type: 'message', role: 'user', status: 'completed', content: [{ type: 'input_text', text: m.content }] })),
    );
    expect(new Set(listed.map((i) => i.id)).size).toBe(2);
    const newest = await client.responses.inputItems.list(r.id);
    expect(newest.data.map((i) => (i as OpenAI.Responses.ResponseInputMessageItem).content[0])).toMatchObject([
      { text: 'Weather in Paris?' },
      { text: 'Hello.' },
    ]);
    expect(await client.responses.delete(r.id)).toEqual({ id: r.id, object: 'response', deleted: true });
    await notFound(() => client.responses.retrieve(r.id));
    await notFound(() => client.responses.delete(r.id));
    await notFound(() => client.responses.inputItems.list(r.id));
    await notFound(() => client.responses.cancel(r.id));
    await notFound(() => client.responses.create({ model: 'extra-chat', previous_response_id: r.id, input: 'more' }));
    expect(chat.requests.length).toBe(before);
  });

  it('a response given with store: false, or another key’s, is not found', async () => {
    const unstored = await client.responses.create({ model: 'extra-chat', input: 'Weather in Paris?', tools: [WEATHER_TOOL], store: false });
    await notFound(() => client.responses.retrieve(unstored.id));
    const kept = await client.responses.create({ model: 'extra-chat', input: 'Weather in Paris?', tools: [WEATHER_TOOL] });
    const other = new OpenAI({ apiKey: 'sk-narrow-key', baseURL: gw.baseURL, maxRetries: 0 });
    await notFound(() => other.responses.retrieve(kept.id));
    await notFound(() => other.responses.delete(kept.id));
    expect(await client.responses.retrieve(kept.id)).toMatchObject({ id: kept.id });
  });
});
