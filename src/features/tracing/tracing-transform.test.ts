import { describe, expect, it } from 'vitest';
import { lastModel } from './tracing-transform.js';

const b = (text: string): Buffer => Buffer.from(text, 'utf8');

describe('lastModel', () => {
  it('reads the model an answer names, the last one in an event stream', () => {
    expect(lastModel(b('{"id":"x","model": "gpt-4o-mini-2024-07-18","choices":[]}'))).toBe('gpt-4o-mini-2024-07-18');
    expect(lastModel(b('data: {"model":"a"}\n\ndata: {"model":"b"}\n\ndata: [DONE]\n\n'))).toBe('b');
  });

  it('finds none in a body without one, and ignores values too long or escaped to be a model name', () => {
    expect(lastModel(b('{"data":[{"embedding":[0.1]}]}'))).toBeUndefined();
    expect(lastModel(b(`{"model":"${'m'.repeat(300)}"}`))).toBeUndefined();
    expect(lastModel(b('{"model":"a\\"b"}'))).toBeUndefined();
  });

  it('passes over later "model" keys whose value is no model name, to the last one that is', () => {
    expect(lastModel(b('{"model":"a","meta":{"model":null},"note":"model","m":{"model":"x\\"y"}}'))).toBe('a');
    expect(lastModel(b('"model"'))).toBeUndefined();
  });

  it('reads the bytes: multi-byte names up to 256 characters, JSON whitespace, and no name cut off at the end', () => {
    expect(lastModel(b(`{"model" :\n\t"${'模'.repeat(256)}"}`))).toBe('模'.repeat(256));
    expect(lastModel(b(`{"model":"${'模'.repeat(257)}"}`))).toBeUndefined();
    expect(lastModel(b(`{"model":"${'m'.repeat(256)}"}`))).toBe('m'.repeat(256));
    expect(lastModel(b('{"model":"a"} {"model":"cut'))).toBe('a');
    expect(lastModel(b('{"model":""}'))).toBeUndefined();
  });

  it('finds what a plain search from the end finds, at every offset, among near misses', () => {
    // The search skips ahead by the byte under its window: bytes of "model" around a match are where a skip could
    // jump over it. Random text over those bytes, with a model named at random places in it.
    const alphabet = ['"', 'm', 'o', 'd', 'e', 'l', 'x', ' ', ':'];
    const plain = (bytes: Buffer): string | undefined => {
      for (let at = bytes.length - 7; at >= 0; at--) {
        if (bytes.toString('latin1', at, at + 7) !== '"model"') continue;
        const m = /^"model"[ \t\n\r]*:[ \t\n\r]*"([^"\\]+)"/.exec(bytes.toString('latin1', at));
        if (m) return m[1];
      }
      return undefined;
    };
    let seed = 7;
    const next = (n: number): number => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31), seed % n);
    let found = 0;
    for (let i = 0; i < 5_000; i++) {
      const chars = Array.from({ length: next(40) }, () => alphabet[next(alphabet.length)]);
      for (let k = next(3); k > 0; k--) chars.splice(next(chars.length + 1), 0, next(2) ? `"model":"v${k}"` : `"model" : "w${k}"`);
      const text = chars.join('');
      const want = plain(b(text));
      if (want !== undefined) found++;
      expect(lastModel(b(text)), text).toBe(want);
    }
    expect(found).toBeGreaterThan(2_000);
  });
});
