import { describe, expect, it } from 'vitest';
import { ClaimSet } from './claim-set.js';

describe('ClaimSet', () => {
  it('claims a key once until it expires', () => {
    let now = 1_000;
    const claims = new ClaimSet(10, () => now);
    expect(claims.claim('a', 100)).toBe(true);
    expect(claims.claim('a', 100)).toBe(false);
    expect(claims.claim('b', 100)).toBe(true);
    now += 100;
    expect(claims.claim('a', 100)).toBe(true);
  });

  it('holds at most max keys, forgetting the oldest', () => {
    const claims = new ClaimSet(2);
    for (const k of ['a', 'b', 'c']) expect(claims.claim(k, 60_000)).toBe(true);
    expect(claims.claim('c', 60_000)).toBe(false);
    expect(claims.claim('b', 60_000)).toBe(false);
    expect(claims.claim('a', 60_000)).toBe(true); // forgotten when c came
  });
});
