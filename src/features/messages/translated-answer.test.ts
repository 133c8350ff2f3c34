import { describe, expect, it } from 'vitest';
import type { AnswerContext } from './chat-to-messages.js';
import { labelledTranslation } from './translated-answer.js';

const ctx: AnswerContext = { model: 'claude-public' };
const usage = { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 };

/** Feeds the chunks, flushes, and returns what passed on (as it passed) and the usage. */
function run(chunks: string[]) {
  const h = labelledTranslation(ctx);
  const passed = chunks.map((c) => h.onData(Buffer.from(c)).toString());
  passed.push(h.flush()?.toString() ?? '');
  return { passed, usage: h.onEnd() };
}

const chatChunk = (choices: object[], extra: object = {}) =>
  `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', model: 'm', choices, ...extra })}\n\n`;

describe('labelledTranslation: a stream request answered with a JSON label', () => {
  it('translates an event stream as it comes, whitespace ahead of it held until the first byte that tells', () => {
    const { passed, usage: u } = run([
      '\n',
      '\r\n',
      chatChunk([{ index: 0, delta: { role: 'assistant', content: 'Hi' }, finish_reason: null }]),
      chatChunk([{ index: 0, delta: {}, finish_reason: 'stop' }]) + chatChunk([], { usage }),
      'data: [DONE]\n\n',
    ]);
    expect(passed.slice(0, 2)).toEqual(['', '']);
    // Events before the body ended: message_start and the text reached the client as they came.
    expect(passed[2]).toContain('event: message_start');
    expect(passed[2]).toContain('"text":"Hi"');
    expect(passed.join('')).toContain('event: message_stop');
    expect(u).toMatchObject({ inputTokens: 5, outputTokens: 2 });
  });

  it('holds a whole completion and tells it as events at its end', () => {
    const completion = {
      id: 'c',
      object: 'chat.completion',
      model: 'm',
      choices: [{ index: 0, message: { role: 'assistant', content: 'Hi' }, finish_reason: 'stop' }],
      usage,
    };
    const text = JSON.stringify(completion);
    const { passed, usage: u } = run(['  ', text.slice(0, 10), text.slice(10)]);
    expect(passed.slice(0, 3)).toEqual(['', '', '']);
    expect(passed[3]).toContain('event: message_start');
    expect(passed[3]).toContain('"text":"Hi"');
    expect(u).toMatchObject({ inputTokens: 5, outputTokens: 2 });
  });
});
