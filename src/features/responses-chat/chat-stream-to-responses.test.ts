import { describe, expect, it } from 'vitest';
import { ChatStreamToResponses } from './chat-stream-to-responses.js';
import { expectedResponse, HEX, responsesEvents, testContext as ctx } from './test-context.js';

type Data = Record<string, unknown>;

const chunk = (delta: Data, finish: string | null = null): Data => ({
  id: 'chatcmpl-1',
  object: 'chat.completion.chunk',
  created: 1,
  model: 'upstream-model',
  choices: [{ index: 0, delta, finish_reason: finish }],
});
const USAGE = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15, prompt_tokens_details: { cached_tokens: 4 } };
const usageChunk: Data = { id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'upstream-model', choices: [], usage: USAGE };
const RESPONSE_USAGE = {
  input_tokens: 10,
  input_tokens_details: { cached_tokens: 4, cache_write_tokens: 0 },
  output_tokens: 5,
  output_tokens_details: { reasoning_tokens: 0 },
  total_tokens: 15,
};

/** Every chunk pushed, then the end: the whole SSE text, and the usage end() reported. */
function run(chunks: unknown[]): { text: string; usage: unknown } {
  const t = new ChatStreamToResponses(ctx);
  let text = '';
  for (const c of chunks) text += t.push(c);
  const end = t.end();
  return { text: text + end.events, usage: end.usage };
}

/** The events' data, after checking the framing (responsesEvents). */

/** The events without their sequence numbers (checked by parse). */
function events(chunks: unknown[]): Data[] {
  return responsesEvents(run(chunks).text).map(({ sequence_number: _, ...rest }) => rest);
}

const opening: Data[] = [
  { type: 'response.created', response: expectedResponse('in_progress', [], null) },
  { type: 'response.in_progress', response: expectedResponse('in_progress', [], null) },
];

const MSG = `msg_${HEX}_0`;
const textPart = (text: string) => ({ type: 'output_text', text, annotations: [], logprobs: [] });
const message = (id: string, status: string, text: string) => ({ type: 'message', id, status, role: 'assistant', content: [textPart(text)] });
const at = (item_id: string, output_index: number, content_index = 0) => ({ item_id, output_index, content_index });

