import { describe, expect, it } from 'vitest';
import { throttled } from './throttled.js';

describe('throttled', () => {
  it('writes the first call, then at most once per interval, with how many were skipped since', () => {
    let now = 50_000;
    const written: number[] = [];
    const warn = throttled(10_000, () => now);
    for (const step of [0, 1_000, 2_000, 9_999, 10_000, 10_001, 25_000]) {
      now = 50_000 + step;
      warn((suppressed) => written.push(suppressed));
    }
    expect(written).toEqual([0, 3, 1]);
  });
});
