import { describe, expect, it } from 'vitest';
import { TokenBucket } from './token-bucket.js';

describe('TokenBucket', () => {
  it('allows a burst, then the steady rate', () => {
    let t = 0;
    const b = new TokenBucket(10, 3, () => t);
    expect([b.tryTake(), b.tryTake(), b.tryTake()]).toEqual([0, 0, 0]);
    expect(b.tryTake()).toBe(100);
    t += 100;
    expect(b.tryTake()).toBe(0);
    t += 10_000;
    expect([b.tryTake(), b.tryTake(), b.tryTake(), b.tryTake()]).toEqual([0, 0, 0, 100]); // refills to burst, no more
  });
});
