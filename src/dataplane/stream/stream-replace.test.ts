import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { describe, expect, it } from 'vitest';
import { replaceStream, StreamReplacer, type Needle } from './stream-replace.js';

const needle = (find: string, replace: string): Needle => ({ find: Buffer.from(find), replace: Buffer.from(replace) });
const MASK = [needle('sk-secret-42', '************')];

/** Feeds `input` cut at the given offsets; returns what went out after each push, and in all. */
function feed(needles: readonly Needle[], input: string, cuts: number[]): { steps: string[]; all: string } {
  const r = new StreamReplacer(needles);
  const steps: string[] = [];
  let at = 0;
  for (const cut of [...cuts, input.length]) {
    steps.push(r.push(Buffer.from(input.slice(at, cut))).toString());
    at = cut;
  }
  steps.push(r.end().toString());
  return { steps, all: steps.join('') };
}

describe('StreamReplacer', () => {
  const input = 'Incorrect key sk-secret-42 (sent as "Bearer sk-secret-42"); s sk- sk-secret-4 sk-secret-42';
  const want = input.replaceAll('sk-secret-42', '************');

  it('replaces every occurrence, wherever the chunks are cut', () => {
    for (let a = 0; a < input.length; a++) {
      for (let b = a; b < input.length; b += 7) expect(feed(MASK, input, [a, b]).all, `cuts ${a},${b}`).toBe(want);
    }
    expect(
      feed(
        MASK,
        input,
        Array.from({ length: input.length - 1 }, (_, i) => i + 1),
      ).all,
    ).toBe(want);
  });

  it('holds back only the longest chunk tail that could start a match', () => {
    const r = new StreamReplacer(MASK);
    expect(r.push(Buffer.from('data: {"a":1}\n\n')).toString()).toBe('data: {"a":1}\n\n'); // nothing held
    expect(r.push(Buffer.from('key: sk-sec')).toString()).toBe('key: ');
    expect(r.push(Buffer.from('ond')).toString()).toBe('sk-second'); // not a match after all
    expect(r.push(Buffer.from('ssk-secret-4')).toString()).toBe('s');
    expect(r.push(Buffer.from('2!')).toString()).toBe('************!');
    expect(r.push(Buffer.from('tail s')).toString()).toBe('tail ');
    expect(r.end().toString()).toBe('s');
  });

  it('returns the same Buffer when there is nothing to replace or hold', () => {
    const r = new StreamReplacer(MASK);
    const chunk = Buffer.from('{"choices":[{"delta":{"content":"hello"}}]}\n\n');
    expect(r.push(chunk)).toBe(chunk);
  });

  it('replaces with other lengths, and prefers the leftmost, then the longest, of several needles', () => {
    const needles = [needle('abc', 'X'), needle('abcdef', 'LONG'), needle('cde', 'Y')];
    expect(feed(needles, 'abcdef abc cde abcd', [2, 9]).all).toBe('LONG X Y Xd');
    expect(StreamReplacer.replaceAll(Buffer.from('xx abc'), needles).toString()).toBe('xx X');
  });

  it('works as a Transform', async () => {
    const out = await text(Readable.from([Buffer.from('a sk-sec'), Buffer.from('ret-42 b')]).pipe(replaceStream(MASK)));
    expect(out).toBe('a ************ b');
  });
});
