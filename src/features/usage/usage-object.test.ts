import { describe, expect, it } from 'vitest';
import { AnswerTail as AnswerBytes } from '../../dataplane/stream/sse.js';
import { isEmpty, lastSeconds, lastUsageObject, reportedCounts, toUsage } from './usage-object.js';

const read = (text: string | Buffer) => {
  const u = lastUsageObject(typeof text === 'string' ? Buffer.from(text) : text);
  return u && reportedCounts(u);
};

describe('reading the usage object', () => {
  it('reads chat/embeddings usage', () => {
    expect(read('{"id":"x","usage":{"prompt_tokens":11,"completion_tokens":7,"total_tokens":18}}')).toEqual({ inputTokens: 11, outputTokens: 7 });
    expect(read('{"data":[],"usage":{"prompt_tokens":4,"total_tokens":4}}')).toEqual({ inputTokens: 4 });
  });

  it('reads responses usage with its cached and reasoning details', () => {
    const text = '{"usage":{"input_tokens":5,"input_tokens_details":{"cached_tokens":2},"output_tokens":3,"output_tokens_details":{"reasoning_tokens":1}}}';
    expect(read(text)).toEqual({ inputTokens: 5, outputTokens: 3, cachedInputTokens: 2, reasoningTokens: 1 });
  });

  it("reads chat's prompt and completion details", () => {
    const text =
      '{"usage": {"prompt_tokens": 20, "completion_tokens": 9, "prompt_tokens_details": {"cached_tokens": 16}, "completion_tokens_details": {"reasoning_tokens": 4}}}';
    expect(read(text)).toEqual({ inputTokens: 20, outputTokens: 9, cachedInputTokens: 16, reasoningTokens: 4 });
  });

  it("reads the cache writes of chat's and Responses' usage (cache_write_tokens), clamped to the uncached input", () => {
    const chat = '{"usage":{"prompt_tokens":1200,"completion_tokens":9,"prompt_tokens_details":{"cached_tokens":1000,"cache_write_tokens":150}}}';
    expect(read(chat)).toMatchObject({ inputTokens: 1200, cachedInputTokens: 1000, cacheWriteInputTokens: 150 });
    expect(toUsage(read(chat)!, false)).toMatchObject({ inputTokens: 1200, cachedInputTokens: 1000, cacheWriteInputTokens: 150 });
    const responses = '{"usage":{"input_tokens":50,"input_tokens_details":{"cached_tokens":0,"cache_write_tokens":40},"output_tokens":3}}';
    expect(toUsage(read(responses)!, false)).toMatchObject({ inputTokens: 50, cacheWriteInputTokens: 40 });
    expect(toUsage({ inputTokens: 10, cachedInputTokens: 8, cacheWriteInputTokens: 5 }, false)).toMatchObject({ cacheWriteInputTokens: 2 });
    // OpenAI's usual 0 leaves the usage without cache writes, as before.
    expect(toUsage({ inputTokens: 10, cacheWriteInputTokens: 0 }, false)).not.toHaveProperty('cacheWriteInputTokens');
  });

  it('reads the image and audio parts of every shape that reports them', () => {
    // gpt-image-1: its output tokens are the image made.
    const image =
      '{"data":[],"usage":{"input_tokens":50,"input_tokens_details":{"text_tokens":10,"image_tokens":40},"output_tokens":4160,"total_tokens":4210}}';
    expect(read(image)).toEqual({ inputTokens: 50, outputTokens: 4160, imageInputTokens: 40, imageOutputTokens: 4160 });
    // A newer image model that splits its output.
    const split =
      '{"usage":{"input_tokens":5,"input_tokens_details":{"text_tokens":5,"image_tokens":0},"output_tokens":300,"output_tokens_details":{"image_tokens":272,"text_tokens":28}}}';
    expect(read(split)).toMatchObject({ imageInputTokens: 0, imageOutputTokens: 272 });
    // gpt-4o-transcribe's input_token_details (singular).
    const transcript =
      '{"text":"hi","usage":{"type":"tokens","input_tokens":14,"input_token_details":{"text_tokens":0,"audio_tokens":14},"output_tokens":45,"total_tokens":59}}';
    expect(read(transcript)).toEqual({ inputTokens: 14, outputTokens: 45, audioInputTokens: 14 });
    // An audio chat completion.
    const chat =
      '{"usage":{"prompt_tokens":30,"completion_tokens":120,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":12},"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":100}}}';
    expect(read(chat)).toEqual({ inputTokens: 30, outputTokens: 120, cachedInputTokens: 0, reasoningTokens: 0, audioInputTokens: 12, audioOutputTokens: 100 });
    expect(toUsage(read(chat)!, false)).toMatchObject({ audioInputTokens: 12, audioOutputTokens: 100 });
    // Chat's zero counts leave the usage without the parts.
    expect(toUsage({ inputTokens: 3, audioInputTokens: 0 }, false)).not.toHaveProperty('audioInputTokens');
  });

  it('reads the duration form of transcription usage', () => {
    expect(read('{"text":"hi","usage":{"type":"duration","seconds":7}}')).toEqual({ seconds: 7 });
  });

  it('takes the last non-null usage in an SSE stream', () => {
    const sse = [
      'data: {"choices":[{"delta":{"content":"a"}}],"usage":null}',
      'data: {"choices":[],"usage":{"prompt_tokens":9,"completion_tokens":2}}',
      'data: [DONE]',
    ].join('\n\n');
    expect(read(sse)).toEqual({ inputTokens: 9, outputTokens: 2 });
    expect(read('data: {"usage":null}\n\ndata: [DONE]')).toBeUndefined();
  });

  it('reads usage nested in response.completed, after an output holding braces and a quoted "usage"', () => {
    const event = `data: ${JSON.stringify({ type: 'response.completed', response: { output: [{ content: [{ text: 'a } "usage": {"input_tokens": 99} {' }] }], usage: { input_tokens: 3, output_tokens: 4 } } })}\n\n`;
    expect(read(event)).toEqual({ inputTokens: 3, outputTokens: 4 });
  });

  it('reads the bytes of UTF-8 text: multi-byte characters around and inside the usage object, escapes in strings', () => {
    const text = JSON.stringify({
      choices: [{ message: { content: 'ünïcødé 😀 } { "usage": 𝄞 \\"usage\\": {"prompt_tokens": 99}' } }],
      usage: { prompt_tokens: 5, completion_tokens: 6, note: 'é}😀{"', prompt_tokens_details: { cached_tokens: 1 } },
    });
    expect(read(text)).toEqual({ inputTokens: 5, outputTokens: 6, cachedInputTokens: 1 });
    expect(lastUsageObject(Buffer.from(text))?.['note']).toBe('é}😀{"');
    // A usage object cut in the middle of a four-byte character is not read.
    const cut = Buffer.from(text);
    expect(read(cut.subarray(0, cut.indexOf('😀', cut.lastIndexOf('note')) + 2))).toBeUndefined();
  });

  it('returns undefined when there is no usage, or only a cut one', () => {
    expect(read('{"text":"hello"}')).toBeUndefined();
    expect(read('{"usage":{"prompt_tokens":4,"comp')).toBeUndefined();
  });

  it('drops counts that are not safe non-negative integers (400 digits would be Infinity)', () => {
    expect(read(`{"usage":{"prompt_tokens":${'9'.repeat(400)},"completion_tokens":3}}`)).toEqual({ outputTokens: 3 });
    expect(read('{"usage":{"prompt_tokens":9007199254740993}}')).toEqual({});
    expect(read('{"usage":{"prompt_tokens":-4,"completion_tokens":1.5}}')).toEqual({});
  });
});

