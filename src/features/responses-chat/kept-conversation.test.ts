import { describe, expect, it } from 'vitest';
import { conversationUpTo, inputItemsOf } from './kept-conversation.js';
import { type KeptResponse, MemoryKeptResponses } from './kept-responses.js';

const user = (content: string) => ({ role: 'user', content });
const said = (id: string, text: string) => ({ type: 'message', id, role: 'assistant', content: [{ type: 'output_text', text }] });
const turn = (id: string, previous: string | undefined, input: string, output: string): KeptResponse => ({
  id,
  previous,
  input: [user(input)],
  response: { output: [said(`msg_${id}`, output)] },
});

describe('kept conversations', () => {
  it('reads a conversation back oldest first, each response its own input then its output', async () => {
    const kept = new MemoryKeptResponses();
    kept.keep('s', turn('resp_1', undefined, 'a', 'A'));
    kept.keep('s', turn('resp_2', 'resp_1', 'b', 'B'));
    kept.keep('s', turn('resp_3', 'resp_2', 'c', 'C'));
    expect(await conversationUpTo(kept, 's', 'resp_3')).toEqual([
      user('a'),
      said('msg_resp_1', 'A'),
      user('b'),
      said('msg_resp_2', 'B'),
      user('c'),
      said('msg_resp_3', 'C'),
    ]);
    expect(await conversationUpTo(kept, 's', 'resp_1')).toEqual([user('a'), said('msg_resp_1', 'A')]);
  });

  it('nothing when any response of it is not kept or is another scope’s', async () => {
    const kept = new MemoryKeptResponses();
    kept.keep('s', turn('resp_2', 'resp_1', 'b', 'B'));
    expect(await conversationUpTo(kept, 's', 'resp_2')).toBeUndefined();
    kept.keep('s', turn('resp_1', undefined, 'a', 'A'));
    expect(await conversationUpTo(kept, 's', 'resp_2')).toHaveLength(4);
    expect(await conversationUpTo(kept, 'other', 'resp_2')).toBeUndefined();
  });

  it('reads at most 1,000 responses back', async () => {
    const kept = new MemoryKeptResponses();
    for (let i = 1; i <= 1001; i++)
      kept.keep('s', { id: `resp_${i}`, previous: i > 1 ? `resp_${i - 1}` : undefined, input: [user(String(i))], response: { output: [] } });
    expect(await conversationUpTo(kept, 's', 'resp_1000')).toHaveLength(1000);
    expect(await conversationUpTo(kept, 's', 'resp_1001')).toBeUndefined();
  });

  it('input as items: a string is one user message', () => {
    expect(inputItemsOf('hi')).toEqual([user('hi')]);
    expect(inputItemsOf([user('a')])).toEqual([user('a')]);
    expect(inputItemsOf(undefined)).toEqual([]);
  });
});
