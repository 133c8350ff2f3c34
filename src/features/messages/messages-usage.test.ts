import type Anthropic from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { judge } from '../../../test/support/anthropic-sdk-judge.js';
import { messagesAnswerUsage, messagesReservedOutputTokens, NativeStreamUsage } from './messages-usage.js';

const bytesOf = (answer: unknown): Buffer => Buffer.from(JSON.stringify(answer));

describe('messagesAnswerUsage', () => {
  it('counts all input (uncached + cache read + cache write), cache reads as cached, cache writes apart', () => {
    const answer = {
      id: 'msg_1',
      type: 'message',
      role: 'assistant',
      model: 'claude',
      content: [{ type: 'text', text: 'hi' }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: {
        input_tokens: 12,
        cache_read_input_tokens: 3000,
        cache_creation_input_tokens: 500,
        output_tokens: 40,
        output_tokens_details: { thinking_tokens: 25 },
      },
    };
    expect(messagesAnswerUsage(bytesOf(answer))).toEqual({
      inputTokens: 3512,
      cachedInputTokens: 3000,
      cacheWriteInputTokens: 500,
      outputTokens: 40,
      reasoningTokens: 25,
      estimated: false,
    });
  });

  it('takes the cache writes for an hour from the cache_creation split, which the 1-hour price applies to', () => {
    const usage = {
      input_tokens: 10,
      cache_creation_input_tokens: 1500,
      cache_creation: { ephemeral_5m_input_tokens: 1000, ephemeral_1h_input_tokens: 500 },
      cache_read_input_tokens: 8000,
      output_tokens: 7,
    };
    expect(messagesAnswerUsage(bytesOf({ type: 'message', usage }))).toEqual({
      inputTokens: 9510,
      cachedInputTokens: 8000,
      cacheWriteInputTokens: 1500,
      cacheWrite1hInputTokens: 500,
      outputTokens: 7,
      reasoningTokens: 0,
      estimated: false,
    });
  });

  it('treats absent and null cache counts as 0, and an answer without usage as unreported', () => {
    expect(messagesAnswerUsage(bytesOf({ usage: { input_tokens: 5, output_tokens: 1, cache_read_input_tokens: null } }))).toEqual({
      inputTokens: 5,
      cachedInputTokens: 0,
      cacheWriteInputTokens: 0,
      outputTokens: 1,
      reasoningTokens: 0,
      estimated: false,
    });
    expect(messagesAnswerUsage(bytesOf({ type: 'message' }))).toBeUndefined();
    expect(messagesAnswerUsage(bytesOf(null))).toBeUndefined();
    expect(messagesAnswerUsage(Buffer.alloc(0))).toBeUndefined();
  });

  // The answer's top-level usage, as parsing the whole answer reads it, whether usage is the last member (read
  // alone from the end) or not (the whole answer parsed), and whatever "usage" the content quotes.
  const toolInput = { usage: { input_tokens: 999, output_tokens: 999 }, note: '"usage":{"input_tokens":7}' };
  const answers: Record<string, string> = {
    'usage last': JSON.stringify({ content: [{ type: 'tool_use', input: toolInput }], usage: { input_tokens: 3, output_tokens: 4 } }),
    'usage first, content quoting usage after it': JSON.stringify({
      usage: { input_tokens: 3, output_tokens: 4 },
      content: [{ type: 'tool_use', input: toolInput }],
    }),
    'pretty-printed, trailing newline': `${JSON.stringify({ content: [], usage: { input_tokens: 3, output_tokens: 4 } }, null, 2)}\n`,
    'duplicate usage members (the last counts)': '{"usage":{"input_tokens":1,"output_tokens":1},"content":[],"usage":{"input_tokens":3,"output_tokens":4}}',
    'a nested usage inside the last usage': '{"content":[],"usage":{"input_tokens":3,"output_tokens":4,"x":{"usage":{"input_tokens":9}}}}',
    'text ending with an escaped usage, no usage of its own': JSON.stringify({ content: [{ type: 'text', text: 'x "usage":{"input_tokens":8}' }] }),
    'a last member whose key only ends in usage': JSON.stringify({ content: [], '"usage': { input_tokens: 5, output_tokens: 5 } }),
    'usage null': '{"content":[],"usage":null}',
    'not JSON': '{"content":[,"usage":{"input_tokens":3}',
  };
  for (const [name, text] of Object.entries(answers)) {
    it(`reads what the whole answer's JSON.parse reads: ${name}`, () => {
      let expected: ReturnType<typeof messagesAnswerUsage>;
      try {
        const usage = (JSON.parse(text) as { usage?: unknown } | null)?.usage;
        const counts = new NativeStreamUsage();
        counts.observe({ type: 'message_start', message: { usage } });
        expected = counts.usage();
      } catch {
        expected = undefined;
      }
      expect(messagesAnswerUsage(Buffer.from(text))).toEqual(expected);
    });
  }

  it('takes the usage of an answer that is not JSON but ends with a usage member that is', () => {
    expect(messagesAnswerUsage(Buffer.from('{"content":[,"usage":{"input_tokens":3,"output_tokens":4}}'))).toMatchObject({ inputTokens: 3, outputTokens: 4 });
  });
});

describe('NativeStreamUsage', () => {
  // A native stream as Anthropic sends it: message_start with the input counts, message_delta with running totals.
  const events = [
    {
      type: 'message_start',
      message: {
        id: 'msg_n',
        type: 'message',
        role: 'assistant',
        model: 'claude',
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 20, cache_creation_input_tokens: 100, cache_read_input_tokens: 2000, output_tokens: 1 },
      },
    },
    { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
    { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hi' } },
    { type: 'content_block_stop', index: 0 },
    { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 15 } },
    { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 31, input_tokens: 22 } },
    { type: 'message_stop' },
  ];

  it('reads message_start and message_delta as the SDK does: later totals replace earlier ones', async () => {
    const counts = new NativeStreamUsage();
    expect(counts.usage()).toBeUndefined();
    for (const e of events) counts.observe(e);
    const usage = counts.usage();
    expect(usage).toEqual({ inputTokens: 2122, cachedInputTokens: 2000, cacheWriteInputTokens: 100, outputTokens: 31, reasoningTokens: 0, estimated: false });

    // The SDK's own assembly of the same stream agrees on every count.
    const bytes = events.map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join('');
    const { client } = judge(bytes, { stream: true });
    const final: Anthropic.Message = await client.messages
      .stream({ model: 'claude', max_tokens: 50, messages: [{ role: 'user', content: 'x' }] })
      .finalMessage();
    expect(final.usage.input_tokens + (final.usage.cache_read_input_tokens ?? 0) + (final.usage.cache_creation_input_tokens ?? 0)).toBe(usage!.inputTokens);
    expect(final.usage.cache_read_input_tokens).toBe(usage!.cachedInputTokens);
    expect(final.usage.cache_creation_input_tokens).toBe(usage!.cacheWriteInputTokens);
    expect(final.usage.output_tokens).toBe(usage!.outputTokens);
  });

  it('keeps the 1-hour cache writes of message_start when message_delta repeats the counts without the split', () => {
    const counts = new NativeStreamUsage();
    const usage = { input_tokens: 4, cache_creation_input_tokens: 300, cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 300 } };
    counts.observe({ type: 'message_start', message: { usage: { ...usage, output_tokens: 1 } } });
    counts.observe({ type: 'message_delta', usage: { input_tokens: 4, cache_creation_input_tokens: 300, output_tokens: 12 } });
    expect(counts.usage()).toMatchObject({ inputTokens: 304, cacheWriteInputTokens: 300, cacheWrite1hInputTokens: 300, outputTokens: 12 });
  });

  it('counts the searches and fetches of usage.server_tool_use, the last total winning', () => {
    const counts = new NativeStreamUsage();
    counts.observe({ type: 'message_start', message: { usage: { input_tokens: 9, output_tokens: 1, server_tool_use: { web_search_requests: 0 } } } });
    counts.observe({ type: 'message_delta', usage: { output_tokens: 20, server_tool_use: { web_search_requests: 2, web_fetch_requests: 1 } } });
    expect(counts.usage()).toMatchObject({ inputTokens: 9, outputTokens: 20, serverToolCalls: { webSearch: 2, webFetch: 1 } });
    expect(messagesAnswerUsage(bytesOf({ usage: { input_tokens: 3, output_tokens: 1, server_tool_use: { web_search_requests: 0 } } }))).not.toHaveProperty(
      'serverToolCalls',
    );
  });

  it('counts what it saw when the stream was cut after message_start', () => {
    const counts = new NativeStreamUsage();
    counts.observe(events[0]);
    counts.observe({ type: 'ping' });
    expect(counts.usage()).toMatchObject({ inputTokens: 2120, outputTokens: 1 });
  });
});

describe('messagesReservedOutputTokens', () => {
  it('is max_tokens, or undefined when a request has no usable one', () => {
    expect(messagesReservedOutputTokens({ model: 'm', max_tokens: 8192, messages: [] })).toBe(8192);
    for (const bad of [{}, { max_tokens: 0 }, { max_tokens: 1.5 }, { max_tokens: '10' }, null]) expect(messagesReservedOutputTokens(bad)).toBeUndefined();
  });
});