describe('ChatStreamToResponses', () => {
  it('text: created, in_progress, the message item and its part, deltas, done events, completed with usage', () => {
    const { text, usage } = run([
      chunk({ role: 'assistant', content: '' }),
      chunk({ content: 'Hel' }),
      chunk({ content: 'lo.' }),
      chunk({}, 'stop'),
      usageChunk,
    ]);
    const done = message(MSG, 'completed', 'Hello.');
    expect(responsesEvents(text).map(({ sequence_number: _, ...e }) => e)).toEqual([
      ...opening,
      { type: 'response.output_item.added', output_index: 0, item: { type: 'message', id: MSG, status: 'in_progress', role: 'assistant', content: [] } },
      { type: 'response.content_part.added', ...at(MSG, 0), part: textPart('') },
      { type: 'response.output_text.delta', ...at(MSG, 0), delta: 'Hel', logprobs: [] },
      { type: 'response.output_text.delta', ...at(MSG, 0), delta: 'lo.', logprobs: [] },
      { type: 'response.output_text.done', ...at(MSG, 0), text: 'Hello.', logprobs: [] },
      { type: 'response.content_part.done', ...at(MSG, 0), part: textPart('Hello.') },
      { type: 'response.output_item.done', output_index: 0, item: done },
      { type: 'response.completed', response: expectedResponse('completed', [done], RESPONSE_USAGE) },
    ]);
    expect(usage).toEqual({ inputTokens: 10, outputTokens: 5, cachedInputTokens: 4, reasoningTokens: 0, estimated: false });
  });

  it('completed waits for the usage chunk after finish_reason; a push returns nothing more once complete', () => {
    const t = new ChatStreamToResponses(ctx);
    t.push(chunk({ content: 'Hi' }));
    expect(t.push(chunk({}, 'stop'))).not.toContain('response.completed');
    expect(t.push(usageChunk)).toContain('event: response.completed');
    expect(t.push(chunk({ content: 'late' }))).toBe('');
    expect(t.end().events).toBe('');
  });

  it('no usage: completed at the end ([DONE]) with usage null, and no gateway Usage', () => {
    const t = new ChatStreamToResponses(ctx);
    let text = t.push(chunk({ content: 'Hi' })) + t.push(chunk({}, 'stop'));
    text += t.push('[DONE]');
    const last = responsesEvents(text).at(-1)!;
    expect(last).toMatchObject({ type: 'response.completed', response: { status: 'completed', usage: null } });
    expect(t.end()).toEqual({ events: '', usage: undefined });
  });

  it('usage sent with the finish chunk completes at once', () => {
    const t = new ChatStreamToResponses(ctx);
    t.push(chunk({ content: 'Hi' }));
    const text = t.push({ ...chunk({}, 'stop'), usage: USAGE });
    expect(text).toContain('event: response.completed');
  });

  it('reasoning then text: a reasoning item with a reasoning_text part, closed before the message opens', () => {
    const RS = `rs_${HEX}_0`;
    const M1 = `msg_${HEX}_1`;
    const reasoning = { type: 'reasoning', id: RS, summary: [], content: [{ type: 'reasoning_text', text: 'Think.' }] };
    const msg = message(M1, 'completed', 'Yes.');
    expect(
      events([chunk({ role: 'assistant', reasoning_content: 'Thi' }), chunk({ reasoning: 'nk.' }), chunk({ content: 'Yes.' }), chunk({}, 'stop'), usageChunk]),
    ).toEqual([
      ...opening,
      { type: 'response.output_item.added', output_index: 0, item: { type: 'reasoning', id: RS, summary: [], content: [] } },
      { type: 'response.content_part.added', ...at(RS, 0), part: { type: 'reasoning_text', text: '' } },
      { type: 'response.reasoning_text.delta', ...at(RS, 0), delta: 'Thi' },
      { type: 'response.reasoning_text.delta', ...at(RS, 0), delta: 'nk.' },
      { type: 'response.reasoning_text.done', ...at(RS, 0), text: 'Think.' },
      { type: 'response.content_part.done', ...at(RS, 0), part: { type: 'reasoning_text', text: 'Think.' } },
      { type: 'response.output_item.done', output_index: 0, item: reasoning },
      { type: 'response.output_item.added', output_index: 1, item: { type: 'message', id: M1, status: 'in_progress', role: 'assistant', content: [] } },
      { type: 'response.content_part.added', ...at(M1, 1), part: textPart('') },
      { type: 'response.output_text.delta', ...at(M1, 1), delta: 'Yes.', logprobs: [] },
      { type: 'response.output_text.done', ...at(M1, 1), text: 'Yes.', logprobs: [] },
      { type: 'response.content_part.done', ...at(M1, 1), part: textPart('Yes.') },
      { type: 'response.output_item.done', output_index: 1, item: msg },
      { type: 'response.completed', response: expectedResponse('completed', [reasoning, msg], RESPONSE_USAGE) },
    ]);
  });

  it('one tool call after text: the message closes, the call streams its arguments, done carries the name', () => {
    const FC = `fc_${HEX}_1`;
    const call = { type: 'function_call', id: FC, call_id: 'call_a', name: 'get_weather', arguments: '{"city":"Paris"}', status: 'completed' };
    const msg = message(MSG, 'completed', 'Checking.');
    expect(
      events([
        chunk({ content: 'Checking.' }),
        chunk({ tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '' } }] }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }),
        chunk({}, 'tool_calls'),
        usageChunk,
      ]),
    ).toEqual([
      ...opening,
      { type: 'response.output_item.added', output_index: 0, item: { type: 'message', id: MSG, status: 'in_progress', role: 'assistant', content: [] } },
      { type: 'response.content_part.added', ...at(MSG, 0), part: textPart('') },
      { type: 'response.output_text.delta', ...at(MSG, 0), delta: 'Checking.', logprobs: [] },
      { type: 'response.output_text.done', ...at(MSG, 0), text: 'Checking.', logprobs: [] },
      { type: 'response.content_part.done', ...at(MSG, 0), part: textPart('Checking.') },
      { type: 'response.output_item.done', output_index: 0, item: msg },
      { type: 'response.output_item.added', output_index: 1, item: { ...call, arguments: '', status: 'in_progress' } },
      { type: 'response.function_call_arguments.delta', item_id: FC, output_index: 1, delta: '{"city":' },
      { type: 'response.function_call_arguments.delta', item_id: FC, output_index: 1, delta: '"Paris"}' },
      { type: 'response.function_call_arguments.done', item_id: FC, output_index: 1, name: 'get_weather', arguments: '{"city":"Paris"}' },
      { type: 'response.output_item.done', output_index: 1, item: call },
      { type: 'response.completed', response: expectedResponse('completed', [msg, call], RESPONSE_USAGE) },
    ]);
  });

  it('two interleaved tool calls: each its own item, the second held until the first is whole, indices agree with output', () => {
    const F0 = `fc_${HEX}_0`;
    const F1 = `fc_${HEX}_1`;
    const c0 = { type: 'function_call', id: F0, call_id: 'call_a', name: 'a', arguments: '{"x":1}', status: 'completed' };
    const c1 = { type: 'function_call', id: F1, call_id: 'call_b', name: 'b', arguments: '{"y":2}', status: 'completed' };
    expect(
      events([
        chunk({ tool_calls: [{ index: 0, id: 'call_a', function: { name: 'a', arguments: '{"x"' } }] }),
        chunk({ tool_calls: [{ index: 1, id: 'call_b', function: { name: 'b', arguments: '{"y"' } }] }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: ':1}' } }] }),
        chunk({ tool_calls: [{ index: 1, function: { arguments: ':2}' } }] }),
        chunk({}, 'tool_calls'),
        usageChunk,
      ]),
    ).toEqual([
      ...opening,
      { type: 'response.output_item.added', output_index: 0, item: { ...c0, arguments: '', status: 'in_progress' } },
      { type: 'response.function_call_arguments.delta', item_id: F0, output_index: 0, delta: '{"x"' },
      { type: 'response.function_call_arguments.delta', item_id: F0, output_index: 0, delta: ':1}' },
      { type: 'response.function_call_arguments.done', item_id: F0, output_index: 0, name: 'a', arguments: '{"x":1}' },
      { type: 'response.output_item.done', output_index: 0, item: c0 },
      { type: 'response.output_item.added', output_index: 1, item: { ...c1, arguments: '', status: 'in_progress' } },
      { type: 'response.function_call_arguments.delta', item_id: F1, output_index: 1, delta: '{"y"' },
      { type: 'response.function_call_arguments.delta', item_id: F1, output_index: 1, delta: ':2}' },
      { type: 'response.function_call_arguments.done', item_id: F1, output_index: 1, name: 'b', arguments: '{"y":2}' },
      { type: 'response.output_item.done', output_index: 1, item: c1 },
      { type: 'response.completed', response: expectedResponse('completed', [c0, c1], RESPONSE_USAGE) },
    ]);
  });

  it('a call held to the finish is told whole there; a new id at a known index is a new call (Ollama)', () => {
    const out = events([
      chunk({ tool_calls: [{ index: 0, id: 'call_a', function: { name: 'a', arguments: '' } }] }),
      chunk({ tool_calls: [{ index: 0, id: 'call_b', function: { name: 'b', arguments: '{}' } }] }),
      chunk({}, 'tool_calls'),
    ]);
    const final = out.at(-1)!['response'] as { output: Data[] };
    expect(final.output.map((i) => [i['id'], i['call_id'], i['name'], i['arguments']])).toEqual([
      [`fc_${HEX}_0`, 'call_a', 'a', ''],
      [`fc_${HEX}_1`, 'call_b', 'b', '{}'],
    ]);
    expect(out.filter((e) => e['type'] === 'response.function_call_arguments.delta')).toEqual([
      { type: 'response.function_call_arguments.delta', item_id: `fc_${HEX}_1`, output_index: 1, delta: '{}' },
    ]);
  });

  it('a custom tool call: added with empty input, the input in one delta once the arguments are whole, then done', () => {
    const C = `ctc_${HEX}_0`;
    const call = { type: 'custom_tool_call', id: C, call_id: 'call_p', name: 'apply_patch', input: '*** Begin Patch', status: 'completed' };
    expect(
      events([
        chunk({ tool_calls: [{ index: 0, id: 'call_p', function: { name: 'apply_patch', arguments: '{"input":"*** Begin' } }] }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: ' Patch"}' } }] }),
        chunk({}, 'tool_calls'),
        usageChunk,
      ]),
    ).toEqual([
      ...opening,
      { type: 'response.output_item.added', output_index: 0, item: { ...call, input: '', status: 'in_progress' } },
      { type: 'response.custom_tool_call_input.delta', item_id: C, output_index: 0, delta: '*** Begin Patch' },
      { type: 'response.custom_tool_call_input.done', item_id: C, output_index: 0, input: '*** Begin Patch' },
      { type: 'response.output_item.done', output_index: 0, item: call },
      { type: 'response.completed', response: expectedResponse('completed', [call], RESPONSE_USAGE) },
    ]);
  });

  it('a call of a tool inside a namespace streams under its own name with `namespace`, in every event that carries the item', () => {
    const F = `fc_${HEX}_0`;
    const call = {
      type: 'function_call',
      id: F,
      call_id: 'call_s',
      name: 'spawn_agent',
      namespace: 'multi_agent_v1',
      arguments: '{"task":"t"}',
      status: 'completed',
    };
    expect(
      events([
        chunk({ tool_calls: [{ index: 0, id: 'call_s', function: { name: 'multi_agent_v1__spawn_agent', arguments: '{"task":' } }] }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: '"t"}' } }] }),
        chunk({}, 'tool_calls'),
        usageChunk,
      ]),
    ).toEqual([
      ...opening,
      { type: 'response.output_item.added', output_index: 0, item: { ...call, arguments: '', status: 'in_progress' } },
      { type: 'response.function_call_arguments.delta', item_id: F, output_index: 0, delta: '{"task":' },
      { type: 'response.function_call_arguments.delta', item_id: F, output_index: 0, delta: '"t"}' },
      { type: 'response.function_call_arguments.done', item_id: F, output_index: 0, name: 'spawn_agent', arguments: '{"task":"t"}' },
      { type: 'response.output_item.done', output_index: 0, item: call },
      { type: 'response.completed', response: expectedResponse('completed', [call], RESPONSE_USAGE) },
    ]);
  });

  it('a length cut: the message is incomplete and the stream ends with response.incomplete', () => {
    const msg = message(MSG, 'incomplete', 'Half');
    expect(events([chunk({ content: 'Half' }), chunk({}, 'length'), usageChunk]).slice(-2)).toEqual([
      { type: 'response.output_item.done', output_index: 0, item: msg },
      { type: 'response.incomplete', response: expectedResponse('incomplete', [msg], RESPONSE_USAGE, { reason: 'max_output_tokens' }) },
    ]);
  });

  it('a refusal after text: a second content part of the same message', () => {
    const out = events([chunk({ content: 'Well, ' }), chunk({ refusal: 'no.' }), chunk({}, 'stop')]);
    expect(out.slice(5, 11)).toEqual([
      { type: 'response.output_text.done', ...at(MSG, 0), text: 'Well, ', logprobs: [] },
      { type: 'response.content_part.done', ...at(MSG, 0), part: textPart('Well, ') },
      { type: 'response.content_part.added', ...at(MSG, 0, 1), part: { type: 'refusal', refusal: '' } },
      { type: 'response.refusal.delta', ...at(MSG, 0, 1), delta: 'no.' },
      { type: 'response.refusal.done', ...at(MSG, 0, 1), refusal: 'no.' },
      { type: 'response.content_part.done', ...at(MSG, 0, 1), part: { type: 'refusal', refusal: 'no.' } },
    ]);
  });

  it('a cut stream (no finish_reason): the open item is left, an error event ends it, no response.completed', () => {
    const { text, usage } = run([chunk({ content: 'Half an ans' })]);
    const out = responsesEvents(text);
    expect(out.map((e) => e['type'])).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'error',
    ]);
    const message = 'The upstream stream ended before the answer was finished.';
    expect(out.at(-1)).toEqual({
      type: 'error',
      sequence_number: 5,
      code: 'upstream_error',
      message,
      param: null,
      error: { message, type: 'server_error', param: null, code: 'upstream_error' },
    });
    expect(usage).toBeUndefined();
  });

  it('an error member mid-stream: an error event with the upstream message and code, nothing after it', () => {
    const t = new ChatStreamToResponses(ctx);
    let text = t.push(chunk({ content: 'Hi' }));
    text += t.push({ error: { message: 'Rate limit reached', type: 'requests', code: 'rate_limit_exceeded' } });
    text += t.push(chunk({}, 'stop')) + t.end().events;
    expect(responsesEvents(text).at(-1)).toMatchObject({
      type: 'error',
      code: 'rate_limit_exceeded',
      message: 'Rate limit reached',
      error: { type: 'requests' },
    });
    expect(t.progress.lastSequenceNumber).toBe(5);
  });

  it('the Response is handed to keep once, as it completes; a stream that failed keeps nothing', () => {
    const kept: Data[] = [];
    const keeping = { ...ctx, keep: (response: Data) => void kept.push(JSON.parse(JSON.stringify(response))) };
    const t = new ChatStreamToResponses(keeping);
    t.push(chunk({ content: 'Hello.' }));
    t.push(chunk({}, 'stop'));
    expect(kept).toEqual([]);
    t.push(usageChunk);
    t.end();
    expect(kept).toHaveLength(1);
    expect(kept[0]).toMatchObject({ id: `resp_${HEX}`, status: 'completed', usage: RESPONSE_USAGE });
    expect(kept[0]!['output']).toEqual([
      { type: 'message', id: `msg_${HEX}_0`, status: 'completed', role: 'assistant', content: [expect.objectContaining({ text: 'Hello.' })] },
    ]);
    const cut = new ChatStreamToResponses(keeping);
    cut.push(chunk({ content: 'Half an ans' }));
    cut.end();
    expect(kept).toHaveLength(1);
  });

  it('a tool call whose name never came fails rather than make a nameless item', () => {
    const out = events([chunk({ tool_calls: [{ index: 0, id: 'call_a', function: { arguments: '{}' } }] }), chunk({}, 'tool_calls')]);
    expect(out.at(-1)).toMatchObject({ type: 'error', message: 'The upstream sent a tool call without a name.' });
  });

  it('empty choices, role-only deltas, null contents and non-objects are handled without events of their own', () => {
    const out = events([
      { choices: [] },
      chunk({ role: 'assistant', content: null, tool_calls: null, reasoning_content: null }),
      null,
      'junk',
      chunk({}, 'stop'),
      usageChunk,
    ]);
    expect(out).toEqual([...opening, { type: 'response.completed', response: expectedResponse('completed', [], RESPONSE_USAGE) }]);
  });
});
