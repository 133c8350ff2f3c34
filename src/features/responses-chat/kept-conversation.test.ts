import { describe, expect, it } from 'vitest';
import { conversationUpTo, inputItemsOf, responseRecord } from './kept-conversation.js';
import { MemoryKeptItems } from './kept-items.js';

const user = (content: string) => ({ role: 'user', content });
const said = (id: string, text: string) => ({ type: 'message', id, role: 'assistant', content: [{ type: 'output_text', text }] });

describe('kept conversations', () => {
  it('reads a conversation back oldest first, each response its own input then its output', async () => {
    const items = new MemoryKeptItems();
    items.keep('s', [responseRecord('resp_1', undefined, [user('a')], [said('msg_1', 'A')])]);
    items.keep('s', [responseRecord('resp_2', 'resp_1', [user('b')], [said('msg_2', 'B')])]);
    items.keep('s', [responseRecord('resp_3', 'resp_2', [user('c')], [said('msg_3', 'C')])]);
    expect(await conversationUpTo(items, 's', 'resp_3')).toEqual([user('a'), said('msg_1', 'A'), user('b'), said('msg_2', 'B'), user('c'), said('msg_3', 'C')]);
    expect(await conversationUpTo(items, 's', 'resp_1')).toEqual([user('a'), said('msg_1', 'A')]);
  });

  it('nothing when any response of it is not kept, is another scope’s, or is not a response record', async () => {
    const items = new MemoryKeptItems();
    items.keep('s', [responseRecord('resp_2', 'resp_1', [user('b')], [])]);
    expect(await conversationUpTo(items, 's', 'resp_2')).toBeUndefined();
    expect(await conversationUpTo(items, 'other', 'resp_2')).toBeUndefined();
    items.keep('s', [said('msg_1', 'A')]);
    expect(await conversationUpTo(items, 's', 'msg_1')).toBeUndefined();
  });

  it('reads at most 1,000 responses back', async () => {
    const items = new MemoryKeptItems();
    for (let i = 1; i <= 1001; i++) items.keep('s', [responseRecord(`resp_${i}`, i > 1 ? `resp_${i - 1}` : undefined, [user(String(i))], [])]);
    expect(await conversationUpTo(items, 's', 'resp_1000')).toHaveLength(1000);
    expect(await conversationUpTo(items, 's', 'resp_1001')).toBeUndefined();
  });

  it('input as items: a string is one user message', () => {
    expect(inputItemsOf('hi')).toEqual([user('hi')]);
    expect(inputItemsOf([user('a')])).toEqual([user('a')]);
    expect(inputItemsOf(undefined)).toEqual([]);
  });
});
