// The events of a Server-Sent Events stream, read with the one SSE splitter (sse.ts): each event's
// name (its `event:` line) and its data (the `data:` lines joined by LF), for the readers that must parse events
// rather than pass bytes through (a chat stream translated to Messages or Responses events, the usage of a native Messages
// stream). Events the caller does not want are skipped without holding their bytes. Pure.
import { type SseLineReader, SseSplitter } from './sse.js';

/** The longest event held; a longer one fails the stream (a chat chunk or a Messages event is a few KiB at most). */
const MAX_EVENT_BYTES = 4 * 1024 * 1024;
const EVENT = Buffer.from('event:');
const DATA = Buffer.from('data:');

export class SseEventTooLarge extends Error {
  constructor() {
    super(`An upstream event is larger than ${MAX_EVENT_BYTES} bytes.`);
  }
}

export class SseEvents implements SseLineReader {
  readonly #lines = new SseSplitter();
  readonly #wants: (event: string) => boolean;
  readonly #onEvent: (event: string | undefined, data: string) => void;
  #line: Buffer[] = [];
  #lineBytes = 0;
  #event: string | undefined;
  #data: string | undefined;
  /** The current event's `event:` named one the caller does not want: its lines are skipped. */
  #skipping = false;

  /**
   * `wants`: whether to read an event of that name (asked at its `event:` line; events without one are read);
   * `onEvent`: each event read, with its name when it had one, and its data.
   */
  constructor(wants: (event: string) => boolean, onEvent: (event: string | undefined, data: string) => void) {
    this.#wants = wants;
    this.#onEvent = onEvent;
  }

  push(chunk: Buffer): void {
    this.#lines.push(chunk, this);
  }

  /** The stream ended: an event without its closing blank line is not dispatched (as EventSource does). */
  end(): void {
    this.#lines.reset();
    this.#line = [];
    this.#lineBytes = 0;
  }

  lineBytes(chunk: Buffer, from: number, to: number): void {
    if (this.#skipping) return;
    this.#lineBytes += to - from;
    if (this.#lineBytes > MAX_EVENT_BYTES) throw new SseEventTooLarge();
    this.#line.push(chunk.subarray(from, to));
  }

  lineEnd(_chunk: Buffer, _at: number, _next: number, blank: boolean): void {
    if (blank) {
      const event = this.#event;
      const data = this.#data;
      this.#event = this.#data = undefined;
      this.#skipping = false;
      if (data !== undefined) this.#onEvent(event, data);
      return;
    }
    if (this.#skipping) return;
    const parts = this.#line;
    this.#line = [];
    this.#lineBytes = 0;
    if (parts.length === 0) return;
    const line = parts.length === 1 ? parts[0]! : Buffer.concat(parts);
    if (startsWith(line, DATA)) {
      const value = field(line, DATA.length);
      this.#data = this.#data === undefined ? value : `${this.#data}\n${value}`;
      if (this.#data.length > MAX_EVENT_BYTES) throw new SseEventTooLarge();
    } else if (startsWith(line, EVENT)) {
      this.#event = field(line, EVENT.length);
      if (!this.#wants(this.#event)) this.#skipping = true;
    }
  }
}

/** Compared byte by byte: Buffer's compare() checks its arguments and crosses into C++, costing far more for 5 bytes. */
function startsWith(line: Buffer, prefix: Buffer): boolean {
  if (line.length < prefix.length) return false;
  for (let i = 0; i < prefix.length; i++) if (line[i] !== prefix[i]) return false;
  return true;
}

/** A field's value: after the colon, one leading space dropped (the SSE rule). */
function field(line: Buffer, from: number): string {
  return line.toString('utf8', line[from] === 0x20 ? from + 1 : from);
}
