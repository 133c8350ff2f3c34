// The one grammar of byte sizes (`--max-json-body 20mb`): a regular expression that admits a size only when its
// value lies in the allowed range, so that the chart's values schema can carry the very same pattern (JSON Schema
// cannot compare a string's number) and neither side can admit what the other refuses. Pure.

export const SIZE_MIN_BYTES = 1024;
export const SIZE_MAX_BYTES = 64 * 1024 ** 3;

/** Unit spellings by multiplier (binary multiples, as express and nginx use), matched case-insensitively. */
export const SIZE_UNITS: readonly (readonly [multiplier: number, names: readonly string[]])[] = [
  [1, ['b']],
  [1024, ['k', 'kb', 'kib']],
  [1024 ** 2, ['m', 'mb', 'mib']],
  [1024 ** 3, ['g', 'gb', 'gib']],
];

const DIGIT = '[0-9]';

/** A digit class from a to b ("[3-7]", "5"). */
function digits(a: number, b: number): string {
  return a === b ? String(a) : `[${a}-${b}]`;
}

/**
 * Decimal integers from lo to hi (lo >= 1), without leading zeros: blocks of the form prefix, digit class, free
 * digits, each as large as lo's trailing zeros and the distance to hi allow.
 */
export function integerRange(lo: number, hi: number): string {
  const parts: string[] = [];
  let start = lo;
  while (start <= hi) {
    let size = 1;
    while (start % (size * 10) === 0 && start + size * 10 - 1 <= hi) size *= 10;
    const digit = Math.floor(start / size) % 10;
    const blocks = Math.min(10 - digit, Math.floor((hi - start + 1) / size));
    const prefix = Math.floor(start / (size * 10));
    const free = Math.round(Math.log10(size));
    parts.push(`${prefix > 0 ? prefix : ''}${digits(digit, digit + blocks - 1)}${free === 0 ? '' : free === 1 ? DIGIT : `${DIGIT}{${free}}`}`);
    start += blocks * size;
  }
  return parts.length === 1 ? parts[0]! : `(?:${parts.join('|')})`;
}

/** Fraction digits f (of 0.f) with 0.f >= 0.c: larger at the first digit that differs, or c itself then anything. */
function fractionAtLeast(c: string): string {
  const parts: string[] = [];
  for (let i = 0; i < c.length; i++) {
    const d = Number(c[i]);
    if (d < 9) parts.push(`${c.slice(0, i)}${digits(d + 1, 9)}${DIGIT}*`);
  }
  parts.push(`${c}${DIGIT}*`);
  return `(?:${parts.join('|')})`;
}

/** The exact decimal digits after the point of 1 / 2^k (finite: 5^k / 10^k). */
function inversePowerOfTwo(k: number): string {
  return (5n ** BigInt(k)).toString().padStart(k, '0');
}

/** Numbers n (digits, optional fraction) with SIZE_MIN_BYTES <= n * multiplier <= SIZE_MAX_BYTES. */
function numberFor(multiplier: number): string {
  const max = SIZE_MAX_BYTES / multiplier; // a whole number for every unit
  const min = SIZE_MIN_BYTES / multiplier; // a whole number, or 1 / 2^k below a kilobyte's unit
  const alternatives = [`0*${integerRange(Math.max(1, Math.ceil(min)), max - 1)}(?:\\.${DIGIT}+)?`, `0*${max}(?:\\.0+)?`];
  if (min < 1) alternatives.push(`0+\\.${fractionAtLeast(inversePowerOfTwo(Math.log2(1 / min)))}`);
  return `(?:${alternatives.join('|')})`;
}

function caseless(name: string): string {
  return [...name].map((ch) => `[${ch.toLowerCase()}${ch.toUpperCase()}]`).join('');
}

/** Anchored; only what RE2 (helm's schema validator) and ECMAScript read alike. */
export const SIZE_PATTERN = `^(?:${SIZE_UNITS.map(([multiplier, names]) => {
  const unit = `(?:${names.map(caseless).join('|')})`;
  // A bare number is bytes; a unit may follow the number after spaces.
  return `${numberFor(multiplier)}${multiplier === 1 ? `(?: *${unit})?` : ` *${unit}`}`;
}).join('|')})$`;

const SIZE = new RegExp(SIZE_PATTERN);
const MULTIPLIERS = new Map(SIZE_UNITS.flatMap(([multiplier, names]) => names.map((n) => [n, multiplier] as const)));

/** The bytes of a size the grammar admits, or undefined. */
export function sizeBytes(text: string): number | undefined {
  if (!SIZE.test(text)) return undefined;
  const [, number, unit] = /^([0-9.]+) *([a-z]*)$/i.exec(text)!;
  // The grammar bounds the exact value; rounding to a double is monotonic, so the product stays within the bounds.
  return Math.floor(Number(number) * (unit === '' ? 1 : MULTIPLIERS.get(unit!.toLowerCase())!));
}
