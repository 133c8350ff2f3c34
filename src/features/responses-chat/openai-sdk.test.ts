// The translation judged by the openai SDK itself: the streamed answer, read by client.responses.stream(), must
// rebuild the whole-answer translation of the same completion; and a cut stream must fail in the SDK rather than
// finish.
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { ChatStreamToResponses } from './chat-stream-to-responses.js';
import { chatToResponse } from './chat-to-response.js';
import { testContext as ctx } from './test-context.js';

type Data = Record<string, unknown>;

/** A client whose every request is answered with `body` as `contentType`. */
function client(body: string, contentType: string): OpenAI {
  const fetch = async () => new Response(body, { status: 200, headers: { 'content-type': contentType } });
  return new OpenAI({ apiKey: 'k', baseURL: 'http://judge.invalid/v1', maxRetries: 0, fetch });
}

const REQUEST = { model: 'public-model', input: 'hi' } as const;

/** The stream a chat backend would send for `message`: each string member in two deltas, each tool call in pieces. */
function chunksOf(message: Data, finish: string, usage: Data | undefined): Data[] {
  const chunk = (delta: Data, finish_reason: string | null = null) => ({ object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason }] });
  const halves = (s: string) => [s.slice(0, Math.ceil(s.length / 2)), s.slice(Math.ceil(s.length / 2))];
  const out: Data[] = [chunk({ role: 'assistant' })];
  for (const key of ['reasoning_content', 'content', 'refusal']) {
    if (typeof message[key] === 'string') for (const half of halves(message[key])) out.push(chunk({ [key]: half }));
  }
  const calls = (message['tool_calls'] ?? []) as { id: string; function: { name: string; arguments: string } }[];
  calls.forEach((c, index) => {
    const [a, b] = halves(c.function.arguments);
    out.push(chunk({ tool_calls: [{ index, id: c.id, type: 'function', function: { name: c.function.name, arguments: a } }] }));
    out.push(chunk({ tool_calls: [{ index, function: { arguments: b } }] }));
  });
  out.push(chunk({}, finish));
  if (usage) out.push({ object: 'chat.completion.chunk', choices: [], usage });
  return out;
}

/** Members the SDK adds itself (output_text, and the parsed forms of text.format and strict tools); the translation has none. */
const SDK_ADDED = new Set(['output_text', 'output_parsed', 'parsed', 'parsed_arguments']);

function withoutSdkAdditions(r: OpenAI.Responses.Response): unknown {
  return JSON.parse(JSON.stringify(r, (key, value: unknown) => (SDK_ADDED.has(key) ? undefined : value)));
}

function sse(chunks: unknown[]): string {
  const t = new ChatStreamToResponses(ctx);
  return chunks.map((c) => t.push(c)).join('') + t.end().events;
}

const USAGE = { prompt_tokens: 50, completion_tokens: 20, total_tokens: 70, completion_tokens_details: { reasoning_tokens: 8 } };

const CASES: [string, Data, string, Data | undefined][] = [
  ['text', { content: 'Hello there.' }, 'stop', USAGE],
  ['reasoning then text', { reasoning_content: 'Let me think.', content: 'Forty-two.' }, 'stop', USAGE],
  [
    'text, a function call and a custom tool call',
    {
      content: 'On it.',
      tool_calls: [
        { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
        { id: 'call_2', type: 'function', function: { name: 'apply_patch', arguments: '{"input":"*** Begin Patch\\n*** End Patch\\n"}' } },
      ],
    },
    'tool_calls',
    USAGE,
  ],
  ['a refusal', { refusal: 'I cannot help with that.' }, 'stop', undefined],
  ['a length cut', { content: 'Half a sen' }, 'length', USAGE],
];

describe('the translation judged by the openai SDK', () => {
  for (const [name, message, finish, usage] of CASES) {
    it(`${name}: the streamed final response equals the whole answer`, async () => {
      const completion = {
        id: 'chatcmpl-1',
        object: 'chat.completion',
        choices: [{ index: 0, message: { role: 'assistant', ...message }, finish_reason: finish }],
        usage,
      };
      const whole = chatToResponse(completion, ctx).response;
      const stream = client(sse(chunksOf(message, finish, usage)), 'text/event-stream').responses.stream(REQUEST);
      const types: string[] = [];
      stream.on('event', (e) => types.push(e.type));
      const streamed = await stream.finalResponse();
      expect(withoutSdkAdditions(streamed)).toEqual(whole);
      expect(types.at(-1)).toBe(finish === 'length' ? 'response.incomplete' : 'response.completed');
      expect(whole.output.length).toBeGreaterThan(0);
    });
  }

  it('two interleaved tool calls rebuild in order', async () => {
    const chunk = (tool_calls: unknown[] | undefined, finish_reason: string | null = null) => ({
      choices: [{ index: 0, delta: tool_calls ? { tool_calls } : {}, finish_reason }],
    });
    const text = sse([
      chunk([{ index: 0, id: 'call_a', function: { name: 'a', arguments: '{"x"' } }]),
      chunk([{ index: 1, id: 'call_b', function: { name: 'b', arguments: '{"y"' } }]),
      chunk([{ index: 1, function: { arguments: ':2}' } }]),
      chunk([{ index: 0, function: { arguments: ':1}' } }]),
      chunk(undefined, 'tool_calls'),
    ]);
    const r = await client(text, 'text/event-stream').responses.stream(REQUEST).finalResponse();
    expect(r.output.map((i) => (i.type === 'function_call' ? [i.call_id, i.name, i.arguments] : i.type))).toEqual([
      ['call_a', 'a', '{"x":1}'],
      ['call_b', 'b', '{"y":2}'],
    ]);
    expect(r.usage).toBeNull();
  });

  it('a cut stream fails in the SDK with the error event instead of finishing', async () => {
    const text = sse([{ choices: [{ index: 0, delta: { content: 'Half an ans' }, finish_reason: null }] }]);
    const err = await client(text, 'text/event-stream')
      .responses.stream(REQUEST)
      .finalResponse()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect((err as InstanceType<typeof OpenAI.APIError>).message).toContain('The upstream stream ended before the answer was finished.');
  });
});
