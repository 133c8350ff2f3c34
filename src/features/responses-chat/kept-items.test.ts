import { describe, expect, it } from 'vitest';
import { MemoryKeptItems } from './kept-items.js';

const message = (id: string, text = 'Hello.') => ({ type: 'message', id, status: 'completed', role: 'assistant', content: [{ type: 'output_text', text }] });
const call = (id: string) => ({ type: 'function_call', id, call_id: 'call_1', name: 'f', arguments: '{}', status: 'completed' });

describe('MemoryKeptItems', async () => {
  it('finds what it kept for the scope, as its own copy; not what another scope kept', async () => {
    const items = new MemoryKeptItems();
    items.keep('ns/alice', [message('msg_a_0'), call('fc_a_1')]);
    const found = await items.find('ns/alice', ['msg_a_0', 'fc_a_1', 'msg_other']);
    expect([...found.keys()]).toEqual(['msg_a_0', 'fc_a_1']);
    expect(found.get('msg_a_0')).toEqual(message('msg_a_0'));
    found.get('msg_a_0')!['role'] = 'user';
    expect((await items.find('ns/alice', ['msg_a_0'])).get('msg_a_0')).toEqual(message('msg_a_0'));
    expect((await items.find('ns/bob', ['msg_a_0', 'fc_a_1'])).size).toBe(0);
  });

  it('keeps messages and tool calls, not reasoning (a reference to it is dropped, as the item would be)', async () => {
    const items = new MemoryKeptItems();
    items.keep('s', [
      { type: 'reasoning', id: 'rs_1' },
      { type: 'custom_tool_call', id: 'ctc_1' },
    ]);
    expect([...(await items.find('s', ['rs_1', 'ctc_1'])).keys()]).toEqual(['ctc_1']);
  });

  it('forgets an item once its time is up', async () => {
    let now = 1_000;
    const items = new MemoryKeptItems({ ttlMs: 60_000, now: () => now });
    items.keep('s', [message('msg_1')]);
    now += 59_000;
    expect((await items.find('s', ['msg_1'])).size).toBe(1);
    now += 2_000;
    expect((await items.find('s', ['msg_1'])).size).toBe(0);
  });

  it('within its byte bound: the least recently used go first, and an item too large is not kept', async () => {
    // About 750 bytes an item: ten fit in 8,000; one over 1,000 (an eighth of the bound) is not kept.
    const items = new MemoryKeptItems({ maxBytes: 8_000 });
    const text = 'x'.repeat(250);
    const ids = Array.from({ length: 10 }, (_, i) => `msg_${i}`);
    for (const id of ids) items.keep('s', [message(id, text)]);
    expect((await items.find('s', ids)).size).toBe(10);
    expect((await items.find('s', ['msg_0'])).size).toBe(1); // now the most recently used
    items.keep('s', [message('msg_10', text), message('msg_11', text)]);
    expect([...(await items.find('s', [...ids, 'msg_10', 'msg_11'])).keys()]).toEqual(['msg_0', ...ids.slice(3), 'msg_10', 'msg_11']);
    items.keep('s', [message('msg_big', 'y'.repeat(600))]);
    expect((await items.find('s', ['msg_big'])).size).toBe(0);
  });
});
