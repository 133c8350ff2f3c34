import Anthropic from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { judge } from '../../../test/support/anthropic-sdk-judge.js';
import { ChatStreamToMessages } from './chat-stream-to-messages.js';
import type { AnswerContext } from './chat-to-messages.js';

const ctx: AnswerContext = { model: 'claude-public' };

/** A chat chunk with one choice. */
function chunk(delta: Record<string, unknown>, finish: string | null = null, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { id: 'chatcmpl-s1', object: 'chat.completion.chunk', model: 'upstream', choices: [{ index: 0, delta, finish_reason: finish, ...extra }] };
}

const usageChunk = (prompt: number, completion: number, cached = 0, reasoning = 0) => ({
  id: 'chatcmpl-s1',
  object: 'chat.completion.chunk',
  choices: [],
  usage: {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: cached },
    completion_tokens_details: { reasoning_tokens: reasoning },
  },
});

/** Feeds the chunks (and end()), returning the bytes and the usage. */
function translate(chunks: unknown[], context: AnswerContext = ctx) {
  const machine = new ChatStreamToMessages(context);
  let bytes = '';
  for (const c of chunks) bytes += machine.push(c);
  const end = machine.end();
  return { bytes: bytes + end.events, usage: end.usage };
}

/** The SDK's own assembly of the bytes: the final message, the text it streamed, and its events. */
async function assemble(bytes: string) {
  const { client } = judge(bytes, { stream: true });
  const stream = client.messages.stream({ model: 'claude-public', max_tokens: 100, messages: [{ role: 'user', content: 'x' }] });
  let text = '';
  stream.on('text', (t) => {
    text += t;
  });
  const message = await stream.finalMessage();
  return { message, text };
}

/** The SDK's error for bytes that should fail. */
async function sdkError(bytes: string): Promise<InstanceType<typeof Anthropic.APIError>> {
  const { client } = judge(bytes, { stream: true });
  const err = await client.messages
    .stream({ model: 'm', max_tokens: 1, messages: [{ role: 'user', content: 'x' }] })
    .finalMessage()
    .catch((e: unknown) => e);
  expect(err).toBeInstanceOf(Anthropic.APIError);
  return err as InstanceType<typeof Anthropic.APIError>;
}

