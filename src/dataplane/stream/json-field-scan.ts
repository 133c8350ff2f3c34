// Finds chosen fields of a JSON document in its bytes as they stream past, without parsing or holding the
// document: only the bytes of a field value being replaced are held (an id: tens of bytes). Everything else goes
// out as it came, byte for byte, chunk by chunk. A 30 MB Response object is rewritten with the same few bytes of
// memory as a 1 KB one, and an id is replaced wherever it sits (JSON.parse of a whole body, by contrast, needs
// the whole body and several copies of it, and gives up on anything it cannot parse).
//
// Fields are named by their key path from the top-level object (['id'], ['response', 'id']); array elements are
// never on a path. The scanner never fails on malformed JSON: it keeps going as best it can.
import { Transform, type TransformCallback } from 'node:stream';

/**
 * Gets the JSON literal (quotes included) of a string value at the watched path `field` (its index) and returns
 * the JSON text to send instead, or undefined to keep it.
 */
export type ReplaceValue = (field: number, literal: string) => string | undefined;

const EMPTY = Buffer.alloc(0);

/**
 * The output of one chunk: the chunk itself unless bytes of it are withheld (a value being captured) or replaced.
 * Withholding may start in one chunk and end in a later one.
 */
export class ChunkSplice {
  #chunk: Buffer = EMPTY;
  #cursor = 0;
  #withholding = false;
  #pieces: Buffer[] | undefined;

  begin(chunk: Buffer): void {
    this.#chunk = chunk;
    this.#cursor = 0;
    this.#pieces = undefined;
  }

  /** Bytes before `at` go out; from `at` on, bytes are withheld until release(). */
  withhold(at: number): void {
    this.#add(this.#chunk.subarray(this.#cursor, at));
    this.#withholding = true;
  }

  /** Ends withholding: `bytes` go out in place of what was withheld, and the chunk goes on from `at`. */
  release(bytes: Buffer, at: number): void {
    this.#add(bytes);
    this.#withholding = false;
    this.#cursor = at;
  }

