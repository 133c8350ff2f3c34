import Anthropic from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { judge } from '../../../test/support/anthropic-sdk-judge.js';
import { errorFromUpstream } from './anthropic-errors.js';
import { type AnswerContext, chatToMessages } from './chat-to-messages.js';

const ctx: AnswerContext = { model: 'claude-public' };

function completion(message: Record<string, unknown>, finish: string | null, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: 'chatcmpl-abc123',
    object: 'chat.completion',
    created: 1,
    model: 'upstream-model',
    choices: [{ index: 0, message: { role: 'assistant', ...message }, finish_reason: finish, ...extra }],
    usage: { prompt_tokens: 120, completion_tokens: 30, total_tokens: 150, prompt_tokens_details: { cached_tokens: 100 } },
  };
}

/** The translated answer as @anthropic-ai/sdk reads it from the wire. */
async function viaSdk(chatAnswer: unknown, context: AnswerContext = ctx): Promise<Anthropic.Message> {
  const r = chatToMessages(chatAnswer, context);
  if (!r.ok) throw new Error(`refused: ${r.error.error.message}`);
  const { client } = judge(JSON.stringify(r.value));
  return client.messages.create({ model: 'claude-public', max_tokens: 100, messages: [{ role: 'user', content: 'x' }] });
}

describe('chatToMessages, judged by @anthropic-ai/sdk', () => {
  it('a text answer: msg_ id, the public model, one text block, end_turn, usage split into uncached and cache read', async () => {
    const m = await viaSdk(completion({ content: 'Hello there.' }, 'stop'));
    expect(m.id).toBe('msg_abc123');
    expect(m.type).toBe('message');
    expect(m.role).toBe('assistant');
    expect(m.model).toBe('claude-public');
    expect(m.content).toEqual([{ type: 'text', text: 'Hello there.' }]);
    expect(m.stop_reason).toBe('end_turn');
    expect(m.stop_sequence).toBeNull();
    expect(m.usage).toEqual({ input_tokens: 20, cache_read_input_tokens: 100, cache_creation_input_tokens: 0, output_tokens: 30 });
  });

  it('tool_calls become tool_use blocks with parsed input, after the text; stop_reason tool_use', async () => {
    const m = await viaSdk(
      completion(
        {
          content: 'Let me look.',
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'Bash', arguments: '{"command":"ls -la"}' } },
            { id: 'call_2', type: 'function', function: { name: 'Noop', arguments: '' } },
          ],
        },
        'tool_calls',
      ),
    );
    expect(m.content).toEqual([
      { type: 'text', text: 'Let me look.' },
      { type: 'tool_use', id: 'call_1', name: 'Bash', input: { command: 'ls -la' } },
      { type: 'tool_use', id: 'call_2', name: 'Noop', input: {} },
    ]);
    expect(m.stop_reason).toBe('tool_use');
  });

  it('a backend that says stop with tool calls (and no id) still gives tool_use, with a toolu_ id', async () => {
    const m = await viaSdk(completion({ content: null, tool_calls: [{ type: 'function', function: { name: 'Read', arguments: '{"path":"a"}' } }] }, 'stop'));
    expect(m.stop_reason).toBe('tool_use');
    expect(m.content[0]).toMatchObject({ type: 'tool_use', name: 'Read', input: { path: 'a' }, id: expect.stringMatching(/^toolu_\w+$/) });
  });

  it.each([
    ['length', 'max_tokens'],
    ['content_filter', 'refusal'],
    ['function_call', 'tool_use'],
    [null, 'end_turn'],
  ])('finish_reason %s → stop_reason %s', async (finish, expected) => {
    expect((await viaSdk(completion({ content: 'x' }, finish))).stop_reason).toBe(expected);
  });

  it('stop_sequence when vLLM names the matched stop string, or the text ends on one; end_turn when nothing says', async () => {
    const withStops: AnswerContext = { model: 'claude-public', stopSequences: ['END', '###'] };
    const vllm = await viaSdk(completion({ content: 'done ' }, 'stop', { stop_reason: '###' }), withStops);
    expect([vllm.stop_reason, vllm.stop_sequence]).toEqual(['stop_sequence', '###']);
    const kept = await viaSdk(completion({ content: 'done END' }, 'stop'), withStops);
    expect([kept.stop_reason, kept.stop_sequence]).toEqual(['stop_sequence', 'END']);
    const openai = await viaSdk(completion({ content: 'done' }, 'stop'), withStops);
    expect([openai.stop_reason, openai.stop_sequence]).toEqual(['end_turn', null]);
    // vLLM's stop_reason is a token id when an EOS token stopped it: not a stop sequence.
    expect((await viaSdk(completion({ content: 'done' }, 'stop', { stop_reason: 128009 }), withStops)).stop_reason).toBe('end_turn');
    // Without stop sequences in the request, text that happens to end like one is still end_turn.
    expect((await viaSdk(completion({ content: 'done END' }, 'stop'))).stop_reason).toBe('end_turn');
  });

  it('does not carry reasoning; an empty answer is an empty content list', async () => {
    const m = await viaSdk(completion({ content: '', reasoning_content: 'secret plan' }, 'stop'));
    expect(m.content).toEqual([]);
    expect(JSON.stringify(m)).not.toContain('secret plan');
  });

  it("a refusal is the answer's text with stop_reason refusal, whatever the finish_reason", async () => {
    const m = await viaSdk(completion({ content: null, refusal: 'I cannot help with that.' }, 'stop'));
    expect(m.content).toEqual([{ type: 'text', text: 'I cannot help with that.' }]);
    expect(m.stop_reason).toBe('refusal');
    // A null refusal (OpenAI sends one on every answer) is no refusal.
    expect((await viaSdk(completion({ content: 'Sure.', refusal: null }, 'stop'))).stop_reason).toBe('end_turn');
  });

  it('an answer without usage reports zeros', async () => {
    const { usage: _, ...bare } = completion({ content: 'x' }, 'stop');
    expect((await viaSdk(bare)).usage).toEqual({ input_tokens: 0, cache_read_input_tokens: 0, cache_creation_input_tokens: 0, output_tokens: 0 });
  });
});

