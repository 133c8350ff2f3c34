// The size grammar against an exact reference: the decimal value times the unit, in integers, within 1kb..64gb.
import { describe, expect, it } from 'vitest';
import { integerRange, SIZE_MAX_BYTES, SIZE_MIN_BYTES, SIZE_PATTERN, SIZE_UNITS, sizeBytes } from './size-grammar.js';

const UNIT = new Map(SIZE_UNITS.flatMap(([multiplier, names]) => names.map((n) => [n, BigInt(multiplier)] as const)));

/** Whether text is a size in range, by exact arithmetic on its digits (no regular expression over the value). */
function inRange(text: string): boolean {
  const m = /^([0-9]+)(?:\.([0-9]+))?( *)([A-Za-z]*)$/.exec(text);
  if (!m) return false;
  const [, whole, fraction = '', spaces, unit] = m;
  if (unit === '' && spaces !== '') return false;
  const multiplier = unit === '' ? 1n : UNIT.get(unit!.toLowerCase());
  if (multiplier === undefined) return false;
  const scale = 10n ** BigInt(fraction.length);
  const scaled = BigInt(whole! + fraction) * multiplier; // the value times 10^(fraction digits)
  return scaled >= BigInt(SIZE_MIN_BYTES) * scale && scaled <= BigInt(SIZE_MAX_BYTES) * scale;
}

/** A deterministic generator (mulberry32), so a failure names a sample that fails again. */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function sample(next: () => number): string {
  const pick = <T>(list: readonly T[]) => list[Math.floor(next() * list.length)]!;
  const digits = (n: number) => Array.from({ length: n }, () => pick([...'0123456789'])).join('');
  // Around the bounds of each unit more often than anywhere else: 1024, 1, 0.0009765625, 64, 65536, 67108864, 2^36.
  const near = pick(['1024', '1023', '1', '0', '0.0009765625', '0.00000095367431640625', '64', '63', '65536', '67108864', '68719476736', '68719476735']);
  const whole = next() < 0.5 ? near.split('.')[0]! : digits(1 + Math.floor(next() * 12));
  const fraction =
    near.includes('.') && next() < 0.5
      ? near.split('.')[1]!.slice(0, Math.floor(next() * 22)) + digits(Math.floor(next() * 3))
      : digits(Math.floor(next() * 4));
  const unit = pick(['', 'b', 'B', 'k', 'kb', 'KiB', 'm', 'MB', 'mib', 'g', 'gb', 'GiB', 'kB', 'x', 'tb', 'kbb']);
  return `${next() < 0.1 ? '0' : ''}${whole}${fraction === '' ? '' : `.${fraction}`}${next() < 0.15 ? pick([' ', '  ', '\t']) : ''}${unit}`;
}

describe('size grammar', () => {
  const pattern = new RegExp(SIZE_PATTERN);

  it('admits exactly the sizes whose value is within 1kb..64gb (20000 generated samples)', () => {
    const next = random(7);
    const wrong: string[] = [];
    for (let i = 0; i < 20_000; i++) {
      const s = sample(next);
      if (pattern.test(s) !== inRange(s)) wrong.push(s);
    }
    expect(wrong).toEqual([]);
  });

  it.each([
    ['1024', 1024],
    ['1kb', 1024],
    ['0.0009765625mb', 1024],
    ['1.5GiB', 1.5 * 1024 ** 3],
    ['20 MB', 20 * 1024 ** 2],
    ['64gb', 64 * 1024 ** 3],
    ['64.000gb', 64 * 1024 ** 3],
    ['68719476736', 64 * 1024 ** 3],
    ['0001024', 1024],
    ['1024.9', 1024],
  ])('reads %s as %d bytes', (text, bytes) => {
    expect(sizeBytes(text)).toBe(bytes);
  });

  it.each(['512', '5b', '0.5kb', '1023.999', '0.00097656249mb', '64.0000001gb', '68719476737', '1tb', '', '.5mb', '1e6', ' 20mb', '20mb ', '20 ', '1,5mb'])(
    'refuses %j',
    (text) => {
      expect(sizeBytes(text)).toBeUndefined();
    },
  );

  it('reads integer ranges exactly (every integer around the blocks of a range)', () => {
    for (const [lo, hi] of [
      [1, 9],
      [1024, 68719476735],
      [7, 1234],
      [1, 63],
    ] as const) {
      const re = new RegExp(`^${integerRange(lo, hi)}$`);
      for (const n of [
        lo - 1,
        lo,
        lo + 1,
        hi - 1,
        hi,
        hi + 1,
        ...Array.from({ length: 2000 }, (_, i) => lo + Math.floor((hi - lo) * (i / 2000)) + (i % 3) - 1),
      ]) {
        if (n < 1) continue;
        expect(re.test(String(n)), `${n} in [${lo}, ${hi}]`).toBe(n >= lo && n <= hi);
      }
    }
  });
});