  finish(): Buffer {
    if (this.#pieces === undefined) return this.#withholding ? EMPTY : this.#cursor === 0 ? this.#chunk : this.#chunk.subarray(this.#cursor);
    if (!this.#withholding) this.#add(this.#chunk.subarray(this.#cursor));
    return this.#pieces.length === 1 ? this.#pieces[0]! : Buffer.concat(this.#pieces);
  }

  #add(b: Buffer): void {
    if (b.length > 0) (this.#pieces ??= []).push(b);
  }
}

const OBJECT = 1;
const ARRAY = 2;

const OUTSIDE = 0;
/** In a string nobody watches: skipped quickly. */
const SKIP_STRING = 1;
const KEY = 2;
const VALUE = 3;

const QUOTE = 0x22;
const SHORT_STRING_BYTES = 48;
const BACKSLASH = 0x5c;
/** Keys longer than this are never on a path (and are not captured). */
const MAX_KEY_BYTES = 64;
const KEY_NAME = /^[A-Za-z0-9_.-]+$/;
/** Longest string value captured for replacement; a longer one fails the stream rather than pass unreplaced. */
export const MAX_CAPTURED_VALUE_BYTES = 8 * 1024;

/** The key paths a scanner watches, compiled once (a scanner is made per answer, the paths are constants). */
export class FieldPaths {
  readonly paths: readonly (readonly string[])[];
  readonly maxDepth: number;
  /** The keys that paths have at each depth (index 1 = top level), as bytes (matched as a key streams past) and as strings. */
  readonly candidates: readonly (readonly Buffer[])[];
  readonly candidateNames: readonly (readonly string[])[];
  /**
   * The first keys of the paths as JSON literals (`"response"`). Text that holds none of them, and no \u escape,
   * holds no watched field: a caller may skip scanning a whole document it can see is such text.
   */
  readonly firstKeys: readonly Buffer[];

  /** Key names are made of letters, digits, '_', '-' and '.', so a document holds one only as its plain `"name"` or \u-escaped. */
  constructor(paths: readonly (readonly string[])[]) {
    if (paths.some((p) => p.length === 0 || !p.every((k) => KEY_NAME.test(k)))) throw new Error('a watched path needs plain key names');
    this.paths = paths;
    this.maxDepth = Math.max(0, ...paths.map((p) => p.length));
    this.candidateNames = Array.from({ length: this.maxDepth + 1 }, (_, d) => [...new Set(paths.filter((p) => d > 0 && p.length >= d).map((p) => p[d - 1]!))]);
    this.candidates = this.candidateNames.map((names) => names.map((n) => Buffer.from(n, 'utf8')));
    if (this.candidates.some((c) => c.length > 30)) throw new Error('too many field names at one depth');
    this.firstKeys = this.candidateNames[1]!.map((k) => Buffer.from(`"${k}"`, 'utf8'));
  }
}

export class JsonFieldScanner {
  readonly #paths: readonly (readonly string[])[];
  readonly #replace: ReplaceValue;
  readonly #maxDepth: number;
  readonly #candidates: readonly (readonly Buffer[])[];
  readonly #candidateNames: readonly (readonly string[])[];
  /** Container type per depth (1 = the top-level value), tracked down to maxDepth + 1; deeper only counted. */
  readonly #types: Uint8Array;
  /** Current key of the object at each depth (≤ maxDepth) when it is a path's key there, else undefined. */
  readonly #keys: (string | undefined)[];
  /** Whether the object at each depth lies on a watched path. */
  readonly #live: boolean[];
  #depth = 0;
  #expectKey = false;
  #mode = OUTSIDE;
  #escaped = false;
  #held: Buffer[] = [];
  #heldBytes = 0;
  /** Key being read: bytes seen, which candidates still match (bit per candidate), and whether it has escapes. */
  #keyLength = 0;
  #keyAlive = 0;
  #keyEscaped = false;
  /** Start of the capture in the chunk being scanned. */
  #captureStart = 0;
  /** The watched path of the value being captured. */
  #field = -1;

  constructor(paths: FieldPaths, replace: ReplaceValue) {
    this.#paths = paths.paths;
    this.#replace = replace;
    this.#maxDepth = paths.maxDepth;
    this.#candidates = paths.candidates;
    this.#candidateNames = paths.candidateNames;
    this.#types = new Uint8Array(this.#maxDepth + 2);
    this.#keys = new Array<string | undefined>(this.#maxDepth + 1).fill(undefined);
    this.#live = new Array<boolean>(this.#maxDepth + 1).fill(false);
  }

  /** Scans chunk[from, to); withheld and replaced bytes are recorded in `out` (begun on this chunk). */
  scan(chunk: Buffer, from: number, to: number, out: ChunkSplice): void {
    if (this.#mode !== OUTSIDE && this.#mode !== SKIP_STRING) this.#captureStart = from;
    let i = from;
    // Next quote and backslash at or after i (or `to`), cached so skipping strings stays linear in the chunk.
    let quote = -1;
    let backslash = -1;
    while (i < to) {
      const mode = this.#mode;
      if (mode === SKIP_STRING) {
        // Short strings (most keys and values) are walked here, cheaper than a native search each; a longer one
        // is crossed with indexOf below.
        const limit = Math.min(to, i + SHORT_STRING_BYTES);
        let escaped = this.#escaped;
        for (; i < limit; i++) {
          const c = chunk[i];
          if (escaped) escaped = false;
          else if (c === BACKSLASH) escaped = true;
          else if (c === QUOTE) break;
        }
        this.#escaped = escaped;
        if (i < limit) {
          this.#mode = OUTSIDE;
          i++;
          continue;
        }
        if (i >= to) continue;
        if (this.#escaped) {
          this.#escaped = false;
          i++;
          continue;
        }
        if (quote < i) quote = nextIndex(chunk, QUOTE, i, to);
        if (backslash < i) backslash = nextIndex(chunk, BACKSLASH, i, to);
        if (backslash < quote) {
          this.#escaped = true;
          i = backslash + 1;
        } else {
          if (quote < to) this.#mode = OUTSIDE;
          i = quote + 1;
        }
        continue;
      }
      const b = chunk[i]!;
      if (mode === OUTSIDE) {
        this.#outside(b, i, out);
        i++;
        continue;
      }
      // KEY or VALUE: a captured string.
      i++;
      if (this.#escaped) this.#escaped = false;
      else if (b === BACKSLASH) {
        this.#escaped = true;
        this.#keyEscaped = true;
      } else if (b === QUOTE) this.#endString(chunk, i, out);
      else if (mode === KEY && !this.#keyEscaped) this.#matchKeyByte(b);
    }
    if (this.#mode !== OUTSIDE && this.#mode !== SKIP_STRING) this.#stash(chunk.subarray(this.#captureStart, to));
  }

  /**
   * A line break the scanner is not shown (between the data lines of one SSE event): whitespace to JSON. A string
   * cannot contain one: a value withheld across it is dropped (the event is not valid JSON; its bytes are never
   * sent unreplaced).
   */
  lineBreak(at: number, out: ChunkSplice): void {
    if (this.#mode === VALUE) this.#drop(at, out);
    else if (this.#mode === KEY) this.#mode = SKIP_STRING;
  }

  /** The end of a document (of an SSE event, or of a body): forgets everything; an unfinished value is dropped. */
  reset(at: number, out: ChunkSplice): void {
    this.lineBreak(at, out);
    this.#mode = OUTSIDE;
    this.#escaped = false;
    this.#depth = 0;
    this.#expectKey = false;
  }

  #outside(b: number, i: number, out: ChunkSplice): void {
    switch (b) {
      case 0x7b: // {
        this.#open(OBJECT);
        return;
      case 0x5b: // [
        this.#open(ARRAY);
        return;
      case 0x7d: // }
      case 0x5d: // ]
        if (this.#depth > 0) this.#depth--;
        this.#expectKey = false;
        return;
      case 0x2c: // ,
        this.#expectKey = this.#typeAt(this.#depth) === OBJECT;
        return;
      case QUOTE:
        this.#startString(i, out);
    }
  }

  #open(type: number): void {
    const d = ++this.#depth;
    if (d < this.#types.length) this.#types[d] = type;
    if (d <= this.#maxDepth) {
      this.#keys[d] = undefined;
      // An object is on a path when its own key path (the keys of the objects above it) starts one.
      this.#live[d] =
        type === OBJECT && (d === 1 || (this.#typeAt(d - 1) === OBJECT && this.#paths.some((p) => p.length >= d && this.#prefixMatches(p, d - 1))));
    }
    this.#expectKey = type === OBJECT;
  }

  #startString(i: number, out: ChunkSplice): void {
    const d = this.#depth;
    if (this.#expectKey && this.#typeAt(d) === OBJECT) {
      this.#expectKey = false;
      if (d <= this.#maxDepth) {
        this.#keys[d] = undefined;
        if (this.#live[d]) {
          this.#keyLength = 0;
          this.#keyAlive = (1 << this.#candidates[d]!.length) - 1;
          this.#keyEscaped = false;
          return this.#capture(KEY, -1, i + 1);
        }
      }
      this.#mode = SKIP_STRING;
      return;
    }
    const f = this.#watched();
    if (f !== -1) {
      out.withhold(i);
      this.#capture(VALUE, f, i);
    } else this.#mode = SKIP_STRING;
  }

  /** Starts capturing (nothing is held between captures: every capture ends by taking or dropping what it held). */
  #capture(mode: number, field: number, start: number): void {
    this.#mode = mode;
    this.#field = field;
    this.#captureStart = start;
  }

  /** One unescaped byte of a key: drops the candidates it does not continue. */
  #matchKeyByte(b: number): void {
    const candidates = this.#candidates[this.#depth]!;
    const at = this.#keyLength++;
    let alive = this.#keyAlive;
    for (let c = 0; c < candidates.length; c++) {
      if ((alive & (1 << c)) !== 0 && candidates[c]![at] !== b) alive &= ~(1 << c);
    }
    this.#keyAlive = alive;
    if (alive === 0 && !this.#keyEscaped) {
      // No path has this key (a literal byte differs before any escape): skip the rest of it quickly.
      this.#mode = SKIP_STRING;
      this.#clearHeld();
    }
  }

  /** The watched path (its index) a value at the current position belongs to, or -1. */
  #watched(): number {
    const d = this.#depth;
    if (d === 0 || d > this.#maxDepth || !this.#live[d] || this.#typeAt(d) !== OBJECT || this.#keys[d] === undefined) return -1;
    return this.#paths.findIndex((p) => p.length === d && this.#prefixMatches(p, d));
  }

  #prefixMatches(path: readonly string[], n: number): boolean {
    for (let k = 0; k < n; k++) if (path[k] !== this.#keys[k + 1]) return false;
    return true;
  }

  #typeAt(d: number): number {
    return d < this.#types.length ? this.#types[d]! : 0;
  }

  /** `end` is just past the closing quote. */
  #endString(chunk: Buffer, end: number, out: ChunkSplice): void {
    const mode = this.#mode;
    this.#mode = OUTSIDE;
    if (mode === KEY) {
      if (this.#keyEscaped) this.#keys[this.#depth] = this.#escapedKey(this.#take(chunk.subarray(this.#captureStart, end - 1)));
      else {
        this.#keys[this.#depth] = this.#plainKey();
        this.#clearHeld();
      }
      return;
    }
    this.#valueDone();
    const literal = this.#take(chunk.subarray(this.#captureStart, end));
    if (literal.length > MAX_CAPTURED_VALUE_BYTES) throw tooLong();
    const replacement = this.#replace(this.#field, literal.toString('utf8'));
    out.release(replacement === undefined ? literal : Buffer.from(replacement, 'utf8'), end);
  }

  #drop(at: number, out: ChunkSplice): void {
    this.#mode = OUTSIDE;
    this.#valueDone();
    this.#clearHeld();
    out.release(EMPTY, at);
  }

  /** The candidate a key without escapes matched in full, if any (no bytes copied, no string made). */
  #plainKey(): string | undefined {
    const candidates = this.#candidates[this.#depth]!;
    for (let c = 0; c < candidates.length; c++) {
      if ((this.#keyAlive & (1 << c)) !== 0 && candidates[c]!.length === this.#keyLength) return this.#candidateNames[this.#depth]![c];
    }
    return undefined;
  }

  /** A key written with escapes ("\u0069d"): decoded, then compared. */
  #escapedKey(raw: Buffer): string | undefined {
    if (raw.length > MAX_KEY_BYTES) return undefined;
    const key = decodeKey(raw);
    return this.#candidateNames[this.#depth]!.find((n) => n === key);
  }

  /** A key takes one value: in malformed JSON, what follows a watched value is not watched too. */
  #valueDone(): void {
    if (this.#depth <= this.#maxDepth) this.#keys[this.#depth] = undefined;
  }

  /** The bytes of a capture that continue past this chunk. */
  #stash(bytes: Buffer): void {
    if (bytes.length === 0) return;
    this.#heldBytes += bytes.length;
    if (this.#mode === KEY && this.#heldBytes > MAX_KEY_BYTES) {
      // Too long to be on a path: skip the rest of it (it already went out; keys are never withheld).
      this.#mode = SKIP_STRING;
      this.#clearHeld();
      return;
    }
    if (this.#mode === VALUE && this.#heldBytes > MAX_CAPTURED_VALUE_BYTES) throw tooLong();
    // Copied: the chunk it is a view of goes out (or is freed) before the capture ends.
    this.#held.push(Buffer.from(bytes));
  }

  /** What the capture held, followed by `last`; nothing is held afterwards. */
  #take(last: Buffer): Buffer {
    if (this.#heldBytes === 0) return last;
    const out = Buffer.concat([...this.#held, last]);
    this.#clearHeld();
    return out;
  }

  #clearHeld(): void {
    // Checked first: truncating an array is costly enough to show in a profile, and it is almost always empty.
    if (this.#heldBytes === 0) return;
    this.#held = [];
    this.#heldBytes = 0;
  }
}

function tooLong(): Error {
  return Object.assign(new Error(`a JSON field value to be rewritten is longer than ${MAX_CAPTURED_VALUE_BYTES} bytes`), { code: 'MG_FIELD_TOO_LONG' });
}

/** The index of `byte` in chunk[from, to), or `to`. */
function nextIndex(chunk: Buffer, byte: number, from: number, to: number): number {
  const at = chunk.indexOf(byte, from);
  return at === -1 || at > to ? to : at;
}

function decodeKey(raw: Buffer): string | undefined {
  if (raw.indexOf(BACKSLASH) === -1) return raw.toString('utf8');
  try {
    const key: unknown = JSON.parse(`"${raw.toString('utf8')}"`);
    return typeof key === 'string' ? key : undefined;
  } catch {
    return undefined;
  }
}

/** A byte Transform rewriting the watched fields of one JSON document (a whole response body). */
export function jsonFieldStream(paths: FieldPaths, replace: ReplaceValue): Transform {
  const scanner = new JsonFieldScanner(paths, replace);
  const splice = new ChunkSplice();
  return new Transform({
    transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback) {
      try {
        splice.begin(chunk);
        scanner.scan(chunk, 0, chunk.length, splice);
        const out = splice.finish();
        done(null, out.length > 0 ? out : undefined);
      } catch (err) {
        done(err as Error);
      }
    },
    flush(done: TransformCallback) {
      splice.begin(EMPTY);
      scanner.reset(0, splice);
      const out = splice.finish();
      done(null, out.length > 0 ? out : undefined);
    },
  });
}
