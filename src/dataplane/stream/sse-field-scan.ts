// Rewrites fields inside the JSON of Server-Sent Events as the bytes arrive, without holding events: the SSE
// framing is followed by the one splitter (sse.ts) and the value of each `data:` line is shown to a JsonFieldScanner (one JSON
// document per event), so only the bytes of a field being replaced are ever held. An event of any size (a
// response.completed carrying a 30 MB Response) has its ids rewritten, and events go out byte for byte as they
// came apart from the replaced values. Most events (token deltas) cannot hold a watched field, which a native
// search shows: they are not scanned at all.
import { Transform, type TransformCallback } from 'node:stream';
import { ChunkSplice, JsonFieldScanner, type FieldPaths, type ReplaceValue } from './json-field-scan.js';
import { type SseLineReader, SseSplitter } from './sse.js';

const COLON = 0x3a;
const SPACE = 0x20;
const DATA = Buffer.from('data');

/** Reading a field name, matching it against "data". */
const NAME = 1;
/** After "data:": one optional space. */
const SPACE_AFTER_COLON = 2;
/** In the value of a data line: JSON. */
const VALUE = 3;
/** In any other line (another field, a comment): passed through. */
const OTHER = 4;

/**
 * Reads the lines the SSE splitter finds (sse.ts: LF, CRLF or CR; a blank line ends an event) and hands the value of
 * every data line to a JSON scanner, reset at each event. Output is recorded in the caller's ChunkSplice.
 */
export class SseDataScanner implements SseLineReader {
  readonly #json: JsonFieldScanner;
  readonly #onLine: DataLineObserver | undefined;
  readonly #lines = new SseSplitter();
  /** What a data line must contain for the scanner to have anything to find in it (see JsonFieldScanner.firstKeys). */
  readonly #mayHold: readonly Buffer[];
  /** Next position of each mayHold needle in the chunk being read, searched again only once passed (linear per chunk). */
  readonly #next: number[];
  #out: ChunkSplice | undefined;
  #state = NAME;
  #name = 0;
  /** The data line being read began in an earlier chunk. */
  #lineContinues = false;
  /** Bytes of the current data line's value were read in this chunk. */
  #valueRead = false;
  /** Data lines of this event that were not scanned; shown to the scanner first if a later line must be. */
  #skipped: Buffer[] = [];
  /** A line of this event was scanned: the rest must be too (the scanner follows the document's structure). */
  #scanning = false;

  constructor(paths: FieldPaths, replace: ReplaceValue, onLine?: DataLineObserver) {
    this.#json = new JsonFieldScanner(paths, replace);
    this.#onLine = onLine;
    this.#mayHold = mayHoldNeedles(paths);
    this.#next = this.#mayHold.map(() => -2);
  }

