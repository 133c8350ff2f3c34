import { describe, expect, it } from 'vitest';
import { AnswerTail } from '../../dataplane/stream/sse.js';
import { estimateInput, estimateOutput } from './estimate.js';
import { approximateTokens as count, TokenTally } from './token-count.js';

/** Tokens of separate texts in one estimate (rounded once, as an estimate rounds). */
function counts(...texts: string[]): number {
  const t = new TokenTally();
  for (const text of texts) {
    t.text(text);
    t.end();
  }
  return Math.round(t.tokens());
}
const body = (o: unknown) => Buffer.from(JSON.stringify(o));
const chatStream = (deltas: string[]) =>
  deltas.map((c) => `data: {"id":"chatcmpl-1","choices":[{"index":0,"delta":{"content":${JSON.stringify(c)}},"finish_reason":null}]}\n\n`).join('') +
  'data: {"id":"chatcmpl-1","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n';

describe('input', () => {
  it('counts chat message text plus the template tokens, not roles or image URLs', () => {
    const text = 'Tell me about the weather in Paris today.';
    expect(estimateInput('chat.completions', body({ model: 'm', messages: [{ role: 'user', content: text }] }))).toBe(count(text) + 3 + 3);
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
    expect(estimateInput('chat.completions', parts)).toBe(count(text) + 6);
  });

  it('counts responses input and instructions, embeddings inputs and token arrays, image prompts', () => {
    expect(estimateInput('responses', body({ model: 'm', input: 'one two three', instructions: 'be brief' }))).toBe(counts('one two three', 'be brief'));
    expect(estimateInput('embeddings', body({ model: 'm', input: ['alpha beta', 'gamma'] }))).toBe(counts('alpha beta', 'gamma'));
    expect(estimateInput('embeddings', body({ model: 'm', input: [1, 2, 3, 4] }))).toBe(4);
    expect(estimateInput('images.generations', body({ model: 'm', prompt: 'a red fox' }))).toBe(count('a red fox'));
    expect(estimateInput('audio.speech', body({ model: 'm', input: 'hello' }))).toBe(0);
    expect(estimateInput('chat.completions', undefined)).toBe(0);
  });

  it('counts a sample of a body over 128 KiB, scaled to its size', () => {
    const text = 'lorem ipsum dolor sit amet '.repeat(40_000);
    const n = estimateInput('chat.completions', body({ model: 'm', messages: [{ role: 'user', content: text }] }));
    expect(n).toBeGreaterThan(count(text) * 0.9);
    expect(n).toBeLessThan(count(text) * 1.2);
  });
});

describe('output', () => {
  it('counts nothing in an empty answer or a stream without deltas', () => {
    expect(estimateOutput('', false, false)).toBe(0);
    expect(estimateOutput('', true, false)).toBe(0);
    expect(estimateOutput(chatStream([]), true, false)).toBe(0);
  });

  it('counts the deltas of a chat stream as one text, not ids or finish reasons', () => {
    expect(estimateOutput(chatStream(['Hello', ' there,', ' friend']), true, false)).toBe(count('Hello there, friend'));
    // A word cut across two deltas is one word.
    expect(estimateOutput(chatStream(['extra', 'ordinary']), true, false)).toBe(count('extraordinary'));
  });

  it('decodes escapes in the deltas, and reads tool call arguments and spaced JSON', () => {
    expect(estimateOutput(chatStream(['line one\nline "two"\t\u4e2d\u6587 🙂']), true, false)).toBe(count('line one\nline "two"\t中文 🙂'));
    const ascii = 'data: {"choices":[{"delta":{"content":"\\u4e2d\\u6587 \\ud83d\\ude42"}}]}\n\n';
    expect(estimateOutput(ascii, true, false)).toBe(count('中文 🙂'));
    const tool =
      'data: {"choices": [{"delta": {"tool_calls": [{"index": 0, "function": {"name": "get_weather", "arguments": "{\\"city\\": \\"Paris\\"}"}}]}}]}\r\n\r\n';
    expect(estimateOutput(tool, true, false)).toBe(count('{"city": "Paris"}'));
  });

  it("counts an Anthropic stream's text, tool input and thinking deltas, not its ids, names or usage", () => {
    const ev = (type: string, data: object) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
    const stream = [
      ev('message_start', { message: { id: 'msg_1', model: 'claude', content: [], usage: { input_tokens: 9 } } }),
      ev('content_block_start', { index: 0, content_block: { type: 'thinking', thinking: '' } }),
      ev('content_block_delta', { index: 0, delta: { type: 'thinking_delta', thinking: 'Let me see' } }),
      ev('content_block_start', { index: 1, content_block: { type: 'text', text: '' } }),
      ev('content_block_delta', { index: 1, delta: { type: 'text_delta', text: 'Hello' } }),
      ev('content_block_delta', { index: 1, delta: { type: 'text_delta', text: ' there' } }),
      ev('content_block_start', { index: 2, content_block: { type: 'tool_use', id: 'toolu_1', name: 'Write', input: {} } }),
      ev('content_block_delta', { index: 2, delta: { type: 'input_json_delta', partial_json: '{"path":' } }),
      ev('content_block_delta', { index: 2, delta: { type: 'input_json_delta', partial_json: '"a.txt"}' } }),
    ].join('');
    expect(estimateOutput(stream, true, false)).toBe(count('Let me seeHello there{"path":"a.txt"}'));
  });

  it('counts Responses deltas once, not again in the .done and completed events', () => {
    const events = [
      { type: 'response.output_text.delta', delta: 'Bonjour' },
      { type: 'response.output_text.done', text: 'Bonjour' },
      { type: 'response.completed', response: { output: [{ content: [{ type: 'output_text', text: 'Bonjour' }] }] } },
    ];
    expect(estimateOutput(events.map((e) => `data: ${JSON.stringify(e)}\n\n`).join(''), true, false)).toBe(count('Bonjour'));
  });

  it('counts a stream whose multi-byte characters were split across chunks as the whole', () => {
    const sse = chatStream(['Grüße aus ', '東京', ' 🙂 und ', 'Köln']);
    const bytes = Buffer.from(sse);
    const tail = new AnswerTail(1 << 20);
    // Three-byte chunks cut ü, ß, 東, 京 and 🙂 between them.
    for (let i = 0; i < bytes.length; i += 3) tail.push(bytes.subarray(i, i + 3));
    expect(estimateOutput(tail.text(), true, false)).toBe(count('Grüße aus 東京 🙂 und Köln'));
  });

  it('counts the message text of a JSON answer, raw text when it was cut, and plain text whole', () => {
    const json = JSON.stringify({ id: 'x', choices: [{ message: { role: 'assistant', content: 'All good here.' }, finish_reason: 'stop' }] });
    expect(estimateOutput(json, false, true)).toBe(count('All good here.'));
    expect(estimateOutput(json.slice(0, 40), false, true)).toBe(count(json.slice(0, 40)));
    const srt = '1\n00:00:00,000 --> 00:00:01,000\nhello';
    expect(estimateOutput(srt, false, false)).toBe(count(srt));
  });

  it('scales a sample to the whole answer', () => {
    expect(estimateOutput('one two three four', false, false, 2.5)).toBe(Math.round(count('one two three four') * 2.5));
  });
});
