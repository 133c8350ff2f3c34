import type { ChatCompletion } from 'openai/resources/chat/completions';
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../model/errors.js';
import { messagesToCompletion, NotAMessagesAnswer } from './messages-to-completion.js';
import { testContext as ctx } from './test-context.js';

const USAGE = { input_tokens: 12, output_tokens: 7, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };

function answer(content: unknown[], stop_reason: string | null = 'end_turn', usage: unknown = USAGE): Record<string, unknown> {
  return { id: 'msg_01', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', content, stop_reason, stop_sequence: null, usage };
}

const CHAT_USAGE = {
  prompt_tokens: 12,
  completion_tokens: 7,
  total_tokens: 19,
  prompt_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 },
  completion_tokens_details: { reasoning_tokens: 0 },
};

describe('messagesToCompletion', () => {
  it('a text answer: the whole completion, typed by the openai SDK', () => {
    const { completion, usage } = messagesToCompletion(answer([{ type: 'text', text: 'Hello there.' }]), ctx);
    // tsc checks the translation against the SDK's own type.
    const typed: ChatCompletion = completion;
    expect(typed).toEqual({
      id: ctx.id,
      object: 'chat.completion',
      created: ctx.created,
      model: 'claude-public',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: 'Hello there.', refusal: null, annotations: [] },
          finish_reason: 'stop',
          logprobs: null,
        },
      ],
      usage: CHAT_USAGE,
    });
    expect(usage).toEqual({ inputTokens: 12, outputTokens: 7, cachedInputTokens: 0, cacheWriteInputTokens: 0, reasoningTokens: 0, estimated: false });
  });

  it('joins text blocks (split by citations) in order', () => {
    const { completion } = messagesToCompletion(
      answer([
        { type: 'text', text: 'Paris ', citations: null },
        { type: 'text', text: 'is the capital', citations: [{ type: 'char_location', cited_text: 'x' }] },
        { type: 'text', text: '.' },
      ]),
      ctx,
    );
    expect(completion.choices[0].message.content).toBe('Paris is the capital.');
  });

  it('thinking then text: the thinking as reasoning_content; signatures and redacted thinking dropped', () => {
    const { completion } = messagesToCompletion(
      answer([
        { type: 'thinking', thinking: 'Let me think.', signature: 'sig' },
        { type: 'redacted_thinking', data: 'opaque' },
        { type: 'text', text: 'Forty-two.' },
      ]),
      ctx,
    );
    expect(completion.choices[0].message).toEqual({
      role: 'assistant',
      content: 'Forty-two.',
      refusal: null,
      reasoning_content: 'Let me think.',
      annotations: [],
    });
    expect(JSON.stringify(completion)).not.toContain('sig');
    expect(JSON.stringify(completion)).not.toContain('opaque');
  });

  it('text then two tool calls: toolu_ ids kept, input as a JSON string, finish tool_calls', () => {
    const { completion } = messagesToCompletion(
      answer(
        [
          { type: 'text', text: 'On it.' },
          { type: 'tool_use', id: 'toolu_01A', name: 'get_weather', input: { city: 'Paris', units: 'c' } },
          { type: 'tool_use', id: 'toolu_01B', name: 'get_time', input: {} },
        ],
        'tool_use',
      ),
      ctx,
    );
    expect(completion.choices[0]).toEqual({
      index: 0,
      message: {
        role: 'assistant',
        content: 'On it.',
        refusal: null,
        tool_calls: [
          { id: 'toolu_01A', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris","units":"c"}' } },
          { id: 'toolu_01B', type: 'function', function: { name: 'get_time', arguments: '{}' } },
        ],
        annotations: [],
      },
      finish_reason: 'tool_calls',
      logprobs: null,
    });
  });

  it('tool calls without text: content is null; a tool_use without an id gets a fresh toolu_ one', () => {
    const { completion } = messagesToCompletion(answer([{ type: 'tool_use', name: 'f', input: { a: 1 } }], 'tool_use'), ctx);
    expect(completion.choices[0].message.content).toBeNull();
    expect(completion.choices[0].message.tool_calls?.[0]?.id).toMatch(/^toolu_[0-9a-f]{32}$/);
  });

  it('an answer with no content at all: content is the empty string', () => {
    const { completion } = messagesToCompletion(answer([], 'max_tokens'), ctx);
    expect(completion.choices[0].message.content).toBe('');
    expect(completion.choices[0].finish_reason).toBe('length');
  });

  it('drops server tool blocks, keeping the text written from them', () => {
    const { completion } = messagesToCompletion(
      answer([
        { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: { query: 'weather' } },
        { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_1', content: [{ type: 'web_search_result', url: 'https://x', title: 't' }] },
        { type: 'text', text: 'Sunny.' },
      ]),
      ctx,
    );
    expect(completion.choices[0].message).toEqual({ role: 'assistant', content: 'Sunny.', refusal: null, annotations: [] });
    expect(completion.choices[0].finish_reason).toBe('stop');
  });

  it.each([
    ['end_turn', 'stop'],
    ['stop_sequence', 'stop'],
    ['max_tokens', 'length'],
    ['model_context_window_exceeded', 'length'],
    ['tool_use', 'tool_calls'],
    ['refusal', 'content_filter'],
    ['pause_turn', 'stop'],
    [null, 'stop'],
  ])('stop_reason %s is finish_reason %s', (stop, finish) => {
    const { completion } = messagesToCompletion(answer([{ type: 'text', text: 'x' }], stop), ctx);
    expect(completion.choices[0].finish_reason).toBe(finish);
  });

  it('a refusal keeps the text written before it in content, not refusal', () => {
    const { completion } = messagesToCompletion(answer([{ type: 'text', text: 'Here is how' }], 'refusal'), ctx);
    expect(completion.choices[0].message.content).toBe('Here is how');
    expect(completion.choices[0].message.refusal).toBeNull();
  });

  it('usage with cache reads and writes: prompt_tokens counts them, cached_tokens the reads; the gateway keeps writes apart', () => {
    const { completion, usage } = messagesToCompletion(
      answer([{ type: 'text', text: 'x' }], 'end_turn', {
        input_tokens: 10,
        cache_read_input_tokens: 1000,
        cache_creation_input_tokens: 200,
        cache_creation: { ephemeral_5m_input_tokens: 150, ephemeral_1h_input_tokens: 50 },
        output_tokens: 30,
        server_tool_use: { web_search_requests: 2 },
      }),
      ctx,
    );
    expect(completion.usage).toEqual({
      prompt_tokens: 1210,
      completion_tokens: 30,
      total_tokens: 1240,
      prompt_tokens_details: { cached_tokens: 1000, cache_write_tokens: 200 },
      completion_tokens_details: { reasoning_tokens: 0 },
    });
    expect(usage).toEqual({
      inputTokens: 1210,
      outputTokens: 30,
      cachedInputTokens: 1000,
      cacheWriteInputTokens: 200,
      cacheWrite1hInputTokens: 50,
      reasoningTokens: 0,
      serverToolCalls: { webSearch: 2 },
      estimated: false,
    });
  });

  it('an answer without usage: no usage member, and undefined usage', () => {
    const { usage: _, ...bare } = answer([{ type: 'text', text: 'x' }]);
    const { completion, usage } = messagesToCompletion(bare, ctx);
    expect(completion).not.toHaveProperty('usage');
    expect(usage).toBeUndefined();
  });

  it.each([
    [
      'an Anthropic error body',
      { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } },
      'The upstream answered with an error: Overloaded',
    ],
    ['a chat completion', { object: 'chat.completion', choices: [] }, 'The upstream answer is not a Messages answer.'],
    ['a message without content', { type: 'message', role: 'assistant' }, 'The upstream answer is not a Messages answer.'],
    ['null', null, 'The upstream answer is not a Messages answer.'],
    ['a string', '<html>bad gateway</html>', 'The upstream answer is not a Messages answer.'],
  ])('%s is a 502 in OpenAI shape', (_name, body, message) => {
    let thrown: unknown;
    try {
      messagesToCompletion(body, ctx);
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(NotAMessagesAnswer);
    expect(thrown).toBeInstanceOf(GatewayError);
    const e = thrown as GatewayError;
    expect(e.status).toBe(502);
    expect(e.toBody()).toEqual({ error: { message, type: 'server_error', param: null, code: 'upstream_error' } });
  });
});
