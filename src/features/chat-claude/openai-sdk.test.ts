// The translation judged by the openai SDK itself: the streamed answer, read by client.chat.completions.stream(),
// must rebuild the whole-answer translation of the same Messages answer; a cut stream must make the SDK throw.
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { MessagesStreamToChat } from './messages-stream-to-chat.js';
import { messagesToCompletion } from './messages-to-completion.js';
import { testContext as ctx } from './test-context.js';
import { answerOf, type Event, eventsOf } from './test-events.js';

type Data = Record<string, unknown>;

/** A client whose every request is answered with `body` as an event stream. */
function client(body: string): OpenAI {
  const fetch = async () => new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream' } });
  return new OpenAI({ apiKey: 'k', baseURL: 'http://judge.invalid/v1', maxRetries: 0, fetch });
}

const REQUEST = { model: 'claude-public', messages: [{ role: 'user' as const, content: 'hi' }], stream_options: { include_usage: true } };

function sse(events: Event[]): string {
  const t = new MessagesStreamToChat(ctx);
  return events.map(([name, data]) => t.push(data, name)).join('') + t.end().events;
}

const CACHED = { input_tokens: 10, cache_read_input_tokens: 1000, cache_creation_input_tokens: 200, output_tokens: 30 };

const CASES: [string, Data][] = [
  ['text', answerOf([{ type: 'text', text: 'Hello there.' }], 'end_turn')],
  [
    'thinking then text',
    answerOf(
      [
        { type: 'thinking', thinking: 'Six by seven.', signature: 'sig' },
        { type: 'text', text: 'Forty-two.' },
      ],
      'end_turn',
    ),
  ],
  [
    'text then two tool calls',
    answerOf(
      [
        { type: 'text', text: 'On it.' },
        { type: 'tool_use', id: 'toolu_01A', name: 'get_weather', input: { city: 'Paris', days: [1, 2] } },
        { type: 'tool_use', id: 'toolu_01B', name: 'get_time', input: {} },
      ],
      'tool_use',
    ),
  ],
  ['tool calls only', answerOf([{ type: 'tool_use', id: 'toolu_01C', name: 'get_time', input: { tz: 'UTC' } }], 'tool_use')],
  ['a max_tokens cut', answerOf([{ type: 'text', text: 'Half a sen' }], 'max_tokens')],
  ['usage with cache reads and writes', answerOf([{ type: 'text', text: 'Cached.' }], 'end_turn', CACHED)],
];

describe('the translation judged by the openai SDK', () => {
  for (const [name, answer] of CASES) {
    it(`${name}: finalChatCompletion equals the whole answer's translation`, async () => {
      const { completion: whole } = messagesToCompletion(answer, ctx);
      const stream = client(sse(eventsOf(answer))).chat.completions.stream(REQUEST);
      let reasoning = '';
      stream.on('chunk', (c) => {
        const piece = (c.choices[0]?.delta as Data | undefined)?.['reasoning_content'];
        if (typeof piece === 'string') reasoning += piece;
      });
      const final = (await stream.finalChatCompletion()) as unknown as Data;
      const message = (final['choices'] as Data[])[0]!['message'] as Data;
      // The SDK keeps only the last piece of a member it does not know (reasoning_content): the chunks carry it whole.
      expect(reasoning).toBe(whole.choices[0].message.reasoning_content ?? '');
      delete message['reasoning_content'];
      // `parsed` is the SDK's own (for `.parse`).
      delete message['parsed'];
      // The first delta's `content: ""` (as OpenAI streams it) leaves "" where the whole answer says null.
      if (whole.choices[0].message.content === null) expect(message['content']).toBe('');
      const expected = structuredClone(whole) as unknown as Data;
      const expectedMessage = (expected['choices'] as Data[])[0]!['message'] as Data;
      delete expectedMessage['reasoning_content'];
      // The chunks carry no annotations (the first delta is role and content only), so the SDK builds none.
      expect(expectedMessage['annotations']).toEqual([]);
      expect(message).not.toHaveProperty('annotations');
      delete expectedMessage['annotations'];
      if (expectedMessage['content'] === null) expectedMessage['content'] = '';
      expect(JSON.parse(JSON.stringify(final))).toEqual(expected);
    });
  }

  it('a stream cut before the end makes the SDK throw', async () => {
    const events = eventsOf(answerOf([{ type: 'text', text: 'Hello there.' }], 'end_turn'));
    const stream = client(sse(events.slice(0, -1))).chat.completions.stream(REQUEST);
    await expect(stream.finalChatCompletion()).rejects.toThrow('The upstream stream ended before the answer was finished.');
  });

  it('an error event makes the SDK throw with the upstream message', async () => {
    const events = eventsOf(answerOf([{ type: 'text', text: 'Hello there.' }], 'end_turn')).slice(0, 4);
    events.push(['error', { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }]);
    const stream = client(sse(events)).chat.completions.stream(REQUEST);
    await expect(stream.finalChatCompletion()).rejects.toThrow('Overloaded');
  });
});
