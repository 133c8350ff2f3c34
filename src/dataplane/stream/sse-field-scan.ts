// Rewrites fields inside the JSON of Server-Sent Events as the bytes arrive, without holding events: the SSE
// framing is followed byte by byte and the value of each `data:` line is shown to a JsonFieldScanner (one JSON
// document per event), so only the bytes of a field being replaced are ever held. An event of any size (a
// response.completed carrying a 30 MB Response) has its ids rewritten, and events go out byte for byte as they
// came apart from the replaced values. Most events (token deltas) cannot hold a watched field, which a native
// search shows: they are not scanned at all.
import { Transform, type TransformCallback } from 'node:stream';
import { ChunkSplice, JsonFieldScanner, type FieldPaths, type ReplaceValue } from './json-field-scan.js';

const LF = 0x0a;
const CR = 0x0d;
const COLON = 0x3a;
const SPACE = 0x20;
const DATA = Buffer.from('data');

const LINE_START = 0;
/** Reading a field name, matching it against "data". */
const NAME = 1;
/** After "data:": one optional space. */
const SPACE_AFTER_COLON = 2;
/** In the value of a data line: JSON. */
const VALUE = 3;
/** In any other line (another field, a comment): passed through. */
const OTHER = 4;

/**
 * Follows SSE framing (lines end in LF, CRLF or CR; a blank line ends an event) and hands the value of every data
 * line to a JSON scanner, reset at each event. Output is recorded in the caller's ChunkSplice.
 */
export class SseDataScanner {
  readonly #json: JsonFieldScanner;
  readonly #onLine: DataLineObserver | undefined;
  /** What a data line must contain for the scanner to have anything to find in it (see JsonFieldScanner.firstKeys). */
  readonly #mayHold: readonly Buffer[];
  #state = LINE_START;
  #name = 0;
  /** The previous byte was a CR ending a line: an LF right after it belongs to the same line end. */
  #afterCR = false;
  /** The data line being read began in an earlier chunk. */
  #lineContinues = false;
  /** Data lines of this event that were not scanned; shown to the scanner first if a later line must be. */
  #skipped: Buffer[] = [];
  /** A line of this event was scanned: the rest must be too (the scanner follows the document's structure). */
  #scanning = false;

  constructor(paths: FieldPaths, replace: ReplaceValue, onLine?: DataLineObserver) {
    this.#json = new JsonFieldScanner(paths, replace);
    this.#onLine = onLine;
    this.#mayHold = mayHoldNeedles(paths);
  }

  push(chunk: Buffer, out: ChunkSplice): void {
    const n = chunk.length;
    let cr = chunk.indexOf(CR);
    const lineEnd = (from: number): number => {
      if (cr !== -1 && cr < from) cr = chunk.indexOf(CR, from);
      const lf = chunk.indexOf(LF, from);
      const end = lf === -1 ? n : lf;
      return cr !== -1 && cr < end ? cr : end;
    };
    // Next position of each mayHold needle in the chunk, searched again only once passed (linear per chunk).
    const next = this.#mayHold.map(() => -2);
    const mayHold = (from: number, to: number): boolean =>
      this.#mayHold.some((needle, k) => {
        if (next[k] !== -1 && next[k]! < from) next[k] = chunk.indexOf(needle, from);
        return next[k] !== -1 && next[k]! + needle.length <= to;
      });
    let i = 0;
    while (i < n) {
      if (this.#afterCR) {
        this.#afterCR = false;
        if (chunk[i] === LF) {
          i++;
          continue;
        }
      }
      const b = chunk[i]!;
      switch (this.#state) {
        case LINE_START:
          if (b === LF || b === CR) {
            this.#endEvent(i, out); // a blank line: the event is complete
            this.#lineEnded(b);
            i++;
          } else {
            this.#state = NAME;
            this.#name = 0;
          }
          break;
        case NAME:
          if (this.#name < DATA.length) {
            if (b === DATA[this.#name]) {
              this.#name++;
              i++;
            } else this.#state = OTHER;
          } else if (b === COLON) {
            this.#state = SPACE_AFTER_COLON;
            i++;
          } else if (b === LF || b === CR) {
            if (this.#scanning) this.#json.lineBreak(i, out); // "data" alone: an empty data line
            this.#lineEnded(b);
            i++;
          } else this.#state = OTHER;
          break;
        case SPACE_AFTER_COLON:
          if (b === SPACE) i++;
          this.#state = VALUE;
          break;
        case VALUE: {
          const end = lineEnd(i);
          const whole = end < n && !this.#lineContinues;
          if (whole) this.#onLine?.(chunk, i, end);
          if (!this.#scanning && whole && !mayHold(i, end)) this.#skipped.push(chunk.subarray(i, end));
          else {
            if (!this.#scanning) this.#replaySkipped();
            this.#scanning = true;
            this.#json.scan(chunk, i, end, out);
          }
          if (end < n) {
            if (this.#scanning) this.#json.lineBreak(end, out);
            this.#lineEnded(chunk[end]!);
          } else this.#lineContinues = true;
          i = end + 1;
          break;
        }
        default: {
          // OTHER
          const end = lineEnd(i);
          if (end < n) this.#lineEnded(chunk[end]!);
          i = end + 1;
        }
      }
    }
  }

  /** End of the stream: an unterminated last event is still a document (some servers omit the final blank line). */
  end(out: ChunkSplice): void {
    this.#endEvent(0, out);
    this.#state = LINE_START;
    this.#afterCR = false;
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

  #lineEnded(b: number): void {
    this.#state = LINE_START;
    this.#afterCR = b === CR;
    this.#lineContinues = false;
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
