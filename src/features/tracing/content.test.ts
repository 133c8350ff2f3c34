import { describe, expect, it } from 'vitest';
import { CONTENT_CHARS, inputContent, OutputCollector } from './content.js';

describe('inputContent', () => {
  it('takes the messages (chat) or input (responses) member, and nothing from a body that has neither', () => {
    expect(inputContent(Buffer.from('{"model":"m","messages":[{"role":"user","content":"hi"}]}'), [])).toBe('[{"role":"user","content":"hi"}]');
    expect(inputContent(Buffer.from('{"model":"m","input":"hi"}'), [])).toBe('"hi"');
    expect(inputContent(Buffer.from('{"model":"m"}'), [])).toBeUndefined();
    expect(inputContent(Buffer.from('not json'), [])).toBeUndefined();
  });

  it('is bounded', () => {
    const long = inputContent(Buffer.from(JSON.stringify({ input: 'x'.repeat(CONTENT_CHARS * 2) })), [])!;
    expect(long.length).toBeLessThan(CONTENT_CHARS + 20);
    expect(long.endsWith('…[truncated]')).toBe(true);
  });
});

describe('OutputCollector', () => {
  it("joins a stream's text deltas across chunk boundaries (chat and responses events)", () => {
    const c = new OutputCollector(true);
    const events =
      'data: {"choices":[{"delta":{"role":"assistant"}}]}\n\ndata: {"choices":[{"delta":{"content":"Hel"}}]}\n\n' +
      'data: {"type":"response.output_text.delta","delta":"lo"}\n\ndata: [DONE]\n\n';
    for (let i = 0; i < events.length; i += 7) c.push(Buffer.from(events.slice(i, i + 7)));
    expect(c.text([])).toBe('Hello');
  });

  it("reads a JSON answer's messages and masks the given secrets", () => {
    const c = new OutputCollector(false);
    c.push(Buffer.from('{"choices":[{"message":{"role":"assistant","content":"key sk-secret-123"}}]}'));
    expect(c.text(['sk-secret-123'])).toBe('[{"role":"assistant","content":"key *************"}]');
  });

  it('gives nothing for an answer without content', () => {
    expect(new OutputCollector(true).text([])).toBeUndefined();
    const c = new OutputCollector(false);
    c.push(Buffer.from('{"data":[1]}'));
    expect(c.text([])).toBeUndefined();
  });
});