  push(chunk: Buffer, out: ChunkSplice): void {
    this.#out = out;
    this.#next.fill(-2);
    this.#valueRead = false;
    this.#lines.push(chunk, this);
    // A value cut by the chunk's end: its next piece is not a whole line.
    if (this.#state === VALUE && this.#valueRead) this.#lineContinues = true;
    this.#out = undefined;
  }

  lineBytes(chunk: Buffer, from: number, to: number): void {
    let i = from;
    while (i < to && this.#state === NAME) {
      const b = chunk[i]!;
      if (this.#name < DATA.length) {
        if (b === DATA[this.#name]) {
          this.#name++;
          i++;
        } else this.#state = OTHER;
      } else if (b === COLON) {
        this.#state = SPACE_AFTER_COLON;
        i++;
      } else this.#state = OTHER;
    }
    if (this.#state === SPACE_AFTER_COLON && i < to) {
      if (chunk[i] === SPACE) i++;
      this.#state = VALUE;
    }
    if (this.#state === VALUE && i < to) this.#value(chunk, i, to);
  }

  lineEnd(chunk: Buffer, at: number, _next: number, blank: boolean, completes: boolean): void {
    if (completes) return;
    const out = this.#out!;
    if (blank) this.#endEvent(at, out);
    else if (this.#state === VALUE || this.#state === SPACE_AFTER_COLON) {
      // A value with no bytes in this chunk: empty, or the end of one that began in an earlier chunk.
      if (!this.#valueRead) this.#value(chunk, at, at);
      if (this.#scanning) this.#json.lineBreak(at, out);
    } else if (this.#state === NAME && this.#name === DATA.length && this.#scanning) this.#json.lineBreak(at, out); // "data" alone: an empty data line
    this.#state = NAME;
    this.#name = 0;
    this.#lineContinues = false;
    this.#valueRead = false;
  }

  /** End of the stream: an unterminated last event is still a document (some servers omit the final blank line). */
  end(out: ChunkSplice): void {
    this.#endEvent(0, out);
    this.#lines.reset();
    this.#state = NAME;
    this.#name = 0;
    this.#lineContinues = false;
  }

  /** The value bytes chunk[from, to) of a data line; the line ends at `to` when that is inside the chunk. */
  #value(chunk: Buffer, from: number, to: number): void {
    this.#state = VALUE;
    this.#valueRead = true;
    const out = this.#out!;
    const whole = to < chunk.length && !this.#lineContinues;
    if (whole) this.#onLine?.(chunk, from, to);
    if (!this.#scanning && whole && !this.#mayHoldIn(chunk, from, to)) this.#skipped.push(chunk.subarray(from, to));
    else {
      if (!this.#scanning) this.#replaySkipped();
      this.#scanning = true;
      this.#json.scan(chunk, from, to, out);
    }
  }

  #mayHoldIn(chunk: Buffer, from: number, to: number): boolean {
    const next = this.#next;
    for (let k = 0; k < this.#mayHold.length; k++) {
      const needle = this.#mayHold[k]!;
      if (next[k] !== -1 && next[k]! < from) next[k] = chunk.indexOf(needle, from);
      if (next[k] !== -1 && next[k]! + needle.length <= to) return true;
    }
    return false;
  }

  #endEvent(at: number, out: ChunkSplice): void {
    this.#json.reset(at, out);
    this.#skipped = [];
    this.#scanning = false;
  }

  /** The skipped lines went out already; the scanner only needs to have followed them (they hold no watched field). */
  #replaySkipped(): void {
    const aside = new ChunkSplice();
    for (const line of this.#skipped) {
      aside.begin(line);
      this.#json.scan(line, 0, line.length, aside);
      this.#json.lineBreak(line.length, aside);
    }
    this.#skipped = [];
  }
}

const UNICODE_ESCAPE = Buffer.from('\\u');
const needles = new WeakMap<FieldPaths, readonly Buffer[]>();

function mayHoldNeedles(paths: FieldPaths): readonly Buffer[] {
  let n = needles.get(paths);
  if (n === undefined) needles.set(paths, (n = [...paths.firstKeys, UNICODE_ESCAPE]));
  return n;
}

/** Sees each data line that lies whole within one chunk, chunk[from, to), e.g. to read a field cheaply. */
export type DataLineObserver = (chunk: Buffer, from: number, to: number) => void;

/** A byte Transform rewriting the watched fields of every event's JSON data, as the stream flows. */
export function sseFieldStream(paths: FieldPaths, replace: ReplaceValue, onLine?: DataLineObserver): Transform {
  const sse = new SseDataScanner(paths, replace, onLine);
  const splice = new ChunkSplice();
  return new Transform({
    transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback) {
      try {
        splice.begin(chunk);
        sse.push(chunk, splice);
        const out = splice.finish();
        done(null, out.length > 0 ? out : undefined);
      } catch (err) {
        done(err as Error);
      }
    },
    flush(done: TransformCallback) {
      splice.begin(Buffer.alloc(0));
      sse.end(splice);
      const out = splice.finish();
      done(null, out.length > 0 ? out : undefined);
    },
  });
}
