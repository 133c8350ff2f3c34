import { describe, expect, it } from 'vitest';
import { type Counting, inputCounting, outputCounting, tokensOf } from './estimate.js';
import { countTokens } from './tokenizer.js';

const body = (o: unknown) => Buffer.from(JSON.stringify(o));
const count = async (text: string) => (await countTokens([text]))[0]!;
const total = async (c: Counting) => tokensOf(c, await countTokens(c.texts));
const input = (family: Parameters<typeof inputCounting>[0], b: Buffer | undefined) => total(inputCounting(family, b));
const output = (text: string, isStream: boolean, isJson: boolean) => total(outputCounting(text, isStream, isJson));

describe('the tokenizer (a worker thread)', () => {
  it('counts tokens with o200k_base, special-token text included', async () => {
    expect(await count('Hello world')).toBe(2);
    expect(await count('hi <|endoftext|> there')).toBeGreaterThan(3);
    expect(await countTokens(['', 'a b c'])).toEqual([0, 3]);
  });

  it('counts a long run without spaces in linear time, in pieces', async () => {
    // Whole, this run would take minutes (BPE is quadratic in a word's length): the test would time out.
    expect(await count('b'.repeat(1 << 20))).toBeGreaterThan(200_000);
  });
});

describe('input', () => {
  it('counts chat message text plus the template tokens, not roles or image URLs', async () => {
    const text = 'Tell me about the weather in Paris today.';
    expect(await input('chat.completions', body({ model: 'm', messages: [{ role: 'user', content: text }] }))).toBe((await count(text)) + 3 + 3);
    const parts = body({
      model: 'm',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text },
            { type: 'image_url', image_url: { url: `data:image/png;base64,${'A'.repeat(5000)}` } },
          ],
        },
      ],
    });
    expect(await input('chat.completions', parts)).toBe((await count(text)) + 6);
  });

  it('counts responses input and instructions, embeddings inputs and token arrays, image prompts', async () => {
    expect(await input('responses', body({ model: 'm', input: 'one two three', instructions: 'be brief' }))).toBe(
      (await count('one two three')) + (await count('be brief')),
    );
    expect(await input('embeddings', body({ model: 'm', input: ['alpha beta', 'gamma'] }))).toBe((await count('alpha beta')) + (await count('gamma')));
    expect(await input('embeddings', body({ model: 'm', input: [1, 2, 3, 4] }))).toBe(4);
    expect(await input('images.generations', body({ model: 'm', prompt: 'a red fox' }))).toBe(await count('a red fox'));
    expect(await input('audio.speech', body({ model: 'm', input: 'hello' }))).toBe(0);
    expect(await input('chat.completions', undefined)).toBe(0);
  });

  it('counts a sample of a body over 128 KiB, scaled to its size', async () => {
    const text = 'lorem ipsum dolor sit amet '.repeat(40_000);
    const n = await input('chat.completions', body({ model: 'm', messages: [{ role: 'user', content: text }] }));
    const exact = await count(text);
    expect(n).toBeGreaterThan(exact * 0.9);
    expect(n).toBeLessThan(exact * 1.2);
  });
});

describe('output', () => {
  it('counts the deltas of a chat stream, not ids or finish reasons', async () => {
    const sse =
      ['Hello', ' there,', ' friend']
        .map((c) => `data: {"id":"chatcmpl-1","choices":[{"index":0,"delta":{"content":${JSON.stringify(c)}},"finish_reason":null}]}\n\n`)
        .join('') + 'data: [DONE]\n\n';
    expect(await output(sse, true, false)).toBe((await count('Hello')) + (await count(' there,')) + (await count(' friend')));
  });

  it('counts Responses deltas once, not again in the .done and completed events', async () => {
    const events = [
      { type: 'response.output_text.delta', delta: 'Bonjour' },
      { type: 'response.output_text.done', text: 'Bonjour' },
      { type: 'response.completed', response: { output: [{ content: [{ type: 'output_text', text: 'Bonjour' }] }] } },
    ];
    expect(await output(events.map((e) => `data: ${JSON.stringify(e)}\n\n`).join(''), true, false)).toBe(await count('Bonjour'));
  });

  it('counts the message text of a JSON answer, raw text when it was cut, and plain text whole', async () => {
    const json = JSON.stringify({ id: 'x', choices: [{ message: { role: 'assistant', content: 'All good here.' }, finish_reason: 'stop' }] });
    expect(await output(json, false, true)).toBe(await count('All good here.'));
    expect(await output(json.slice(0, 40), false, true)).toBe(await count(json.slice(0, 40)));
    const srt = '1\n00:00:00,000 --> 00:00:01,000\nhello';
    expect(await output(srt, false, false)).toBe(await count(srt));
  });

  it('scales a sample to the whole answer', () => {
    expect(tokensOf(outputCounting('x', false, false, 2.5), [4])).toBe(10);
  });
});