describe('toUsage', () => {
  it('fills what was not reported with 0 and keeps the parts within their totals', () => {
    expect(toUsage({ inputTokens: 4, cachedInputTokens: 9 }, false)).toEqual({
      inputTokens: 4,
      outputTokens: 0,
      cachedInputTokens: 4,
      reasoningTokens: 0,
      estimated: false,
    });
    expect(isEmpty({})).toBe(true);
    expect(isEmpty({ seconds: 3 })).toBe(false);
  });
});

describe('lastSeconds', () => {
  it("reads a video's seconds (a string) and a verbose transcription's duration, the last one winning", () => {
    expect(lastSeconds('{"id":"video_1","status":"queued","seconds":"8"}')).toBe(8);
    expect(lastSeconds('{"segments":[{"start":0,"end":1.5}],"duration":12.25,"text":"x"}')).toBe(12.25);
    expect(lastSeconds('{"text":"no length"}')).toBeUndefined();
  });
});

describe('AnswerBytes', () => {
  it('keeps the end of a long stream in bounded memory', () => {
    const bytes = new AnswerBytes(0);
    for (let i = 0; i < 10_000; i++) bytes.push(Buffer.from(`data: {"n":${i}}\n\n`));
    bytes.push(Buffer.from('data: {"usage":{"prompt_tokens":1,"completion_tokens":2}}\n\n'));
    expect(bytes.text().length).toBeLessThanOrEqual(64 * 1024);
    expect(bytes.total).toBeGreaterThan(100_000);
    expect(read(bytes.tail())).toEqual({ inputTokens: 1, outputTokens: 2 });
  });

  it('keeps everything up to its cap', () => {
    const bytes = new AnswerBytes(1024 * 1024);
    for (let i = 0; i < 1_000; i++) bytes.push(Buffer.from(`data: {"n":${i}}\n\n`));
    expect(bytes.text().split('\n\n')).toHaveLength(1_001);
  });
});
