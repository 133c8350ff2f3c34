// A validating scanner for a JSON request body that builds no tree. It checks the whole body against the JSON
// grammar (RFC 8259, as strict as JSON.parse: what it accepts every conforming parser reads the same way) and
// records the byte ranges of the top-level members the gateway asked for; nested values are skipped with a
// depth count, not recursion. JSON.parse of a large body holds the event loop for its whole length; this
// reads only bytes, can stop after any number of them and resume (so a caller can yield between slices), and
// lets the body be rewritten by splicing byte ranges instead of re-serialising a tree. Pure: no I/O.

/** One top-level member: byte offsets of its key's opening quote, of its value's first byte, and past its value. */
export interface TopLevelMember {
  readonly key: string;
  readonly start: number;
  readonly valueStart: number;
  readonly end: number;
  /** The key was written with escapes (e.g. "mod\u0065l"). */
  readonly escapedKey: boolean;
}

export interface ScannedObject {
  /** The wanted members, duplicates included, in body order. */
  readonly members: readonly TopLevelMember[];
  /** How many members the object has in all. */
  readonly memberCount: number;
  /** Offset of the object's closing brace. */
  readonly closeAt: number;
}

export type ScanResult =
  | { readonly ok: true; readonly object: ScannedObject }
  | { readonly ok: false; readonly reason: 'malformed' | 'not-an-object' | 'too-deep' };

/** Deeper nesting is refused: far beyond any real request, and below what common upstream parsers accept. */
export const MAX_DEPTH = 512;

// What comes next.
const VALUE = 0;
const FIRST_KEY_OR_END = 1; // after '{'
const KEY = 2; // after ',' in an object
const COLON = 3;
const COMMA_OR_END = 4; // after a value inside a container
const FIRST_VALUE_OR_END = 5; // after '['
const DONE = 6; // after the top-level value: only whitespace

// Inside a number (its grammar, one state per position).
const NUM_MINUS = 1;
const NUM_ZERO = 2;
const NUM_INT = 3;
const NUM_DOT = 4;
const NUM_FRAC = 5;
const NUM_E = 6;
const NUM_ESIGN = 7;
const NUM_EXP = 8;

const OBJECT = 1;
const ARRAY = 2;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** Bytes allowed after a backslash besides 'u'. */
const SIMPLE_ESCAPE = new Uint8Array(256);
for (const c of '"\\/bfnrt') SIMPLE_ESCAPE[c.charCodeAt(0)] = 1;
const HEX = new Uint8Array(256);
for (const c of '0123456789abcdefABCDEF') HEX[c.charCodeAt(0)] = 1;
const WHITESPACE = new Uint8Array(256);
for (const c of ' \t\n\r') WHITESPACE[c.charCodeAt(0)] = 1;

/** The index of the first byte at or after i that is not JSON whitespace (the length when there is none). */
export function skipJsonSpace(bytes: Uint8Array, i: number): number {
  while (i < bytes.length && WHITESPACE[bytes[i]!] === 1) i++;
  return i;
}
const TRUE = Buffer.from('true');
const FALSE = Buffer.from('false');
const NULL = Buffer.from('null');

class Malformed extends Error {}

/** The top-level keys a scan records, prepared once: unescaped keys are matched as bytes, without decoding them. */
export class WantedKeys {
  readonly #byLength = new Map<number, { readonly key: string; readonly bytes: Buffer }[]>();
  readonly #keys: ReadonlySet<string>;

  constructor(keys: Iterable<string>) {
    this.#keys = new Set(keys);
    for (const key of this.#keys) {
      const bytes = Buffer.from(key, 'utf8');
      this.#byLength.set(bytes.length, [...(this.#byLength.get(bytes.length) ?? []), { key, bytes }]);
    }
  }

  /** The wanted key spelled by the bytes buf[start, end) (no escapes in them), if any. */
  matchBytes(buf: Buffer, start: number, end: number): string | undefined {
    const candidates = this.#byLength.get(end - start);
    if (candidates === undefined) return undefined;
    for (const w of candidates) if (buf.compare(w.bytes, 0, w.bytes.length, start, end) === 0) return w.key;
    return undefined;
  }

  has(key: string): boolean {
    return this.#keys.has(key);
  }
}

export class JsonObjectScanner {
  readonly #buf: Buffer;
  readonly #wanted: WantedKeys;
  #pos = 0;
  #expect = VALUE;
  /** The kind of each open container (index 1 = the top level); grown as nesting deepens. */
  #stack = new Uint8Array(16);
  #depth = 0;
  #notObject = false;
  // A string in progress: where it opened, whether it is a key, whether it held an escape.
  #inString = false;
  #stringStart = 0;
  #stringIsKey = false;
  #stringEscaped = false;
  #number = 0; // a NUM_ state while inside a number
  // The top-level member being read, when its key is wanted.
  #memberKey: string | undefined;
  #memberStart = 0;
  #memberEscaped = false;
  #valueStart = 0;
  #members: TopLevelMember[] = [];
  #memberCount = 0;
  #closeAt = -1;
  #result: ScanResult | undefined;

