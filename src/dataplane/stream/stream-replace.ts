// Replaces fixed byte strings in a stream as it flows (pure). A match may be split across chunks, so the tail of
// a chunk that could be the start of a match is held back until the next chunk shows whether it is one; only
// the longest such tail is held, and in the common case (no needle byte near the end of a chunk) nothing is, so
// a stream's delivery is not delayed. With no match and nothing held, a chunk goes out as the same Buffer.
import { Transform, type TransformCallback } from 'node:stream';

export interface Needle {
  /** The bytes to find (non-empty). */
  readonly find: Buffer;
  /** What replaces each occurrence. */
  readonly replace: Buffer;
}

export class StreamReplacer {
  readonly #needles: readonly Needle[];
  readonly #starts: readonly Uint8Array[];
  #carry: Buffer | undefined;

  constructor(needles: readonly Needle[]) {
    if (needles.some((n) => n.find.length === 0)) throw new Error('a needle must not be empty');
    this.#needles = needles;
    this.#starts = needles.map(startBytes);
  }

  /** The bytes of `chunk` (after any held-back tail) that can go out now. */
  push(chunk: Buffer): Buffer {
    const buf = this.#carry === undefined ? chunk : Buffer.concat([this.#carry, chunk]);
    this.#carry = undefined;
    const matches = findMatches(buf, this.#needles);
    const tailFrom = matches.length === 0 ? 0 : matches[matches.length - 1]!.end;
    const hold = heldTailStart(buf, tailFrom, this.#needles, this.#starts);
    if (hold < buf.length) this.#carry = buf.subarray(hold);
    if (matches.length === 0) return hold === buf.length ? buf : buf.subarray(0, hold);
    return splice(buf, matches, hold);
  }

  /** End of the stream: the held-back tail (never a whole match) goes out as it is. */
  end(): Buffer {
    const rest = this.#carry ?? EMPTY;
    this.#carry = undefined;
    return rest;
  }

  /** Replaces every occurrence in one complete buffer (returns `buf` itself when there is none). */
  static replaceAll(buf: Buffer, needles: readonly Needle[]): Buffer {
    const matches = findMatches(buf, needles);
    return matches.length === 0 ? buf : splice(buf, matches, buf.length);
  }
}

/** A byte Transform applying a StreamReplacer. */
export function replaceStream(needles: readonly Needle[]): Transform {
  const r = new StreamReplacer(needles);
  return new Transform({
    transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback) {
      const out = r.push(chunk);
      done(null, out.length > 0 ? out : undefined);
    },
    flush(done: TransformCallback) {
      const out = r.end();
      done(null, out.length > 0 ? out : undefined);
    },
  });
}

const EMPTY = Buffer.alloc(0);

interface Match {
  readonly start: number;
  readonly end: number;
  readonly replace: Buffer;
}

const NO_MATCHES: readonly Match[] = [];

/** Non-overlapping matches, leftmost first (the longer needle wins a tie). One native indexOf per needle when there is none. */
function findMatches(buf: Buffer, needles: readonly Needle[]): readonly Match[] {
  let all: Match[] | undefined;
  for (const n of needles) {
    for (let at = buf.indexOf(n.find); at !== -1; at = buf.indexOf(n.find, at + n.find.length)) {
      (all ??= []).push({ start: at, end: at + n.find.length, replace: n.replace });
    }
  }
  if (all === undefined) return NO_MATCHES;
  if (needles.length === 1) return all;
  all.sort((a, b) => a.start - b.start || b.end - a.end);
  const kept: Match[] = [];
  for (const m of all) if (kept.length === 0 || m.start >= kept[kept.length - 1]!.end) kept.push(m);
  return kept;
}

/**
 * Where the held-back tail of `buf` starts: the earliest position at or after `from` whose suffix is a proper
 * prefix of a needle (so the longest such suffix), or buf.length when there is none.
 */
function heldTailStart(buf: Buffer, from: number, needles: readonly Needle[], starts: readonly Uint8Array[]): number {
  let hold = buf.length;
  if (hold === 0) return hold;
  const last = buf[hold - 1]!;
  for (let k = 0; k < needles.length; k++) {
    const n = needles[k]!;
    // A held tail ends with a byte of the needle (not its last): most chunks end in one that is in no key ("\n", "}").
    if (starts[k]![last] === 0) continue;
    const first = n.find[0]!;
    let at = buf.indexOf(first, Math.max(from, buf.length - n.find.length + 1));
    while (at !== -1 && at < hold) {
      if (buf.compare(n.find, 0, buf.length - at, at) === 0) {
        hold = at;
        break;
      }
      at = buf.indexOf(first, at + 1);
    }
  }
  return hold;
}

const startTables = new WeakMap<Needle, Uint8Array>();

/** Which byte values occur in the needle before its last byte (computed once per needle: needles are long-lived). */
function startBytes(n: Needle): Uint8Array {
  let t = startTables.get(n);
  if (t === undefined) {
    t = new Uint8Array(256);
    for (let i = 0; i < n.find.length - 1; i++) t[n.find[i]!] = 1;
    startTables.set(n, t);
  }
  return t;
}

function splice(buf: Buffer, matches: readonly Match[], upTo: number): Buffer {
  const parts: Buffer[] = [];
  let at = 0;
  for (const m of matches) {
    parts.push(buf.subarray(at, m.start), m.replace);
    at = m.end;
  }
  parts.push(buf.subarray(at, upTo));
  return Buffer.concat(parts);
}
