import { describe, expect, it } from 'vitest';
import type { RequestPlan } from '../../dataplane/exchange/transform.js';
import { mayCallServerTools, ResponsesToolCounter } from './server-tools.js';

const item = (type: string, i: number) => ({ type, id: `x_${i}`, status: 'completed' });
const final = (types: string[]) => ({
  id: 'resp_1',
  object: 'response',
  output: [...types.map(item), { type: 'message', content: [{ type: 'output_text', text: 'a "web_search_call" in text' }] }],
  usage: { input_tokens: 5, output_tokens: 2 },
});
const event = (type: string, data: unknown) => `event: ${type}\ndata: ${JSON.stringify({ type, ...(data as object) })}\n\n`;

/** Counts the calls in bytes cut into pieces of `size`, so every name is split between chunks somewhere. */
function counted(text: string, isStream: boolean, size: number) {
  const counter = new ResponsesToolCounter(isStream);
  const bytes = Buffer.from(text);
  for (let i = 0; i < bytes.length; i += size) counter.push(bytes.subarray(i, i + size));
  return counter.calls();
}

describe('ResponsesToolCounter', () => {
  it('counts the items of a whole answer, not the quoted words of its text, however the chunks cut it', () => {
    const body = JSON.stringify(final(['web_search_call', 'file_search_call', 'web_search_call']));
    for (const size of [1, 2, 5, 17, 64, body.length]) expect(counted(body, false, size)).toEqual({ webSearch: 2, fileSearch: 1 });
    expect(counted(JSON.stringify(final([])), false, 7)).toBeUndefined();
  });

  it('counts a stream’s completed event per call: the items it repeats elsewhere are not counted again', () => {
    const stream = [
      event('response.output_item.added', { item: item('web_search_call', 0) }),
      event('response.web_search_call.in_progress', { item_id: 'x_0' }),
      event('response.web_search_call.completed', { item_id: 'x_0' }),
      event('response.output_item.done', { item: item('web_search_call', 0) }),
      event('response.file_search_call.completed', { item_id: 'x_1' }),
      event('response.completed', { response: final(['web_search_call', 'file_search_call']) }),
    ].join('');
    for (const size of [1, 3, 40, stream.length]) expect(counted(stream, true, size)).toEqual({ webSearch: 1, fileSearch: 1 });
  });
});

describe('mayCallServerTools', () => {
  const plan = (members: Record<string, string>) => ({ raw: (name: string) => members[name] }) as RequestPlan;
  it('is true for tools the upstream runs itself, or a stored prompt, and false for functions alone', () => {
    expect(mayCallServerTools(plan({ tools: '[{"type":"web_search"}]' }))).toBe(true);
    expect(mayCallServerTools(plan({ tools: '[{"type": "file_search", "vector_store_ids": ["vs_1"]}]' }))).toBe(true);
    expect(mayCallServerTools(plan({ tools: '[{"type":"web_fetch_20250910","name":"web_fetch"}]' }))).toBe(true);
    expect(mayCallServerTools(plan({ prompt: '{"id":"pmpt_1"}' }))).toBe(true);
    expect(mayCallServerTools(plan({ tools: '[{"type":"function","name":"web_search"}]' }))).toBe(false);
    expect(mayCallServerTools(plan({}))).toBe(false);
    expect(mayCallServerTools(undefined)).toBe(false);
  });
});
