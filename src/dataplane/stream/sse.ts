// The one reader of Server-Sent Events on the answer path, and what the readers of an answer share: a line
// splitter that follows SSE framing (lines end in LF, CRLF or CR, a line end may be split across chunks, a blank
// line ends an event), the bytes kept from an answer's tail, and the first chunk of a stream. The splitter reports
// byte ranges, never strings, and allocates nothing per chunk: the usage chunk filter passes the bytes on as they
// came. eventsource-parser was measured against it (bench/sse-parse.ts): it decodes to strings and builds an event
// object per event, which the relay's pass-through path does not need.
const LF = 0x0a;
const CR = 0x0d;

/** What a splitter tells its reader, in the order of the bytes. */
export interface SseLineReader {
  /** Bytes chunk[from, to) of the current line, never empty (a line may come in several pieces, across chunks). */
  lineBytes(chunk: Buffer, from: number, to: number): void;
  /**
   * A line ended; its line end is chunk[at, next). `blank`: the line was empty, so an event ends here. `completes`:
   * this is the LF of a CRLF whose CR ended the previous chunk (at = 0, next = 1), the line was reported ended then.
   */
  lineEnd(chunk: Buffer, at: number, next: number, blank: boolean, completes: boolean): void;
}

/** Splits chunks into SSE lines for a reader, keeping what a line end split across chunks needs. */
export class SseSplitter {
  /** The previous chunk ended in a CR: an LF first in this one completes its line end. */
  #afterCR = false;
  /** Whether the line the CR ended was blank. */
  #crBlank = false;
  /** The current line has bytes already (so a line end now does not end the event). */
  #lineHasBytes = false;

  /** No line in progress and no line end to complete: a chunk read now starts a new line. */
  get atLineStart(): boolean {
    return !this.#afterCR && !this.#lineHasBytes;
  }

  push(chunk: Buffer, reader: SseLineReader): void {
    const n = chunk.length;
    let i = 0;
    if (this.#afterCR && n > 0) {
      this.#afterCR = false;
      if (chunk[0] === LF) {
        reader.lineEnd(chunk, 0, 1, this.#crBlank, true);
        i = 1;
      }
    }
    // Only line ends matter: the loop jumps from one to the next with native searches.
    let lf = chunk.indexOf(LF, i);
    let cr = chunk.indexOf(CR, i);
    while (i < n) {
      if (lf !== -1 && lf < i) lf = chunk.indexOf(LF, i);
      if (cr !== -1 && cr < i) cr = chunk.indexOf(CR, i);
      const end = lf === -1 ? cr : cr === -1 ? lf : Math.min(lf, cr);
      if (end === -1) {
        reader.lineBytes(chunk, i, n);
        this.#lineHasBytes = true;
        return;
      }
      if (end > i) {
        reader.lineBytes(chunk, i, end);
        this.#lineHasBytes = true;
      }
      const blank = !this.#lineHasBytes;
      this.#lineHasBytes = false;
      let next = end + 1;
      if (chunk[end] === CR) {
        if (next === n) {
          this.#afterCR = true;
          this.#crBlank = blank;
        } else if (chunk[next] === LF) next++;
      }
      reader.lineEnd(chunk, end, next, blank, false);
      i = next;
    }
  }

  /** Forgets a line in progress (the stream ended). */
  reset(): void {
    this.#afterCR = this.#crBlank = this.#lineHasBytes = false;
  }
}

const OPEN_BRACE = 0x7b;

/**
 * Whether a body its server labelled JSON is an event stream: told by its first byte that is not whitespace, `{`
 * opening a JSON document; undefined while only whitespace came.
 */
export function isEventStreamBody(chunk: Buffer): boolean | undefined {
  const first = chunk.findIndex((b) => b !== 0x20 && b !== LF && b !== CR && b !== 0x09);
  return first < 0 ? undefined : chunk[first] !== OPEN_BRACE;
}

/** True once: for the first chunk of a body (the time to first token, on the metric and on the spans). */
export class FirstChunk {
  #seen = false;

  /** True for the first call only. */
  now(): boolean {
    if (this.#seen) return false;
    this.#seen = true;
    return true;
  }
}

/** The usage object and the model's name sit in the last few KiB of every OpenAI-shaped answer. */
const TAIL_BYTES = 32 * 1024;
const FIRST_SIZE = 2 * 1024;
const EMPTY = Buffer.alloc(0);

/**
 * The bytes of an answer its readers need: all of them up to a cap (what an estimate tokenizes), past it only the
 * tail (where the usage object and the model are). Copied into one buffer of its own rather than held as the chunks
 * relayed: a chunk is often a small view of a larger socket buffer, and holding a few hundred of them per open
 * stream can keep all those buffers alive.
 */
export class AnswerTail {
  readonly #keepAll: number;
  #buf: Buffer | undefined;
  #length = 0;
  /** Bytes seen in all. */
  total = 0;

  /** keepAll: bytes kept whole before only the tail is (0: the tail only). */
  constructor(keepAll: number) {
    this.#keepAll = keepAll;
  }

  push(chunk: Buffer): void {
    this.total += chunk.length;
    if (this.total > this.#keepAll && this.#length + chunk.length > 2 * TAIL_BYTES) {
      // Keep the last TAIL_BYTES of what is held plus this chunk.
      if (chunk.length >= TAIL_BYTES) {
        this.#ensure(TAIL_BYTES);
        chunk.copy(this.#buf!, 0, chunk.length - TAIL_BYTES);
        this.#length = TAIL_BYTES;
        return;
      }
      const keep = TAIL_BYTES - chunk.length;
      this.#buf!.copyWithin(0, this.#length - keep, this.#length);
      this.#length = keep;
    }
    this.#ensure(this.#length + chunk.length);
    chunk.copy(this.#buf!, this.#length);
    this.#length += chunk.length;
  }

  /** The bytes held, as text. */
  text(): string {
    return this.#buf ? this.#buf.toString('utf8', 0, this.#length) : '';
  }

  /** The last TAIL_BYTES held (or all, when fewer). A view, valid until the next push. */
  tail(): Buffer {
    return this.#buf ? this.#buf.subarray(Math.max(0, this.#length - TAIL_BYTES), this.#length) : EMPTY;
  }

  #ensure(size: number): void {
    if (this.#buf && this.#buf.length >= size) return;
    let next = Math.max(FIRST_SIZE, (this.#buf?.length ?? 0) * 2);
    while (next < size) next *= 2;
    const grown = Buffer.allocUnsafe(next);
    if (this.#buf) this.#buf.copy(grown, 0, 0, this.#length);
    this.#buf = grown;
  }
}
