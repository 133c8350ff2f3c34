import { describe, expect, it } from 'vitest';
import type { Usage } from '../../model/usage.js';
import { beyondCreate } from './beyond-create.js';

const final: Usage = { inputTokens: 1200, outputTokens: 3000, cachedInputTokens: 200, reasoningTokens: 500, estimated: false };

describe('beyondCreate', () => {
  it("takes the create's input estimate off the uncached input and keeps the rest as the upstream reported it", () => {
    expect(beyondCreate(final, 300)).toEqual({ ...final, inputTokens: 900 });
  });

  it('never goes below 0: an estimate above the uncached input takes the cached part, then nothing', () => {
    expect(beyondCreate(final, 1100)).toEqual({ ...final, inputTokens: 100, cachedInputTokens: 100 });
    expect(beyondCreate(final, 5000)).toEqual({ ...final, inputTokens: 0, cachedInputTokens: 0 });
  });

  it('keeps cache writes within what is left of the input', () => {
    const anthropic: Usage = { ...final, cacheWriteInputTokens: 600, cacheWrite1hInputTokens: 400 };
    expect(beyondCreate(anthropic, 300)).toEqual({ ...anthropic, inputTokens: 900 });
    expect(beyondCreate(anthropic, 800)).toMatchObject({ inputTokens: 400, cachedInputTokens: 200, cacheWriteInputTokens: 200, cacheWrite1hInputTokens: 200 });
  });
});
