// The openai SDK's chat completion streams through the gateway to an anthropic backend: the fake Anthropic API
// streams Messages events (tool input in input_json_delta pieces), the SDK's stream helpers assemble chat chunks
// (content events, the final completion with its tool calls, the usage chunk the client asked for), and the usage
// recorded is what message_start and message_delta reported. A stream the backend cuts ends as the gateway ends any
// chat stream it cannot finish: an error event, which makes the SDK throw.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AnthropicUpstream, startAnthropicUpstream } from '../fakes/anthropic-upstream.js';
import { ALICE_KEY, deadBaseURL, startGateway, type TestGateway } from '../helpers/gateway.js';
import { chatClaudeManifests } from './manifests.js';
import { claudeTurns, QUESTION, recordedClaude, WEATHER_TOOL } from './weather-claude.js';

let claude: AnthropicUpstream;
let cut: AnthropicUpstream;
let gw: TestGateway;
let client: OpenAI;

beforeAll(async () => {
  claude = await startAnthropicUpstream(claudeTurns);
  cut = await startAnthropicUpstream([{ ...claudeTurns[1]!, cut: true }]);
  gw = await startGateway(
    chatClaudeManifests(await deadBaseURL(), { 'extra-claude': [['anthropic', claude.baseURL]], 'extra-cut': [['anthropic', cut.baseURL]] }),
  );
  client = new OpenAI({ apiKey: ALICE_KEY, baseURL: gw.baseURL, maxRetries: 0, timeout: 10_000 });
});

afterAll(async () => {
  await gw?.close();
  await Promise.all([claude, cut].map((u) => u?.close()));
});

describe('chat completion streams on an anthropic backend', () => {
  it('a streamed tool round trip with the SDK helpers; the usage chunk when asked; the reported usage recorded', async () => {
    const stream = client.chat.completions.stream({
      model: 'extra-claude',
      messages: QUESTION,
      tools: [WEATHER_TOOL],
      stream_options: { include_usage: true },
    });
    let text = '';
    stream.on('content', (delta) => {
      text += delta;
    });
    const first = await stream.finalChatCompletion();
    const sent = claude.requests.at(-1)!;
    expect(sent.body).toMatchObject({ stream: true, max_tokens: 4096, system: 'Be brief.' });
    expect(sent.body!['stream_options']).toBeUndefined();
    expect(text).toBe('Let me check.');
    expect(first.id).toMatch(/^chatcmpl-[0-9a-f]{24}$/);
    expect(first.choices[0]!.finish_reason).toBe('tool_calls');
    const call = first.choices[0]!.message.tool_calls![0]!;
    expect(call).toMatchObject({ id: 'toolu_weather_1', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } });
    expect(first.usage).toMatchObject({ prompt_tokens: 168, completion_tokens: 30, prompt_tokens_details: { cached_tokens: 40 } });
    expect(await gw.record(String(sent.headers['x-request-id']))).toMatchObject({ status: 200, family: 'chat.completions', ...recordedClaude(0) });

    // Without include_usage the client gets no usage chunk, and the gateway still records the reported usage.
    const chunks: OpenAI.ChatCompletionChunk[] = [];
    const second = await client.chat.completions.create({
      model: 'extra-claude',
      stream: true,
      messages: [...QUESTION, first.choices[0]!.message, { role: 'tool', tool_call_id: call.id, content: '18°C, sunny' }],
      tools: [WEATHER_TOOL],
    });
    for await (const c of second) chunks.push(c);
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe('It is 18°C and sunny in Paris.');
    expect(chunks.at(-1)!.choices[0]!.finish_reason).toBe('stop');
    expect(chunks.some((c) => c.usage)).toBe(false);
    const again = claude.requests.at(-1)!;
    expect(again.body!['messages'].at(-1)).toEqual({
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: 'toolu_weather_1', content: '18°C, sunny' }],
    });
    expect(await gw.record(String(again.headers['x-request-id']))).toMatchObject({ status: 200, ...recordedClaude(1) });
  });

  it('a stream the backend cuts ends with an error event: the SDK throws, the input counts message_start reported are kept', async () => {
    const stream = client.chat.completions.stream({ model: 'extra-cut', messages: QUESTION });
    await expect(stream.finalChatCompletion()).rejects.toThrow();
    const sent = cut.requests.at(-1)!;
    const rec = await gw.record(String(sent.headers['x-request-id']));
    const u = claudeTurns[1]!.usage;
    expect(rec).toMatchObject({ inputTokens: u.input_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens, estimated: true });
  });
});
