import { describe, expect, it } from 'vitest';
import type { CompiledBackend } from '../../model/routing-table.js';
import type { Usage } from '../../model/usage.js';
import { priced } from './usage-cost.js';
import { lastUsageObject, reportedCounts, toUsage } from './usage-object.js';

const usage = (u: Partial<Usage>): Usage => ({ inputTokens: 0, outputTokens: 0, cachedInputTokens: 0, reasoningTokens: 0, estimated: false, ...u });
const backend = (pricing: CompiledBackend['pricing']) => ({ pricing }) as CompiledBackend;

describe('the cost put on a usage record', () => {
  it("is the backend's price of the usage, in the gateway's currency", () => {
    // 1,000 input of which 400 cached, 200 output at 0.15 / 0.075 / 0.60: 600 × 0.15 + 400 × 0.075 + 200 × 0.60 = 240 µ.
    const u = priced(
      usage({ inputTokens: 1000, cachedInputTokens: 400, outputTokens: 200 }),
      backend({ inputPerMTok: 150_000, cachedInputPerMTok: 75_000, outputPerMTok: 600_000 }),
      'chat.completions',
      'EUR',
    );
    expect(u.cost).toEqual({ micros: 240, known: true, currency: 'EUR' });
  });

  it("prices an OpenAI answer's cache_write_tokens as cache writes where the backend sets cacheWritePerMTok, else unknown", () => {
    const answer = Buffer.from(
      '{"usage":{"prompt_tokens":1000,"completion_tokens":100,"prompt_tokens_details":{"cached_tokens":400,"cache_write_tokens":200}}}',
    );
    const u = toUsage(reportedCounts(lastUsageObject(answer)!), false);
    // 400 uncached × 1.00 + 400 cached × 0.10 + 200 written × 1.25 + 100 output × 4.00 = 400 + 40 + 250 + 400 = 1,090 µ.
    const prices = { inputPerMTok: 1_000_000, cachedInputPerMTok: 100_000, outputPerMTok: 4_000_000 };
    const cost = (p: CompiledBackend['pricing']) => priced(u, backend(p), 'chat.completions', 'USD').cost;
    expect(cost({ ...prices, cacheWritePerMTok: 1_250_000 })).toEqual({ micros: 1090, known: true, currency: 'USD' });
    expect(cost(prices)?.known).toBe(false);
  });

  it('is unknown without pricing, or without a price the usage needs; nothing consumed costs 0 either way', () => {
    expect(priced(usage({ inputTokens: 5 }), backend(undefined), 'embeddings', 'USD').cost?.known).toBe(false);
    expect(priced(usage({ inputTokens: 5, outputTokens: 1 }), backend({ inputPerMTok: 1 }), 'chat.completions', 'USD').cost?.known).toBe(false);
    expect(priced(usage({}), backend(undefined), 'chat.completions', 'USD').cost).toEqual({ micros: 0, known: true, currency: 'USD' });
    expect(priced(usage({ characters: 3 }), undefined, 'audio.speech', 'USD').cost?.known).toBe(false);
  });

  it('prices the images counted at the size and quality the request named', () => {
    const b = backend({ imagePer: [{ size: '1024x1024', quality: 'high', price: 167_000 }, { price: 11_000 }] });
    expect(priced(usage({ images: { count: 2, size: '1024x1024', quality: 'high' } }), b, 'images.generations', 'USD').cost?.micros).toBe(334_000);
    expect(priced(usage({ images: { count: 2, size: '1024x1536' } }), b, 'images.generations', 'USD').cost?.micros).toBe(22_000);
  });
});
