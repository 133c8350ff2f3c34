import { describe, expect, it } from 'vitest';
import { chatEvents } from './chat-events.js';

/** The data of each event, parsed ([DONE] kept as text). */
function events(text: string): unknown[] {
  return [...text.matchAll(/^data: (.*)$/gm)].map((m) => (m[1] === '[DONE]' ? '[DONE]' : JSON.parse(m[1]!)));
}

const completion = {
  id: 'c1',
  object: 'chat.completion',
  created: 1,
  model: 'm',
  choices: [
    { index: 0, message: { role: 'assistant', content: 'a' }, finish_reason: 'stop', logprobs: null },
    {
      index: 1,
      message: { role: 'assistant', content: null, tool_calls: [{ id: 't', type: 'function', function: { name: 'f', arguments: '{}' } }] },
      finish_reason: 'tool_calls',
    },
  ],
  usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
};

describe('chatEvents', () => {
  it('tells each choice in a delta chunk and a finish chunk, tool calls indexed, then [DONE]', () => {
    const out = events(chatEvents(completion, { includeUsage: false })!);
    expect(out).toEqual([
      {
        id: 'c1',
        object: 'chat.completion.chunk',
        created: 1,
        model: 'm',
        choices: [{ index: 0, delta: { role: 'assistant', content: 'a' }, logprobs: null, finish_reason: null }],
      },
      { id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: {}, logprobs: null, finish_reason: 'stop' }] },
      {
        id: 'c1',
        object: 'chat.completion.chunk',
        created: 1,
        model: 'm',
        choices: [
          {
            index: 1,
            delta: { role: 'assistant', content: null, tool_calls: [{ index: 0, id: 't', type: 'function', function: { name: 'f', arguments: '{}' } }] },
            logprobs: null,
            finish_reason: null,
          },
        ],
      },
      { id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 1, delta: {}, logprobs: null, finish_reason: 'tool_calls' }] },
      '[DONE]',
    ]);
  });

  it('adds the usage chunk only when asked, with usage null on the others', () => {
    const out = events(chatEvents(completion, { includeUsage: true })!) as { usage?: unknown; choices?: unknown[] }[];
    expect(out.at(-2)).toMatchObject({ choices: [], usage: completion.usage });
    expect(out.slice(0, 4).every((c) => c.usage === null)).toBe(true);
  });

  it('is undefined for JSON that is not a chat completion', () => {
    expect(chatEvents({ object: 'list', data: [] }, { includeUsage: false })).toBeUndefined();
    expect(chatEvents({ choices: [{ text: 'legacy' }] }, { includeUsage: false })).toBeUndefined();
    expect(chatEvents(undefined, { includeUsage: false })).toBeUndefined();
  });
});
