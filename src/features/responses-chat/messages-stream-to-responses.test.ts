import { describe, expect, it } from 'vitest';
import { answerOf, type Event, eventsOf } from '../chat-claude/test-events.js';
import { testContext as chatCtx } from '../chat-claude/test-context.js';
import { MessagesStreamToResponses } from './messages-stream-to-responses.js';
import { responsesEvents, testContext as ctx } from './test-context.js';

type Data = Record<string, unknown>;

/** Every event pushed, then the end: the Responses events' data (framing and sequence numbers checked), and the usage. */
function run(events: Event[]): { events: Data[]; usage: unknown; soFar: unknown } {
  const progress = { lastSequenceNumber: undefined as number | undefined };
  const t = new MessagesStreamToResponses(chatCtx, ctx, progress);
  let text = '';
  for (const [name, data] of events) text += t.push(data, name);
  const end = t.end();
  text += end.events;
  return { events: responsesEvents(text), usage: end.usage, soFar: t.usageSoFar };
}

const types = (events: Data[]) => events.map((e) => e['type']);

describe('MessagesStreamToResponses', () => {
  it('tells a text answer as a message item, and returns the usage Anthropic reported (cache reads and writes)', () => {
    const usage = { input_tokens: 12, output_tokens: 7, cache_read_input_tokens: 30, cache_creation_input_tokens: 5 };
    const { events, usage: reported } = run(eventsOf(answerOf([{ type: 'text', text: 'Hello there' }], 'end_turn', usage)));
    expect(types(events)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    const done = events.at(-1)!['response'] as Data;
    expect(done).toMatchObject({ id: ctx.id, status: 'completed', usage: { input_tokens: 47, output_tokens: 7, input_tokens_details: { cached_tokens: 30 } } });
    expect((done['output'] as Data[])[0]).toMatchObject({ type: 'message', content: [{ type: 'output_text', text: 'Hello there' }] });
    expect(reported).toMatchObject({ inputTokens: 47, cachedInputTokens: 30, cacheWriteInputTokens: 5, outputTokens: 7, estimated: false });
  });

  it('tells a tool_use block as a function_call item whose call_id is the toolu_ id, after the text before it', () => {
    const answer = answerOf(
      [
        { type: 'text', text: 'Let me look.' },
        { type: 'tool_use', id: 'toolu_01abc', name: 'exec_command', input: { cmd: 'ls -la' } },
      ],
      'tool_use',
    );
    const { events } = run(eventsOf(answer));
    const args = events.filter((e) => e['type'] === 'response.function_call_arguments.delta').map((e) => e['delta']);
    expect(args.join('')).toBe('{"cmd":"ls -la"}');
    const done = events.at(-1)!;
    expect(done['type']).toBe('response.completed');
    const output = (done['response'] as Data)['output'] as Data[];
    expect(output.map((o) => o['type'])).toEqual(['message', 'function_call']);
    expect(output[1]).toMatchObject({ call_id: 'toolu_01abc', name: 'exec_command', arguments: '{"cmd":"ls -la"}', status: 'completed' });
  });

  it('ends a stream cut before message_stop with the Responses error event, continuing the sequence; its input counts left to the estimate', () => {
    const all = eventsOf(answerOf([{ type: 'text', text: 'Half an answer' }], 'end_turn', { input_tokens: 20, output_tokens: 9 }));
    const cut = all.slice(
      0,
      all.findIndex(([name]) => name === 'content_block_stop'),
    );
    const { events, usage, soFar } = run(cut);
    expect(types(events).at(-1)).toBe('error');
    expect(types(events)).not.toContain('response.completed');
    expect(events.at(-1)).toMatchObject({ code: 'upstream_error', error: { type: 'server_error', code: 'upstream_error' } });
    expect(usage).toBeUndefined();
    expect(soFar).toMatchObject({ inputTokens: 20 });
  });

  it('tells an Anthropic error event as the Responses error event with its message', () => {
    const start = eventsOf(answerOf([{ type: 'text', text: 'Hi' }], 'end_turn')).slice(0, 3);
    const error: Event = ['error', { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }];
    const { events } = run([...start, error]);
    expect(events.at(-1)).toMatchObject({ type: 'error', message: 'Overloaded', code: 'overloaded_error' });
  });
});
