// The Vercel AI SDK (`ai` + `@ai-sdk/openai`) against the real executable. Its providers validate every answer and
// every stream event against schemas of the OpenAI API, so a shape the node SDK forgives fails here: chat and
// Responses, plain and streamed, tool calls, embeddings, and the errors it maps to APICallError.
import { createOpenAI } from '@ai-sdk/openai';
import { embed, embedMany, generateText, streamText } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callFailure as failure, streamedText } from '../support/ai-sdk.js';
import { EXAMPLE_KEY, startServedExamples, type ServedExamples } from './served-examples.js';

let served: ServedExamples;
let provider: ReturnType<typeof createOpenAI>;

beforeAll(async () => {
  served = await startServedExamples();
  provider = createOpenAI({ apiKey: EXAMPLE_KEY, baseURL: served.baseURL });
}, 60_000);
afterAll(() => served?.stop());

describe('the Vercel AI SDK against the gateway', () => {
  it('generateText on chat completions and on Responses, with usage', async () => {
    for (const model of [provider.chat('demo-chat'), provider.responses('demo-chat')]) {
      const r = await generateText({ model, prompt: 'vercel says hi', maxRetries: 0 });
      expect(r.text).toContain('vercel says hi');
      expect(r.finishReason).toBe('stop');
      expect(r.usage.totalTokens).toBeGreaterThan(0);
    }
  });

  it('streamText on chat completions and on Responses: every event parses, the text and usage arrive', async () => {
    for (const model of [provider.chat('demo-chat'), provider.responses('demo-chat')]) {
      const { text, errors, result: r } = await streamedText({ model, prompt: 'stream through vercel', maxRetries: 0 });
      expect(errors).toEqual([]);
      expect(text).toContain('stream through vercel');
      expect((await r.usage).totalTokens).toBeGreaterThan(0);
    }
  });

  it('embed and embedMany', async () => {
    const one = await embed({ model: provider.embedding('demo-embed'), value: 'a', maxRetries: 0 });
    expect(one.embedding).toHaveLength(256);
    const many = await embedMany({ model: provider.embedding('demo-embed'), values: ['a', 'b', 'c'], maxRetries: 0 });
    expect(many.embeddings).toHaveLength(3);
    expect(many.embeddings[0]).toEqual(one.embedding);
  });

  it('errors: 401 and 404 are not retryable, 429 is, each with its status', async () => {
    const wrong = createOpenAI({ apiKey: 'sk-wrong', baseURL: served.baseURL });
    const e401 = await failure(generateText({ model: wrong.chat('demo-chat'), prompt: 'x', maxRetries: 0 }));
    expect([e401.statusCode, e401.isRetryable]).toEqual([401, false]);
    const e404 = await failure(generateText({ model: provider.chat('no-such-model'), prompt: 'x', maxRetries: 0 }));
    expect([e404.statusCode, e404.isRetryable]).toEqual([404, false]);
    expect(e404.message).toContain('no-such-model');
    const e429 = await failure(generateText({ model: provider.chat('limited'), prompt: 'x', maxRetries: 0 }));
    expect([e429.statusCode, e429.isRetryable]).toEqual([429, true]);
    expect(e429.responseHeaders?.['retry-after']).toBe('7');
  });

  it('a stream the upstream cuts ends in an error the SDK reports, not a validation failure', async () => {
    for (const model of [provider.chat('cut'), provider.responses('cut')]) {
      const errors: unknown[] = [];
      const r = streamText({ model, prompt: 'x', maxRetries: 0, onError: ({ error }) => void errors.push(error) });
      for await (const _ of r.fullStream);
      expect(errors).toHaveLength(1);
      const text = JSON.stringify(errors[0]) + String(errors[0]);
      expect(text).not.toMatch(/TypeValidationError|Type validation failed/);
      expect(text).toContain('upstream');
    }
  });
});
