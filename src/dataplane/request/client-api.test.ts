import { describe, expect, it } from 'vitest';
import { clientApiOf } from './client-api.js';

describe('clientApiOf', () => {
  it("is Anthropic's on the Messages API's paths and family, and for any request carrying anthropic-version", () => {
    expect(clientApiOf('/v1/messages', undefined, undefined)).toBe('anthropic');
    expect(clientApiOf('/v1/messages/count_tokens', undefined, undefined)).toBe('anthropic');
    expect(clientApiOf('/v1/anything', 'messages', undefined)).toBe('anthropic');
    expect(clientApiOf('/v1/models', undefined, '2023-06-01')).toBe('anthropic');
  });

  it("is OpenAI's everywhere else", () => {
    expect(clientApiOf('/v1/chat/completions', 'chat.completions', undefined)).toBe('openai');
    expect(clientApiOf('/v1/messagesx', undefined, undefined)).toBe('openai');
    expect(clientApiOf('/v1/models', undefined, undefined)).toBe('openai');
  });
});