describe('ChatStreamToMessages, assembled by @anthropic-ai/sdk', () => {
  it('a text stream: message_start, text deltas, the usage chunk after finish_reason, [DONE]', async () => {
    const { bytes, usage } = translate([
      chunk({ role: 'assistant', content: '' }),
      chunk({ content: 'Hel' }),
      chunk({ content: 'lo, ' }),
      chunk({ content: 'world.' }),
      chunk({}, 'stop'),
      usageChunk(1200, 7, 1000, 2),
      '[DONE]',
    ]);
    const { message, text } = await assemble(bytes);
    expect(text).toBe('Hello, world.');
    expect(message.id).toBe('msg_s1');
    expect(message.model).toBe('claude-public');
    expect(message.content).toEqual([{ type: 'text', text: 'Hello, world.' }]);
    expect(message.stop_reason).toBe('end_turn');
    expect(message.usage).toMatchObject({ input_tokens: 200, cache_read_input_tokens: 1000, cache_creation_input_tokens: 0, output_tokens: 7 });
    expect(usage).toEqual({ inputTokens: 1200, cachedInputTokens: 1000, outputTokens: 7, reasoningTokens: 2, estimated: false });
  });

  it('text then tool calls whose id and name come first and arguments in pieces: one tool_use block per call, input parsed', async () => {
    const { bytes } = translate([
      chunk({ role: 'assistant', content: 'Checking.' }),
      chunk({ tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'Bash', arguments: '' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '{"comm' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: 'and": "ls"}' } }] }),
      chunk({ tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'Read', arguments: '{"file_path":' } }] }),
      chunk({ tool_calls: [{ index: 1, function: { arguments: ' "/a b/ü.md"}' } }] }),
      chunk({}, 'tool_calls'),
      usageChunk(50, 20),
      '[DONE]',
    ]);
    const { message } = await assemble(bytes);
    expect(message.content).toEqual([
      { type: 'text', text: 'Checking.' },
      { type: 'tool_use', id: 'call_a', name: 'Bash', input: { command: 'ls' } },
      { type: 'tool_use', id: 'call_b', name: 'Read', input: { file_path: '/a b/ü.md' } },
    ]);
    expect(message.stop_reason).toBe('tool_use');
    expect(message.usage).toMatchObject({ input_tokens: 50, output_tokens: 20 });
  });

  it('whole tool calls in one chunk, Ollama-style all at index 0 with their own ids, usage on the finish chunk and no [DONE]', async () => {
    const { bytes } = translate([
      {
        ...chunk({
          role: 'assistant',
          tool_calls: [
            { index: 0, id: 'call_1', type: 'function', function: { name: 'Glob', arguments: '{"pattern":"*.ts"}' } },
            { index: 0, id: 'call_2', type: 'function', function: { name: 'Grep', arguments: '{"pattern":"TODO"}' } },
          ],
        }),
      },
      { ...chunk({}, 'stop'), usage: { prompt_tokens: 9, completion_tokens: 4 } },
    ]);
    const { message } = await assemble(bytes);
    expect(message.content).toEqual([
      { type: 'tool_use', id: 'call_1', name: 'Glob', input: { pattern: '*.ts' } },
      { type: 'tool_use', id: 'call_2', name: 'Grep', input: { pattern: 'TODO' } },
    ]);
    expect(message.stop_reason).toBe('tool_use'); // a stop with tool calls
    expect(message.usage).toMatchObject({ input_tokens: 9, output_tokens: 4 });
  });

  it('a tool call whose name comes after its first arguments is held until the name is known', async () => {
    const { bytes } = translate([
      chunk({ tool_calls: [{ index: 0, id: 'call_x', function: { arguments: '{"a":' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { name: 'Late', arguments: '1}' } }] }),
      chunk({}, 'tool_calls'),
      '[DONE]',
    ]);
    expect((await assemble(bytes)).message.content).toEqual([{ type: 'tool_use', id: 'call_x', name: 'Late', input: { a: 1 } }]);
  });

  it('text after a tool call opens a new text block', async () => {
    const { bytes } = translate([
      chunk({ content: 'a' }),
      chunk({ tool_calls: [{ index: 0, id: 'c', function: { name: 'T', arguments: '{}' } }] }),
      chunk({ content: 'b' }),
      chunk({}, 'stop'),
      usageChunk(1, 1),
    ]);
    expect((await assemble(bytes)).message.content).toEqual([
      { type: 'text', text: 'a' },
      { type: 'tool_use', id: 'c', name: 'T', input: {} },
      { type: 'text', text: 'b' },
    ]);
  });

  it.each([
    ['length', 'max_tokens'],
    ['content_filter', 'refusal'],
  ])('finish_reason %s → stop_reason %s', async (finish, expected) => {
    const { bytes } = translate([chunk({ content: 'x' }), chunk({}, finish), usageChunk(1, 1), '[DONE]']);
    expect((await assemble(bytes)).message.stop_reason).toBe(expected);
  });

  it("refusal deltas are the answer's text, and the stop reason is refusal", async () => {
    const { bytes } = translate([
      chunk({ role: 'assistant', content: null, refusal: '' }),
      chunk({ refusal: 'I cannot' }),
      chunk({ refusal: ' help.' }),
      chunk({}, 'stop'),
      usageChunk(1, 3),
      '[DONE]',
    ]);
    const { message, text } = await assemble(bytes);
    expect(text).toBe('I cannot help.');
    expect(message).toMatchObject({ content: [{ type: 'text', text: 'I cannot help.' }], stop_reason: 'refusal' });
  });

  it('stop_sequence from vLLM stop_reason or a text that ends on one', async () => {
    const stops: AnswerContext = { model: 'claude-public', stopSequences: ['</answer>', 'STOP'] };
    const vllm = translate([chunk({ content: 'x' }), chunk({}, 'stop', { stop_reason: 'STOP' }), usageChunk(1, 1)], stops);
    expect((await assemble(vllm.bytes)).message).toMatchObject({ stop_reason: 'stop_sequence', stop_sequence: 'STOP' });
    const kept = translate([chunk({ content: 'yes</ans' }), chunk({ content: 'wer>' }), chunk({}, 'stop'), usageChunk(1, 1)], stops);
    expect((await assemble(kept.bytes)).message).toMatchObject({ stop_reason: 'stop_sequence', stop_sequence: '</answer>' });
  });

  it('sends every event as `event: <type>` and the JSON of that type, message_start first and message_stop last', () => {
    const { bytes } = translate([
      chunk({ content: 'a' }),
      chunk({ tool_calls: [{ index: 0, id: 'c', function: { name: 'T', arguments: '{}' } }] }),
      chunk({}, 'tool_calls'),
      usageChunk(1, 1),
    ]);
    const events = bytes.split(/(?<=\n\n)/);
    expect(events.join('')).toBe(bytes);
    const types = events.map((e) => {
      const m = /^event: ([a-z_]+)\ndata: (.+)\n\n$/.exec(e);
      expect(m, e).not.toBeNull();
      expect(JSON.parse(m![2]!).type).toBe(m![1]);
      return m![1];
    });
    expect(types).toEqual([
      'message_start',
      'content_block_start',
      'content_block_delta',
      'content_block_stop',
      'content_block_start',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
  });

  it('reports no usage when the upstream sent none, and the SDK still assembles the message', async () => {
    const { bytes, usage } = translate([chunk({ content: 'x' }), chunk({}, 'stop'), '[DONE]']);
    expect(usage).toBeUndefined();
    expect((await assemble(bytes)).message.usage).toMatchObject({ input_tokens: 0, output_tokens: 0 });
  });

  it('ignores whatever comes after the message is over', () => {
    const machine = new ChatStreamToMessages(ctx);
    machine.push(chunk({ content: 'x' }, 'stop', { usage: null }));
    machine.push(usageChunk(3, 1));
    expect(machine.push('[DONE]')).toBe('');
    expect(machine.push(chunk({ content: 'late' }))).toBe('');
    expect(machine.end()).toEqual({ events: '', usage: expect.objectContaining({ inputTokens: 3 }) });
  });
});

describe('ChatStreamToMessages: failures, as the SDK raises them', () => {
  it('an upstream that ends without a finish_reason ends with an api_error event (here after half a tool input)', async () => {
    const { bytes, usage } = translate([chunk({ tool_calls: [{ index: 0, id: 'c', function: { name: 'Bash', arguments: '{"command":"rm -' } }] })]);
    expect(usage).toBeUndefined();
    const err = await sdkError(bytes);
    expect(err.type).toBe('api_error');
    expect(err.message).toContain('ended before the answer was finished');
  });

  it('[DONE] without a finish_reason is the same error', async () => {
    expect((await sdkError(translate([chunk({ content: 'partial' }), '[DONE]']).bytes)).type).toBe('api_error');
  });

  it('an upstream that sends nothing at all ends with the error alone', async () => {
    expect((await sdkError(translate([]).bytes)).type).toBe('api_error');
  });

  it.each([
    [{ message: 'Rate limit reached', type: 'requests', code: 'rate_limit_exceeded' }, 'rate_limit_error'],
    [{ message: 'bad', type: 'invalid_request_error' }, 'invalid_request_error'],
    [{ message: 'busy', code: 503 }, 'overloaded_error'],
    [{ message: 'boom', type: 'server_error' }, 'api_error'],
  ])('a mid-stream OpenAI error %j → an error event of type %s', async (error, type) => {
    const err = await sdkError(translate([chunk({ content: 'x' }), { error }]).bytes);
    expect(err.type).toBe(type);
    expect(err.message).toContain(error.message);
  });

  it('tool arguments that are not a JSON object end with an api_error naming the tool', async () => {
    const { bytes } = translate([
      chunk({ tool_calls: [{ index: 0, id: 'c', function: { name: 'Edit', arguments: '{"a": nope}' } }] }),
      chunk({}, 'tool_calls'),
      usageChunk(1, 1),
    ]);
    const err = await sdkError(bytes);
    expect(err.type).toBe('api_error');
    expect(err.message).toContain('`Edit`');
  });

  it('a tool call that never gets a name, and arguments that come back to a closed call, are errors', async () => {
    expect(
      (await sdkError(translate([chunk({ tool_calls: [{ index: 0, id: 'c', function: { arguments: '{}' } }] }), chunk({}, 'tool_calls')]).bytes)).message,
    ).toContain('without a name');
    const interleaved = translate([
      chunk({ tool_calls: [{ index: 0, id: 'a', function: { name: 'A', arguments: '{}' } }] }),
      chunk({ tool_calls: [{ index: 1, id: 'b', function: { name: 'B', arguments: '{' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: ' ' } }] }),
    ]);
    expect((await sdkError(interleaved.bytes)).message).toContain('interleaved');
  });
});
