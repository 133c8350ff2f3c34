import { describe, expect, it } from 'vitest';
import type { CompletionContext } from './completion-context.js';
import { MessagesStreamToChat } from './messages-stream-to-chat.js';
import { testContext as ctx } from './test-context.js';
import { answerOf, type Event, eventsOf } from './test-events.js';

type Data = Record<string, unknown>;

const HEAD = { id: ctx.id, object: 'chat.completion.chunk', created: ctx.created, model: 'claude-public' };
const line = (v: unknown) => `data: ${JSON.stringify(v)}\n\n`;
const chunk = (delta: Data) => line({ ...HEAD, choices: [{ index: 0, delta, finish_reason: null, logprobs: null }] });
const finish = (reason: string) => line({ ...HEAD, choices: [{ index: 0, delta: {}, finish_reason: reason, logprobs: null }] });
const usageChunk = (usage: Data) => line({ ...HEAD, choices: [], usage });
const DONE = 'data: [DONE]\n\n';
const ROLE = chunk({ role: 'assistant', content: '' });
const errorEvent = (message: string, type: string, code: string) =>
  `event: error\ndata: ${JSON.stringify({ error: { message, type, param: null, code } })}\n\n`;
const CUT = errorEvent('The upstream stream ended before the answer was finished.', 'server_error', 'upstream_error');

const USAGE_12_7 = {
  prompt_tokens: 12,
  completion_tokens: 7,
  total_tokens: 19,
  prompt_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 },
  completion_tokens_details: { reasoning_tokens: 0 },
};

/** The chat stream for `events`, pushed one by one, then ended. */
function translate(events: Event[], context: CompletionContext = ctx): string {
  const t = new MessagesStreamToChat(context);
  return events.map(([name, data]) => t.push(data, name)).join('') + t.end().events;
}

