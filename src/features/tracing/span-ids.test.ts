import { afterEach, describe, expect, it, vi } from 'vitest';
import { hexOf, OwnSpanContext, randomId, randomWords, readHexId, SPAN_WORDS, TRACE_WORDS } from './span-ids.js';

describe('span ids as words', () => {
  afterEach(() => vi.restoreAllMocks());

  it('makes ids whose hex and words agree, high byte first', () => {
    const words = [0, 0, 0, 0, 0, 0];
    const traceId = randomId(words, 0, 4);
    const spanId = randomId(words, 4, 2);
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(spanId).toMatch(/^[0-9a-f]{16}$/);
    const bytes = Buffer.alloc(24);
    for (const [i, w] of words.entries()) bytes.writeInt32BE(w, i * 4);
    expect(bytes.toString('hex')).toBe(traceId + spanId);
    expect(hexOf(words, 4, 2)).toBe(spanId);
  });

  it('never makes the all-zero (invalid) id', () => {
    vi.spyOn(Math, 'random').mockReturnValue(0);
    const words = [7, 7];
    expect(randomId(words, 0, 2)).toBe('0000000000000001');
    expect(words).toEqual([0, 1]);
  });

  it('reads a received id back into the words it was made from, in either case', () => {
    const words = [0, 0, 0, 0];
    readHexId('0AF7651916CD43DD8448EB211C80319C', words, 0);
    expect(hexOf(words, 0, 4)).toBe('0af7651916cd43dd8448eb211c80319c');
    readHexId('ffffffff00000001', words, 2);
    expect(words.slice(2)).toEqual([-1, 1]);
  });

  it("writes a span's W3C traceparent from its words, with its sampled flag, and its span id's hex when read", () => {
    const words = [0, 0, 0, 0, 0, 0, 0, 0];
    const traceId = randomId(words, TRACE_WORDS, 4);
    randomWords(words, SPAN_WORDS, 2);
    const sampled = new OwnSpanContext(traceId, words, 1, undefined);
    expect(sampled.spanId).toBe(hexOf(words, SPAN_WORDS, 2));
    expect(sampled.traceparent()).toBe(`00-${traceId}-${sampled.spanId}-01`);
    expect(sampled.traceparent()).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    const dropped = new OwnSpanContext(traceId, words, 0, undefined);
    expect(dropped.traceparent()).toBe(`00-${traceId}-${sampled.spanId}-00`);
  });
});
