// previous_response_id on a route served through chat completions: the gateway kept each response it answered
// (store on, the default) and reads the conversation back for a request that continues one, as OpenAI's API does
// with what it stored: earlier inputs and outputs, not earlier instructions. Through the openai SDK, whole and
// streamed, over three turns; refused as OpenAI refuses an unknown id for another key's response and one given
// with store: false. A route that also has a Responses backend continues that backend's (sealed) responses there.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ScriptedChatUpstream, startScriptedChatUpstream } from '../fakes/scripted-chat-upstream.js';
import { type ScriptedResponsesUpstream, startScriptedResponsesUpstream } from '../fakes/scripted-responses-upstream.js';
import { ALICE_KEY, deadBaseURL, keyManifests, startGateway, type TestGateway } from '../helpers/gateway.js';
import { responsesChatManifests } from './manifests.js';
import { ANSWER, WEATHER_TOOL, weatherTurns } from './weather-chat.js';

const BOB_KEY = 'sk-bob-client-key-9876543210';
const THANKS = 'You are welcome.';

let chat: ScriptedChatUpstream;
let native: ScriptedResponsesUpstream;
let gw: TestGateway;

beforeAll(async () => {
  chat = await startScriptedChatUpstream([...weatherTurns, { text: THANKS, finish: 'stop', usage: weatherTurns[1]!.usage }]);
  native = await startScriptedResponsesUpstream([
    { output: [{ type: 'message', text: 'native answer' }], usage: { inputTokens: 7, cachedInputTokens: 0, outputTokens: 2, reasoningTokens: 0 } },
    { output: [{ type: 'message', text: 'native again' }], usage: { inputTokens: 9, cachedInputTokens: 0, outputTokens: 2, reasoningTokens: 0 } },
  ]);
  const manifests = responsesChatManifests(await deadBaseURL(), {
    'extra-chat': [['chatCompletions', chat.baseURL]],
    'extra-mixed': [
      ['openai', native.baseURL],
      ['chatCompletions', chat.baseURL],
    ],
  });
  gw = await startGateway(`${manifests}---\n${keyManifests(BOB_KEY, ['extra-chat'], { group: 'bob-team', token: 'bob' })}`);
});

afterAll(async () => {
  await gw?.close();
  await Promise.all([chat?.close(), native?.close()]);
});

const client = (apiKey = ALICE_KEY) => new OpenAI({ apiKey, baseURL: gw.baseURL, maxRetries: 0, timeout: 10_000 });
const CALL = { id: 'call_weather_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } };
const TOOL_OUTPUT = { type: 'function_call_output' as const, call_id: 'call_weather_1', output: '{"forecast":"sunny"}' };

describe('previous_response_id on a route served through chat completions', () => {
  for (const stream of [false, true]) {
    it(`three turns, ${stream ? 'streamed' : 'whole'}: each continues the last; the backend gets the whole conversation, not earlier instructions`, async () => {
      const create = (body: Omit<OpenAI.Responses.ResponseCreateParamsNonStreaming, 'stream'>) =>
        stream ? client().responses.stream(body).finalResponse() : client().responses.create(body);
      const first = await create({ model: 'extra-chat', instructions: 'Be brief.', input: 'Weather in Paris?', tools: [WEATHER_TOOL] });
      expect(first.output.map((i) => i.type)).toEqual(['function_call']);
      expect(chat.requests.at(-1)!.body!['messages'][0]).toEqual({ role: 'system', content: 'Be brief.' });

      const second = await create({ model: 'extra-chat', previous_response_id: first.id, input: [TOOL_OUTPUT], tools: [WEATHER_TOOL] });
      expect(second.output_text).toBe(ANSWER);
      expect(second.previous_response_id).toBe(first.id);
      expect(chat.requests.at(-1)!.body!['messages']).toEqual([
        { role: 'user', content: 'Weather in Paris?' },
        { role: 'assistant', content: null, tool_calls: [CALL] },
        { role: 'tool', tool_call_id: 'call_weather_1', content: '{"forecast":"sunny"}' },
      ]);

      const third = await create({ model: 'extra-chat', previous_response_id: second.id, input: 'Thanks!' });
      expect(third.output_text).toBe(THANKS);
      expect(chat.requests.at(-1)!.body!['messages']).toEqual([
        { role: 'user', content: 'Weather in Paris?' },
        { role: 'assistant', content: null, tool_calls: [CALL] },
        { role: 'tool', tool_call_id: 'call_weather_1', content: '{"forecast":"sunny"}' },
        { role: 'assistant', content: ANSWER },
        { role: 'user', content: 'Thanks!' },
      ]);
    });
  }

  it('another key’s response: 404 in OpenAI’s shape, the backend not asked', async () => {
    const first = await client().responses.create({ model: 'extra-chat', input: 'Weather in Paris?', tools: [WEATHER_TOOL] });
    const asked = chat.requests.length;
    const run = client(BOB_KEY).responses.create({ model: 'extra-chat', previous_response_id: first.id, input: [TOOL_OUTPUT] });
    await expect(run).rejects.toMatchObject({ status: 404, error: { type: 'invalid_request_error', code: 'not_found', param: 'previous_response_id' } });
    expect(chat.requests.length).toBe(asked);
  });

  it('on a route with a Responses backend too: a response the gateway kept is continued by the translated backend only', async () => {
    // The Responses backend is first in line, but only the chat backend can continue what the gateway kept.
    const first = await client().responses.create({ model: 'extra-chat', input: 'Weather in Paris?', tools: [WEATHER_TOOL] });
    const asked = native.requests.length;
    const second = await client().responses.create({ model: 'extra-mixed', previous_response_id: first.id, input: [TOOL_OUTPUT], tools: [WEATHER_TOOL] });
    expect(second.output_text).toBe(ANSWER);
    expect(native.requests.length).toBe(asked);
  });

  it('on that route, a response its Responses backend stored (a sealed id) is continued there, unsealed', async () => {
    const first = await client().responses.create({ model: 'extra-mixed', input: 'hi' });
    expect(first.output_text).toBe('native answer');
    const chatAsked = chat.requests.length;
    const second = await client().responses.create({ model: 'extra-mixed', previous_response_id: first.id, input: 'more' });
    expect(second.output_text).toBe('native again');
    expect(native.requests.at(-1)!.body!['previous_response_id']).toMatch(/^resp_/);
    expect(native.requests.at(-1)!.body!['previous_response_id']).not.toBe(first.id);
    expect(chat.requests.length).toBe(chatAsked);
  });
});