describe('MessagesStreamToChat', () => {
  it('text: the role chunk, the text deltas, the finish chunk, the usage chunk, [DONE]', () => {
    const out = translate(eventsOf(answerOf([{ type: 'text', text: 'Hello there.' }], 'end_turn')));
    expect(out).toBe(ROLE + chunk({ content: 'Hello ' }) + chunk({ content: 'there.' }) + finish('stop') + usageChunk(USAGE_12_7) + DONE);
  });

  it('thinking then text: reasoning_content deltas, the signature dropped', () => {
    const out = translate(
      eventsOf(
        answerOf(
          [
            { type: 'thinking', thinking: 'Hmm, six by seven.', signature: 'EqQBCgIYAhIM' },
            { type: 'text', text: 'Forty-two.' },
          ],
          'end_turn',
        ),
      ),
    );
    expect(out).toBe(
      ROLE +
        chunk({ reasoning_content: 'Hmm, six ' }) +
        chunk({ reasoning_content: 'by seven.' }) +
        chunk({ content: 'Forty' }) +
        chunk({ content: '-two.' }) +
        finish('stop') +
        usageChunk(USAGE_12_7) +
        DONE,
    );
    expect(out).not.toContain('EqQBCgIYAhIM');
  });

  it('text then two tool calls: each opens with its toolu_ id and name, its input in pieces; a tool without input gets {}', () => {
    const out = translate(
      eventsOf(
        answerOf(
          [
            { type: 'text', text: 'On it.' },
            { type: 'tool_use', id: 'toolu_01A', name: 'get_weather', input: { city: 'Paris' } },
            { type: 'tool_use', id: 'toolu_01B', name: 'get_time', input: {} },
          ],
          'tool_use',
        ),
      ),
    );
    expect(out).toBe(
      ROLE +
        chunk({ content: 'On ' }) +
        chunk({ content: 'it.' }) +
        chunk({ tool_calls: [{ index: 0, id: 'toolu_01A', type: 'function', function: { name: 'get_weather', arguments: '' } }] }) +
        chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }) +
        chunk({ tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }) +
        chunk({ tool_calls: [{ index: 1, id: 'toolu_01B', type: 'function', function: { name: 'get_time', arguments: '' } }] }) +
        chunk({ tool_calls: [{ index: 1, function: { arguments: '{}' } }] }) +
        finish('tool_calls') +
        usageChunk(USAGE_12_7) +
        DONE,
    );
  });

  it('a max_tokens cut: finish_reason length, and the stream still ends well', () => {
    const out = translate(eventsOf(answerOf([{ type: 'text', text: 'Half a' }], 'max_tokens')));
    expect(out).toBe(ROLE + chunk({ content: 'Hal' }) + chunk({ content: 'f a' }) + finish('length') + usageChunk(USAGE_12_7) + DONE);
  });

  it('server tool blocks and their deltas are dropped; the text after them is kept', () => {
    const out = translate(
      eventsOf(
        answerOf(
          [
            { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: { query: 'w' } },
            { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_1', content: [] },
            { type: 'text', text: 'Sunny.' },
          ],
          'end_turn',
        ),
      ),
    );
    expect(out).toBe(ROLE + chunk({ content: 'Sun' }) + chunk({ content: 'ny.' }) + finish('stop') + usageChunk(USAGE_12_7) + DONE);
  });

  it('a stream cut before message_stop ends with the error event after what came, and no [DONE]', () => {
    const events = eventsOf(answerOf([{ type: 'text', text: 'Hello there.' }], 'end_turn'));
    const beforeFinish = events.slice(
      0,
      events.findIndex(([name]) => name === 'message_delta'),
    );
    expect(translate(beforeFinish)).toBe(ROLE + chunk({ content: 'Hello ' }) + chunk({ content: 'there.' }) + CUT);
    // Cut after message_delta: the finish chunk went out, the error still follows.
    expect(translate(events.slice(0, -1))).toBe(ROLE + chunk({ content: 'Hello ' }) + chunk({ content: 'there.' }) + finish('stop') + CUT);
  });

  it('an empty stream ends with the error event alone', () => {
    expect(translate([])).toBe(CUT);
  });

  it('message_stop without a message_delta before it is a cut answer', () => {
    const events = eventsOf(answerOf([{ type: 'text', text: 'Hi' }], 'end_turn')).filter(([name]) => name !== 'message_delta');
    expect(translate(events)).toBe(
      ROLE +
        chunk({ content: 'H' }) +
        chunk({ content: 'i' }) +
        errorEvent('The upstream stream stopped without saying why the answer ended.', 'server_error', 'upstream_error'),
    );
  });

  it("an error event: Anthropic's message, its type as the code; nothing after it; the counts so far left to the estimate", () => {
    const t = new MessagesStreamToChat(ctx);
    let out = t.push({ type: 'message_start', message: { type: 'message', content: [], usage: { input_tokens: 5, output_tokens: 1 } } }, 'message_start');
    out += t.push({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }, 'content_block_start');
    out += t.push({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hi' } }, 'content_block_delta');
    out += t.push({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }, 'error');
    out += t.push({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: ' more' } }, 'content_block_delta');
    const end = t.end();
    expect(out + end.events).toBe(ROLE + chunk({ content: 'Hi' }) + errorEvent('Overloaded', 'server_error', 'overloaded_error'));
    expect(end.usage).toBeUndefined();
    expect(t.usageSoFar).toMatchObject({ inputTokens: 5 });
  });

  it('usage with cache reads and writes: input from message_start, output from message_delta', () => {
    const answer = answerOf([{ type: 'text', text: 'ok' }], 'end_turn', {
      input_tokens: 10,
      cache_read_input_tokens: 1000,
      cache_creation_input_tokens: 200,
      output_tokens: 30,
    });
    const t = new MessagesStreamToChat(ctx);
    const events = eventsOf(answer);
    let out = '';
    for (const [name, data] of events) {
      out += t.push(data, name);
      // After message_start: its counts (and its placeholder output), for a client that leaves early.
      if (name === 'message_start')
        expect(t.usageSoFar).toMatchObject({ inputTokens: 1210, outputTokens: 1, cachedInputTokens: 1000, cacheWriteInputTokens: 200 });
    }
    const end = t.end();
    expect(end.events).toBe('');
    expect(
      out.endsWith(
        usageChunk({
          prompt_tokens: 1210,
          completion_tokens: 30,
          total_tokens: 1240,
          prompt_tokens_details: { cached_tokens: 1000, cache_write_tokens: 200 },
          completion_tokens_details: { reasoning_tokens: 0 },
        }) + DONE,
      ),
    ).toBe(true);
    expect(end.usage).toEqual({
      inputTokens: 1210,
      outputTokens: 30,
      cachedInputTokens: 1000,
      cacheWriteInputTokens: 200,
      reasoningTokens: 0,
      estimated: false,
    });
  });

  it('includeUsage off: no usage chunk, the usage still returned', () => {
    const t = new MessagesStreamToChat({ ...ctx, includeUsage: false });
    const out = eventsOf(answerOf([{ type: 'text', text: 'ok' }], 'end_turn'))
      .map(([n, d]) => t.push(d, n))
      .join('');
    const end = t.end();
    expect(out + end.events).toBe(ROLE + chunk({ content: 'o' }) + chunk({ content: 'k' }) + finish('stop') + DONE);
    expect(end.usage).toMatchObject({ inputTokens: 12, outputTokens: 7 });
  });

  it("Bedrock's unnamed events are read by their data's type", () => {
    const events = eventsOf(answerOf([{ type: 'text', text: 'ok' }], 'end_turn')).map(([, data]): [undefined, Data] => [undefined, data]);
    const t = new MessagesStreamToChat(ctx);
    const out = events.map(([n, d]) => t.push(d, n)).join('') + t.end().events;
    expect(out).toBe(ROLE + chunk({ content: 'o' }) + chunk({ content: 'k' }) + finish('stop') + usageChunk(USAGE_12_7) + DONE);
  });

  it('nothing after [DONE]: a late event and end() add nothing', () => {
    const t = new MessagesStreamToChat(ctx);
    for (const [n, d] of eventsOf(answerOf([{ type: 'text', text: 'ok' }], 'end_turn'))) t.push(d, n);
    expect(t.push({ type: 'error', error: { type: 'api_error', message: 'late' } }, 'error')).toBe('');
    expect(t.end().events).toBe('');
  });
});