describe('chatToMessages refusals', () => {
  it('arguments that are not a JSON object fail the answer with a 502 api_error naming the tool', () => {
    for (const args of ['{"command": "ls"', '[1,2]', '"text"']) {
      const r = chatToMessages(
        completion({ content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'Bash', arguments: args } }] }, 'tool_calls'),
        ctx,
      );
      expect(r).toEqual({ ok: false, status: 502, error: { type: 'error', error: { type: 'api_error', message: expect.stringContaining('`Bash`') } } });
    }
  });

  it('an answer that is not a chat completion is a 502 api_error', () => {
    for (const bad of [null, {}, { choices: [] }, { choices: [{ index: 0 }] }]) {
      expect(chatToMessages(bad, ctx)).toMatchObject({ ok: false, status: 502, error: { error: { type: 'api_error' } } });
    }
  });
});

describe('errorFromUpstream', () => {
  it.each([
    [400, 'invalid_request_error', Anthropic.BadRequestError],
    [401, 'authentication_error', Anthropic.AuthenticationError],
    [403, 'permission_error', Anthropic.PermissionDeniedError],
    [404, 'not_found_error', Anthropic.NotFoundError],
    [413, 'request_too_large', Anthropic.APIError],
    [429, 'rate_limit_error', Anthropic.RateLimitError],
    [503, 'overloaded_error', Anthropic.InternalServerError],
    [529, 'overloaded_error', Anthropic.APIError],
    [500, 'api_error', Anthropic.InternalServerError],
    [502, 'api_error', Anthropic.InternalServerError],
  ])('%i → %s, which the SDK raises with the upstream message', async (status, type, errorClass) => {
    const body = errorFromUpstream(status, { error: { message: 'upstream says no', type: 'whatever', param: null, code: null } });
    const { client } = judge(JSON.stringify(body), { status });
    const err = await client.messages.create({ model: 'm', max_tokens: 1, messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(errorClass);
    expect((err as InstanceType<typeof Anthropic.APIError>).status).toBe(status);
    expect((err as InstanceType<typeof Anthropic.APIError>).type).toBe(type);
    expect((err as Error).message).toContain('upstream says no');
  });

  it('without an OpenAI error message, says the status', () => {
    expect(errorFromUpstream(502, '<html>bad gateway</html>').error.message).toBe('<html>bad gateway</html>');
    expect(errorFromUpstream(504, null)).toEqual({ type: 'error', error: { type: 'api_error', message: 'The upstream answered with status 504.' } });
    expect(errorFromUpstream(400, { error: 'plain string error' }).error.message).toBe('plain string error');
  });

  it("reads a cloud's own shapes: Bedrock's {message} and {Message}, Vertex's array", () => {
    expect(errorFromUpstream(403, { message: 'Signature expired' }).error.message).toBe('Signature expired');
    expect(errorFromUpstream(400, { Message: 'Malformed input request' }).error.message).toBe('Malformed input request');
    const vertex = [{ error: { code: 403, message: 'Permission denied', status: 'PERMISSION_DENIED' } }];
    expect(errorFromUpstream(403, vertex).error).toEqual({ type: 'permission_error', message: 'Permission denied' });
  });
});
