import { describe, expect, it } from 'vitest';
import { estimateInput, estimateOutput } from './estimate.js';
import { tokenCounter, type TokenCounter } from './tokenizer.js';

const count = (await tokenCounter()) as TokenCounter;
const body = (o: unknown) => Buffer.from(JSON.stringify(o));

describe('the tokenizer', () => {
  it('counts tokens with o200k_base, special-token text included', () => {
    expect(count('Hello world')).toBe(2);
    expect(count('hi <|endoftext|> there')).toBeGreaterThan(3);
    expect(count('')).toBe(0);
  });

  it('counts a long run without spaces in linear time, in pieces', () => {
    // Whole, this run would take minutes (BPE is quadratic in a word's length): the test would time out.
    expect(count('b'.repeat(1 << 20))).toBeGreaterThan(200_000);
  });
});

describe('estimateInput', () => {
  it('counts chat message text plus the template tokens, not roles or image URLs', () => {
    const text = 'Tell me about the weather in Paris today.';
    const n = estimateInput('chat.completions', body({ model: 'm', messages: [{ role: 'user', content: text }] }), count);
    expect(n).toBe(count(text) + 3 + 3);
    const parts = body({
      model: 'm',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,' + 'A'.repeat(5000) } },
          ],
        },
      ],
    });
    expect(estimateInput('chat.completions', parts, count)).toBe(count(text) + 6);
  });

  it('counts responses input and instructions, embeddings inputs and token arrays, image prompts', () => {
    expect(estimateInput('responses', body({ model: 'm', input: 'one two three', instructions: 'be brief' }), count)).toBe(
      count('one two three') + count('be brief'),
    );
    expect(estimateInput('embeddings', body({ model: 'm', input: ['alpha beta', 'gamma'] }), count)).toBe(count('alpha beta') + count('gamma'));
    expect(estimateInput('embeddings', body({ model: 'm', input: [1, 2, 3, 4] }), count)).toBe(4);
    expect(estimateInput('images.generations', body({ model: 'm', prompt: 'a red fox' }), count)).toBe(count('a red fox'));
    expect(estimateInput('audio.speech', body({ model: 'm', input: 'hello' }), count)).toBe(0);
    expect(estimateInput('chat.completions', undefined, count)).toBe(0);
  });

  it('counts a sample of a body over 128 KiB, scaled to its size', () => {
    const text = 'lorem ipsum dolor sit amet '.repeat(40_000);
    const n = estimateInput('chat.completions', body({ model: 'm', messages: [{ role: 'user', content: text }] }), count);
    const exact = count(text);
    expect(n).toBeGreaterThan(exact * 0.9);
    expect(n).toBeLessThan(exact * 1.2);
  });
});

describe('estimateOutput', () => {
  it('counts the deltas of a chat stream, not ids or finish reasons', () => {
    const sse =
      ['Hello', ' there,', ' friend']
        .map((c) => `data: {"id":"chatcmpl-1","choices":[{"index":0,"delta":{"content":${JSON.stringify(c)}},"finish_reason":null}]}\n\n`)
        .join('') + 'data: [DONE]\n\n';
    expect(estimateOutput(sse, true, false, count)).toBe(count('Hello') + count(' there,') + count(' friend'));
  });

  it('counts Responses deltas once, not again in the .done and completed events', () => {
    const events = [
      { type: 'response.output_text.delta', delta: 'Bonjour' },
      { type: 'response.output_text.done', text: 'Bonjour' },
      { type: 'response.completed', response: { output: [{ content: [{ type: 'output_text', text: 'Bonjour' }] }] } },
    ];
    expect(estimateOutput(events.map((e) => `data: ${JSON.stringify(e)}\n\n`).join(''), true, false, count)).toBe(count('Bonjour'));
  });

  it('counts the message text of a JSON answer, raw text when it was cut, and plain text whole', () => {
    const json = JSON.stringify({ id: 'x', choices: [{ message: { role: 'assistant', content: 'All good here.' }, finish_reason: 'stop' }] });
    expect(estimateOutput(json, false, true, count)).toBe(count('All good here.'));
    expect(estimateOutput(json.slice(0, 40), false, true, count)).toBe(count(json.slice(0, 40)));
    expect(estimateOutput('1\n00:00:00,000 --> 00:00:01,000\nhello', false, false, count)).toBe(count('1\n00:00:00,000 --> 00:00:01,000\nhello'));
  });
});
