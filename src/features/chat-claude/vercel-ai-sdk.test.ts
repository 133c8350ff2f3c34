// The translation judged by the Vercel AI SDK's OpenAI chat provider, whose zod schemas check every answer and
// chunk: the whole answer and the stream of the same Messages answer give the same text, tool calls and usage.
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, jsonSchema, streamText, tool } from 'ai';
import { describe, expect, it } from 'vitest';
import { MessagesStreamToChat } from './messages-stream-to-chat.js';
import { messagesToCompletion } from './messages-to-completion.js';
import { testContext as ctx } from './test-context.js';
import { answerOf, eventsOf } from './test-events.js';

function model(body: string, contentType: string) {
  const fetch = async () => new Response(body, { status: 200, headers: { 'content-type': contentType } });
  return createOpenAI({ apiKey: 'k', baseURL: 'http://judge.invalid/v1', fetch }).chat('claude-public');
}

const ANSWER = answerOf(
  [
    { type: 'text', text: 'On it.' },
    { type: 'tool_use', id: 'toolu_01A', name: 'get_weather', input: { city: 'Paris' } },
  ],
  'tool_use',
  { input_tokens: 10, cache_read_input_tokens: 1000, cache_creation_input_tokens: 200, output_tokens: 30 },
);
const tools = { get_weather: tool({ inputSchema: jsonSchema<{ city: string }>({ type: 'object', properties: { city: { type: 'string' } } }) }) };

describe('the translation judged by the Vercel AI SDK', () => {
  it('generateText reads the whole completion: text, the tool call with its toolu_ id, usage with cache reads', async () => {
    const body = JSON.stringify(messagesToCompletion(ANSWER, ctx).completion);
    const r = await generateText({ model: model(body, 'application/json'), prompt: 'x', tools, maxRetries: 0 });
    expect(r.text).toBe('On it.');
    expect(r.toolCalls.map((c) => [c.toolCallId, c.toolName, c.input])).toEqual([['toolu_01A', 'get_weather', { city: 'Paris' }]]);
    expect(r.finishReason).toBe('tool-calls');
    expect(r.usage.inputTokens).toBe(1210);
    expect(r.usage.outputTokens).toBe(30);
    expect(r.usage.inputTokenDetails?.cacheReadTokens).toBe(1000);
  });

  it('streamText reads the stream: every chunk parses, the same text, tool call and usage', async () => {
    const t = new MessagesStreamToChat(ctx);
    const body =
      eventsOf(ANSWER)
        .map(([n, d]) => t.push(d, n))
        .join('') + t.end().events;
    const errors: unknown[] = [];
    const r = streamText({ model: model(body, 'text/event-stream'), prompt: 'x', tools, maxRetries: 0, onError: ({ error }) => void errors.push(error) });
    expect(await r.text).toBe('On it.');
    expect((await r.toolCalls).map((c) => [c.toolCallId, c.toolName, c.input])).toEqual([['toolu_01A', 'get_weather', { city: 'Paris' }]]);
    expect(await r.finishReason).toBe('tool-calls');
    expect((await r.usage).inputTokens).toBe(1210);
    expect(errors).toEqual([]);
  });
});
