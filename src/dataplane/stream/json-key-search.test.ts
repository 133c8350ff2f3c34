import { describe, expect, it } from 'vitest';
import { lastKeyAt, QuotedKey } from './json-key-search.js';

describe('lastKeyAt', () => {
  it('finds the last "key" starting at or before the offset given, or -1', () => {
    const key = new QuotedKey('usage');
    const text = Buffer.from('{"usage":1} "usage" "usag" usage"');
    expect(lastKeyAt(text, key, text.length)).toBe(12);
    expect(lastKeyAt(text, key, 12)).toBe(12);
    expect(lastKeyAt(text, key, 11)).toBe(1);
    expect(lastKeyAt(text, key, 0)).toBe(-1);
    expect(lastKeyAt(text, key, -1)).toBe(-1);
    expect(lastKeyAt(Buffer.from('"usa'), key, 4)).toBe(-1);
  });

  it("finds what Buffer's lastIndexOf finds, from every offset, in text made of the key's own bytes", () => {
    // The search skips by the byte under its window, so text of the keys' bytes is where a skip could jump a match.
    let seed = 11;
    const next = (n: number): number => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31), seed % n);
    for (const name of ['model', 'usage', 'aa']) {
      const key = new QuotedKey(name);
      const alphabet = [...new Set(`"${name}x `)];
      let matches = 0;
      for (let i = 0; i < 500; i++) {
        const chars = Array.from({ length: next(60) }, () => alphabet[next(alphabet.length)]);
        for (let k = next(3); k > 0; k--) chars.splice(next(chars.length + 1), 0, `"${name}"`);
        const text = Buffer.from(chars.join(''));
        for (let from = -1; from <= text.length; from++) {
          const want = from < 0 ? -1 : text.lastIndexOf(key.bytes, from);
          if (want >= 0) matches++;
          expect(lastKeyAt(text, key, from), `${text} from ${from}`).toBe(want);
        }
      }
      expect(matches).toBeGreaterThan(1_000);
    }
  });
});
