// The openai SDK's Responses API through the gateway to an anthropic backend: the request goes to the fake
// Anthropic API as a Messages request (through chat), and its answer, whole or streamed, comes back as a Response
// with the function call's toolu_ id as its call_id, which the client sends back in function_call_output. The usage
// recorded is what the backend reported (cache reads and writes included); a retrieve of the minted id answers the
// Response the gateway kept, a previous_response_id naming it continues the conversation;
// a stream the backend cuts ends with the Responses error event, which makes the SDK throw.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AnthropicUpstream, startAnthropicUpstream } from '../fakes/anthropic-upstream.js';
import { ALICE_KEY, deadBaseURL, startGateway, type TestGateway } from '../helpers/gateway.js';
import { chatClaudeManifests } from '../chat-claude/manifests.js';
import { claudeTurns, recordedClaude } from '../chat-claude/weather-claude.js';

const WEATHER: OpenAI.Responses.FunctionTool = {
  type: 'function',
  name: 'get_weather',
  description: 'The weather in a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  strict: false,
};
const ASK = { instructions: 'Be brief.', input: 'What is the weather in Paris?', tools: [WEATHER] };

let claude: AnthropicUpstream;
let cut: AnthropicUpstream;
let gw: TestGateway;
let client: OpenAI;

beforeAll(async () => {
  claude = await startAnthropicUpstream(claudeTurns);
  cut = await startAnthropicUpstream([{ ...claudeTurns[1]!, cut: true }]);
  const routes = { 'extra-claude': [['anthropic', claude.baseURL]], 'extra-cut': [['anthropic', cut.baseURL]] } as const;
  gw = await startGateway(chatClaudeManifests(await deadBaseURL(), routes, undefined, ['responses']));
  client = new OpenAI({ apiKey: ALICE_KEY, baseURL: gw.baseURL, maxRetries: 0, timeout: 10_000 });
});

afterAll(async () => {
  await gw?.close();
  await Promise.all([claude, cut].map((u) => u?.close()));
});

/** The Responses input of the second turn: the question, the first answer's items, and the call's output. */
function followUp(first: OpenAI.Responses.Response): OpenAI.Responses.ResponseInput {
  const call = first.output.find((o) => o.type === 'function_call')!;
  return [
    { role: 'user', content: ASK.input },
    ...(first.output as OpenAI.Responses.ResponseInputItem[]),
    { type: 'function_call_output', call_id: call.call_id, output: '18°C, sunny' },
  ];
}

describe('the Responses API on an anthropic backend', () => {
  it('responses.create: a function tool round trip on the toolu_ id, the usage as reported and recorded; retrieve from what the gateway kept', async () => {
    const first = await client.responses.create({ model: 'extra-claude', ...ASK });
    const sent = claude.requests.at(-1)!;
    expect(sent.path).toBe('/v1/messages');
    expect(sent.body).toMatchObject({ model: 'upstream-claude', system: 'Be brief.', max_tokens: 4096, messages: [{ role: 'user' }] });
    expect(sent.body!['tools']).toEqual([{ name: 'get_weather', description: 'The weather in a city', input_schema: WEATHER.parameters }]);
    expect(first.id).toMatch(/^resp_[0-9a-f]{32}$/);
    expect(first.status).toBe('completed');
    expect(first.output_text).toBe('Let me check.');
    const call = first.output.find((o) => o.type === 'function_call')!;
    expect(call).toMatchObject({ call_id: 'toolu_weather_1', name: 'get_weather', arguments: '{"city":"Paris"}' });
    expect(first.usage).toMatchObject({ input_tokens: 168, output_tokens: 30, input_tokens_details: { cached_tokens: 40, cache_write_tokens: 8 } });
    expect(await gw.record(String(sent.headers['x-request-id']))).toMatchObject({ status: 200, family: 'responses', ...recordedClaude(0) });

    const second = await client.responses.create({ model: 'extra-claude', ...ASK, input: followUp(first) });
    const again = claude.requests.at(-1)!;
    expect(again.body!['messages'].at(-1)).toEqual({
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: 'toolu_weather_1', content: '18°C, sunny' }],
    });
    expect(second.output_text).toBe('It is 18°C and sunny in Paris.');
    expect(await gw.record(String(again.headers['x-request-id']))).toMatchObject({ status: 200, ...recordedClaude(1) });

    const asked = claude.requests.length;
    expect(await client.responses.retrieve(second.id)).toEqual(JSON.parse(JSON.stringify(second)));
    expect(claude.requests.length).toBe(asked);
  });

  it('previous_response_id: the second turn continues the first, which the gateway kept; Claude gets the whole conversation', async () => {
    const first = await client.responses.stream({ model: 'extra-claude', ...ASK }).finalResponse();
    const second = await client.responses.create({
      model: 'extra-claude',
      instructions: ASK.instructions,
      tools: ASK.tools,
      previous_response_id: first.id,
      input: [{ type: 'function_call_output', call_id: 'toolu_weather_1', output: '18°C, sunny' }],
    });
    expect(second.output_text).toBe('It is 18°C and sunny in Paris.');
    expect(second.previous_response_id).toBe(first.id);
    expect(claude.requests.at(-1)!.body!['messages']).toEqual([
      { role: 'user', content: [{ type: 'text', text: ASK.input }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Let me check.' },
          { type: 'tool_use', id: 'toolu_weather_1', name: 'get_weather', input: { city: 'Paris' } },
        ],
      },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_weather_1', content: '18°C, sunny' }] },
    ]);
  });

  it('responses.stream: text deltas, the function call, the final Response with the usage as reported and recorded', async () => {
    const stream = client.responses.stream({ model: 'extra-claude', ...ASK });
    let text = '';
    stream.on('response.output_text.delta', (e) => {
      text += e.delta;
    });
    const first = await stream.finalResponse();
    const sent = claude.requests.at(-1)!;
    expect(sent.body).toMatchObject({ stream: true });
    expect(text).toBe('Let me check.');
    expect(first.output.find((o) => o.type === 'function_call')).toMatchObject({ call_id: 'toolu_weather_1', arguments: '{"city":"Paris"}' });
    expect(first.usage).toMatchObject({ input_tokens: 168, output_tokens: 30, input_tokens_details: { cached_tokens: 40, cache_write_tokens: 8 } });
    expect(await gw.record(String(sent.headers['x-request-id']))).toMatchObject({ status: 200, family: 'responses', ...recordedClaude(0) });

    const second = await client.responses.stream({ model: 'extra-claude', ...ASK, input: followUp(first) }).finalResponse();
    expect(second.output_text).toBe('It is 18°C and sunny in Paris.');
    expect(second.status).toBe('completed');
    expect(await gw.record(String(claude.requests.at(-1)!.headers['x-request-id']))).toMatchObject({ status: 200, ...recordedClaude(1) });
  });

  it('a stream the backend cuts ends with an error event: the SDK throws, the input counts message_start reported are kept', async () => {
    const stream = client.responses.stream({ model: 'extra-cut', input: 'Hello' });
    await expect(stream.finalResponse()).rejects.toThrow();
    const rec = await gw.record(String(cut.requests.at(-1)!.headers['x-request-id']));
    const u = claudeTurns[1]!.usage;
    expect(rec).toMatchObject({ inputTokens: u.input_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens, estimated: true });
  });
});
