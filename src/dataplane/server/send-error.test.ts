import { describe, expect, it } from 'vitest';
import { errorShapeOf } from './send-error.js';

describe('errorShapeOf', () => {
  it("is Anthropic's on the Messages API's paths and family, and for any request carrying anthropic-version", () => {
    expect(errorShapeOf('/v1/messages', undefined, undefined)).toBe('anthropic');
    expect(errorShapeOf('/v1/messages/count_tokens', undefined, undefined)).toBe('anthropic');
    expect(errorShapeOf('/v1/anything', 'messages', undefined)).toBe('anthropic');
    expect(errorShapeOf('/v1/models', undefined, '2023-06-01')).toBe('anthropic');
  });

  it("is OpenAI's everywhere else", () => {
    expect(errorShapeOf('/v1/chat/completions', 'chat.completions', undefined)).toBe('openai');
    expect(errorShapeOf('/v1/messagesx', undefined, undefined)).toBe('openai');
    expect(errorShapeOf('/v1/models', undefined, undefined)).toBe('openai');
  });
});
