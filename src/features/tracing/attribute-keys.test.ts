import { describe, expect, it } from 'vitest';
import { attributeKey, SHARED_BIT } from './attribute-keys.js';

describe('attribute keys', () => {
  it('one object per name; the first 31 names each with a bit of its own, later ones sharing the last bit', () => {
    const keys = Array.from({ length: 40 }, (_, i) => attributeKey(`test.key.${i}`));
    expect(attributeKey('test.key.3')).toBe(keys[3]);
    const own = keys.slice(0, 31).map((k) => k.bit);
    expect(new Set(own).size).toBe(31);
    for (const bit of own) {
      expect(bit).not.toBe(0);
      expect(bit & (bit - 1)).toBe(0); // exactly one bit
      expect(bit & SHARED_BIT).toBe(0);
    }
    expect(keys.slice(31).every((k) => k.bit === SHARED_BIT)).toBe(true);
  });

  it('keeps no cache for content keys, whenever they are named so', () => {
    expect(attributeKey('test.content', false).values).toBeNull();
    const key = attributeKey('test.later.content');
    expect(key.values).not.toBeNull();
    expect(attributeKey('test.later.content', false)).toBe(key);
    expect(key.values).toBeNull();
  });
});
