import { describe, expect, it } from 'vitest';
import { extractUsage, TailBuffer } from './usage-tap.js';

describe('extractUsage', () => {
  it('reads chat/embeddings usage', () => {
    expect(extractUsage('{"id":"x","usage":{"prompt_tokens":11,"completion_tokens":7,"total_tokens":18}}')).toEqual({ input: 11, output: 7 });
    expect(extractUsage('{"data":[],"usage":{"prompt_tokens":4,"total_tokens":4}}')).toEqual({ input: 4, output: undefined });
  });

  it('reads responses usage without confusing the *_details keys', () => {
    const text = '{"usage":{"input_tokens":5,"input_tokens_details":{"cached_tokens":99},"output_tokens":3,"output_tokens_details":{"reasoning_tokens":1}}}';
    expect(extractUsage(text)).toEqual({ input: 5, output: 3 });
  });

  it('takes the last non-null usage in an SSE stream', () => {
    const sse = [
      'data: {"choices":[{"delta":{"content":"a"}}],"usage":null}',
      'data: {"choices":[],"usage":{"prompt_tokens":9,"completion_tokens":2}}',
      'data: [DONE]',
    ].join('\n\n');
    expect(extractUsage(sse)).toEqual({ input: 9, output: 2 });
    expect(extractUsage('data: {"usage":null}\n\ndata: [DONE]')).toBeUndefined();
  });

  it('returns undefined when there is no usage', () => {
    expect(extractUsage('{"text":"hello"}')).toBeUndefined();
  });
});

describe('TailBuffer', () => {
  it('keeps the end of a long stream in bounded memory', () => {
    const tail = new TailBuffer();
    for (let i = 0; i < 10_000; i++) tail.push(Buffer.from(`data: {"n":${i}}\n\n`));
    tail.push(Buffer.from('data: {"usage":{"prompt_tokens":1,"completion_tokens":2}}\n\n'));
    const text = tail.text();
    expect(text.length).toBeLessThan(40_000);
    expect(extractUsage(text)).toEqual({ input: 1, output: 2 });
  });
});

describe('extractUsage on absurd numbers', () => {
  it('drops counts that are not safe integers (400 digits would be Infinity)', () => {
    expect(extractUsage(`{"usage":{"prompt_tokens":${'9'.repeat(400)},"completion_tokens":3}}`)).toEqual({ input: undefined, output: 3 });
    expect(extractUsage('{"usage":{"prompt_tokens":9007199254740993}}')).toEqual({ input: undefined, output: undefined });
  });
});
