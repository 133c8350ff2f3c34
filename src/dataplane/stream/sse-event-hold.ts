// Holds back the bytes of a server-sent event until the blank line that ends it, so a stream the upstream breaks
// off can end at an event boundary: the half event is dropped instead of reaching the client, where a terminating
// blank line would dispatch it and the SDKs would fail on its cut JSON before they read the gateway's error event.
// Events come whole in one read as a rule, so this passes them on without a copy; comment lines between events
// (keep-alives) go out at once; an event larger than the hold goes out as it comes (a cut inside it is then closed
// with a blank line, the best left to do).
import { type SseLineReader, SseSplitter } from './sse.js';

/** Most bytes of one incomplete event held before they go out anyway (bounds the memory of a stream). */
const MAX_HELD_EVENT_BYTES = 256 * 1024;

export class SseEventHold implements SseLineReader {
  readonly #lines = new SseSplitter();
  readonly #max: number;
  #held: Buffer[] = [];
  #heldBytes = 0;
  /** In the chunk being read: where its last complete event ends (-1: none ends in it). */
  #cut = -1;
  /** Bytes of an incomplete event went out already (it outgrew the hold). */
  #midEvent = false;
  /** The event being read has a line other than a comment: until it ends, nothing more may go out. */
  #fields = false;
  #lineStart = true;

  constructor(max = MAX_HELD_EVENT_BYTES) {
    this.#max = max;
  }

  /** The bytes that can go out now: every complete event so far. */
  push(chunk: Buffer): Buffer {
    // The common case, unread: nothing held, and the chunk ends with a blank line, so it holds whole events only.
    if (this.#heldBytes === 0 && !this.#midEvent && this.#lines.atLineStart && endsEvent(chunk)) {
      this.#fields = false;
      this.#lineStart = true;
      return chunk;
    }
    this.#cut = -1;
    this.#lines.push(chunk, this);
    const cut = this.#cut;
    if (cut === -1) {
      if (this.#midEvent) return chunk;
      this.#hold(chunk);
      if (this.#heldBytes <= this.#max) return EMPTY;
      this.#midEvent = true;
      return this.#release(EMPTY);
    }
    this.#midEvent = false;
    const out = this.#release(cut === chunk.length ? chunk : chunk.subarray(0, cut));
    if (cut < chunk.length) this.#hold(chunk.subarray(cut));
    return out;
  }

  /** The stream ended: what is held goes out (an unterminated last event is still an event to most readers). */
  end(): Buffer {
    return this.#release(EMPTY);
  }

  /** Whether every byte that went out ended a complete event (what is held is dropped when the stream fails). */
  get atBoundary(): boolean {
    return !this.#midEvent;
  }

  lineBytes(chunk: Buffer, from: number): void {
    if (this.#lineStart && chunk[from] !== COLON) this.#fields = true;
    this.#lineStart = false;
  }

  lineEnd(_chunk: Buffer, _at: number, next: number, blank: boolean): void {
    this.#lineStart = true;
    // Comment lines before any field (an upstream's keep-alives) go out at once: they dispatch nothing.
    if (blank) this.#fields = false;
    if (!this.#fields) this.#cut = next;
  }

  /** A copy: the chunk is often a small view of a larger socket buffer. */
  #hold(bytes: Buffer): void {
    this.#held.push(Buffer.from(bytes));
    this.#heldBytes += bytes.length;
  }

  #release(tail: Buffer): Buffer {
    if (this.#heldBytes === 0) return tail;
    const out = Buffer.concat(tail.length > 0 ? [...this.#held, tail] : this.#held);
    this.#held = [];
    this.#heldBytes = 0;
    return out;
  }
}

/** Whether a chunk read from a line start ends with a blank line: LF LF, or CR LF after a line end. */
function endsEvent(chunk: Buffer): boolean {
  const n = chunk.length;
  if (n < 2 || chunk[n - 1] !== LF) return false;
  return chunk[n - 2] === LF || (n >= 3 && chunk[n - 2] === CR && chunk[n - 3] === LF);
}

const EMPTY = Buffer.alloc(0);
const COLON = 0x3a;
const LF = 0x0a;
const CR = 0x0d;
