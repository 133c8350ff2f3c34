import { describe, expect, it } from 'vitest';
import { anthropicUsage, chatUsage } from './answer-parts.js';

describe("a chat answer's usage", () => {
  it('carries cache writes (prompt_tokens_details.cache_write_tokens), clamped to the input not read from the cache', () => {
    const u = chatUsage({ prompt_tokens: 168, completion_tokens: 30, prompt_tokens_details: { cached_tokens: 40, cache_write_tokens: 8 } });
    expect(u).toEqual({ inputTokens: 168, outputTokens: 30, cachedInputTokens: 40, cacheWriteInputTokens: 8, reasoningTokens: 0, estimated: false });
    expect(chatUsage({ prompt_tokens: 10, prompt_tokens_details: { cached_tokens: 8, cache_write_tokens: 5 } })?.cacheWriteInputTokens).toBe(2);
    expect(chatUsage({ prompt_tokens: 10, prompt_tokens_details: { cache_write_tokens: 0 } })).not.toHaveProperty('cacheWriteInputTokens');
  });

  it('is told to an Anthropic client with the writes in cache_creation_input_tokens, out of input_tokens', () => {
    const u = chatUsage({ prompt_tokens: 168, completion_tokens: 30, prompt_tokens_details: { cached_tokens: 40, cache_write_tokens: 8 } });
    expect(anthropicUsage(u)).toEqual({ input_tokens: 120, cache_creation_input_tokens: 8, cache_read_input_tokens: 40, output_tokens: 30 });
  });
});