  constructor(buf: Buffer, wanted: WantedKeys) {
    this.#buf = buf;
    this.#wanted = wanted;
  }

  /** Scans about `bytes` more bytes (a token may run a few past); the result once the whole body is scanned. */
  step(bytes: number): ScanResult | undefined {
    if (this.#result) return this.#result;
    try {
      this.#scan(Math.min(this.#buf.length, this.#pos + bytes));
      if (this.#pos >= this.#buf.length) this.#result = this.#finish();
    } catch (err) {
      if (!(err instanceof Malformed)) throw err;
      this.#result = { ok: false, reason: err.message === 'too-deep' ? 'too-deep' : 'malformed' };
    }
    return this.#result;
  }

  #scan(stop: number): void {
    const b = this.#buf;
    let pos = this.#pos;
    while (pos < stop) {
      if (this.#inString) {
        pos = this.#stringFrom(pos, stop);
        continue;
      }
      if (this.#number !== 0) {
        pos = this.#numberFrom(pos, stop);
        continue;
      }
      const c = b[pos]!;
      if (WHITESPACE[c] === 1) {
        pos++;
        continue;
      }
      switch (this.#expect) {
        // biome-ignore lint/suspicious/noFallthroughSwitchClause: a state machine; each fall-through is commented where it happens.
        case FIRST_VALUE_OR_END:
          if (c === 0x5d /* ] */) {
            pos = this.#close(pos, ARRAY);
            break;
          }
        // falls through: any other byte starts the first value
        case VALUE:
          pos = this.#value(pos, c);
          break;
        // biome-ignore lint/suspicious/noFallthroughSwitchClause: a state machine; each fall-through is commented where it happens.
        case FIRST_KEY_OR_END:
          if (c === 0x7d /* } */) {
            pos = this.#close(pos, OBJECT);
            break;
          }
        // falls through
        case KEY:
          if (c !== QUOTE) throw new Malformed();
          if (this.#depth === 1) {
            this.#memberCount++;
            this.#memberStart = pos;
          }
          this.#openString(pos, true);
          pos++;
          break;
        case COLON:
          if (c !== 0x3a /* : */) throw new Malformed();
          this.#expect = VALUE;
          pos++;
          break;
        case COMMA_OR_END:
          if (c === 0x2c /* , */) {
            this.#expect = this.#stack[this.#depth] === OBJECT ? KEY : VALUE;
            pos++;
          } else if (c === 0x7d /* } */) pos = this.#close(pos, OBJECT);
          else if (c === 0x5d /* ] */) pos = this.#close(pos, ARRAY);
          else throw new Malformed();
          break;
        default: // DONE: nothing but whitespace may follow the top-level value
          throw new Malformed();
      }
    }
    this.#pos = pos;
  }

  /** Starts the value whose first byte `c` is at `pos`; returns the position after what it consumed. */
  #value(pos: number, c: number): number {
    if (this.#depth === 0 && c !== 0x7b /* { */) this.#notObject = true;
    if (this.#depth === 1 && this.#memberKey !== undefined) this.#valueStart = pos;
    switch (c) {
      case 0x7b /* { */:
      case 0x5b /* [ */:
        if (this.#depth === MAX_DEPTH) throw new Malformed('too-deep');
        if (this.#depth + 1 === this.#stack.length) this.#grow();
        this.#stack[++this.#depth] = c === 0x7b ? OBJECT : ARRAY;
        this.#expect = c === 0x7b ? FIRST_KEY_OR_END : FIRST_VALUE_OR_END;
        return pos + 1;
      case QUOTE:
        this.#openString(pos, false);
        return pos + 1;
      case 0x74 /* t */:
        return this.#literal(pos, TRUE);
      case 0x66 /* f */:
        return this.#literal(pos, FALSE);
      case 0x6e /* n */:
        return this.#literal(pos, NULL);
      case 0x2d /* - */:
        this.#number = NUM_MINUS;
        return pos + 1;
      default:
        if (c < 0x30 || c > 0x39) throw new Malformed();
        this.#number = c === 0x30 ? NUM_ZERO : NUM_INT;
        return pos + 1;
    }
  }

  #grow(): void {
    const stack = new Uint8Array(Math.min(MAX_DEPTH + 1, this.#stack.length * 4));
    stack.set(this.#stack);
    this.#stack = stack;
  }

  #literal(pos: number, word: Buffer): number {
    if (pos + word.length > this.#buf.length || this.#buf.compare(word, 0, word.length, pos, pos + word.length) !== 0) throw new Malformed();
    this.#valueDone(pos + word.length);
    return pos + word.length;
  }

  #close(pos: number, kind: number): number {
    if (this.#stack[this.#depth] !== kind) throw new Malformed();
    this.#depth--;
    if (this.#depth === 0) this.#closeAt = pos;
    this.#valueDone(pos + 1);
    return pos + 1;
  }

  /** A value ended just before `end`. */
  #valueDone(end: number): void {
    if (this.#depth === 0) {
      this.#expect = DONE;
      return;
    }
    this.#expect = COMMA_OR_END;
    if (this.#depth === 1 && this.#memberKey !== undefined) {
      this.#members.push({ key: this.#memberKey, start: this.#memberStart, valueStart: this.#valueStart, end, escapedKey: this.#memberEscaped });
      this.#memberKey = undefined;
    }
  }

  #openString(pos: number, isKey: boolean): void {
    this.#inString = true;
    this.#stringStart = pos;
    this.#stringIsKey = isKey;
    this.#stringEscaped = false;
  }

  /** Continues a string from `pos`; returns where it stopped (past the closing quote once the string ends). */
  #stringFrom(pos: number, stop: number): number {
    const b = this.#buf;
    for (; pos < stop; pos++) {
      const c = b[pos]!;
      if (c === QUOTE) {
        this.#inString = false;
        this.#stringDone(pos + 1);
        return pos + 1;
      }
      if (c === BACKSLASH) {
        // An escape is taken whole, even past `stop`: the body is complete in memory.
        this.#stringEscaped = true;
        const next = b[pos + 1];
        if (next === undefined) throw new Malformed();
        if (next === 0x75 /* u */) {
          if (HEX[b[pos + 2] ?? 0] !== 1 || HEX[b[pos + 3] ?? 0] !== 1 || HEX[b[pos + 4] ?? 0] !== 1 || HEX[b[pos + 5] ?? 0] !== 1) throw new Malformed();
          pos += 5;
        } else if (SIMPLE_ESCAPE[next] === 1) pos++;
        else throw new Malformed();
      } else if (c < 0x20) throw new Malformed(); // control characters must be escaped
    }
    return pos;
  }

  #stringDone(end: number): void {
    if (!this.#stringIsKey) {
      this.#valueDone(end);
      return;
    }
    this.#expect = COLON;
    if (this.#depth === 1) {
      this.#memberKey = this.#wantedKey(this.#stringStart, end);
      this.#memberEscaped = this.#stringEscaped;
    }
  }

  /** The key between `start` (its opening quote) and `end` (past its closing quote), if it is wanted. */
  #wantedKey(start: number, end: number): string | undefined {
    if (this.#stringEscaped) {
      const key = JSON.parse(this.#buf.toString('utf8', start, end)) as string;
      return this.#wanted.has(key) ? key : undefined;
    }
    return this.#wanted.matchBytes(this.#buf, start + 1, end - 1);
  }

  /** Continues a number from `pos`; returns where it stopped (at the first byte after it once it ends). */
  #numberFrom(pos: number, stop: number): number {
    const b = this.#buf;
    let state = this.#number;
    for (; pos < stop; pos++) {
      const c = b[pos]!;
      const digit = c >= 0x30 && c <= 0x39;
      switch (state) {
        case NUM_MINUS:
          if (!digit) throw new Malformed();
          state = c === 0x30 ? NUM_ZERO : NUM_INT;
          continue;
        // biome-ignore lint/suspicious/noFallthroughSwitchClause: a state machine; each fall-through is commented where it happens.
        case NUM_INT:
          if (digit) continue;
        // falls through: after the integer part as after a lone zero
        case NUM_ZERO:
          if (c === 0x2e /* . */) state = NUM_DOT;
          else if (c === 0x65 || c === 0x45 /* e E */) state = NUM_E;
          else break;
          continue;
        case NUM_DOT:
          if (!digit) throw new Malformed();
          state = NUM_FRAC;
          continue;
        case NUM_FRAC:
          if (digit) continue;
          if (c === 0x65 || c === 0x45) {
            state = NUM_E;
            continue;
          }
          break;
        case NUM_E:
          if (c === 0x2b || c === 0x2d /* + - */) state = NUM_ESIGN;
          else if (digit) state = NUM_EXP;
          else throw new Malformed();
          continue;
        case NUM_ESIGN:
          if (!digit) throw new Malformed();
          state = NUM_EXP;
          continue;
        default: // NUM_EXP
          if (digit) continue;
      }
      // The number ended before `c`, which is left for the structure.
      this.#number = 0;
      this.#valueDone(pos);
      return pos;
    }
    this.#number = state;
    return pos;
  }

  #finish(): ScanResult {
    if (this.#inString) return { ok: false, reason: 'malformed' };
    if (this.#number !== 0) {
      // A number may end the body only if it is the top-level value (then it is not an object anyway).
      const state = this.#number;
      if (state !== NUM_ZERO && state !== NUM_INT && state !== NUM_FRAC && state !== NUM_EXP) return { ok: false, reason: 'malformed' };
      this.#number = 0;
      this.#valueDone(this.#buf.length);
    }
    if (this.#expect !== DONE) return { ok: false, reason: 'malformed' };
    if (this.#notObject) return { ok: false, reason: 'not-an-object' };
    return { ok: true, object: { members: this.#members, memberCount: this.#memberCount, closeAt: this.#closeAt } };
  }
}

/** Scans a whole body at once. */
export function scanJsonObject(buf: Buffer, wanted: WantedKeys): ScanResult {
  return new JsonObjectScanner(buf, wanted).step(Number.POSITIVE_INFINITY)!;
}
