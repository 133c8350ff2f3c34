// Rewrites JSON inside Server-Sent Events as the bytes arrive: each event is handled as soon as its blank line
// is seen, so at most one (partial) event is ever held, and nothing waits for the end of the stream. Events the
// rewriter does not change go out byte for byte as they came; only a changed event is re-serialized.
import { Transform, type TransformCallback } from 'node:stream';
import { sealResponseEvent, type SealContext } from '../routing/id-rewrite.js';

/** Mutates one event's parsed `data` JSON in place; returns true when it changed something. */
export type SseDataRewrite = (data: unknown) => boolean;

export interface SseRewriteOptions {
  /**
   * Cheap byte-level pre-filter: events whose raw bytes lack this string are never parsed (token deltas stream
   * through without a JSON.parse). Omit to parse every event.
   */
  readonly mustContain?: string;
  /**
   * An event bigger than this is passed through unparsed as it arrives, so one huge event cannot make the
   * gateway hold unbounded memory. Default 16 MiB.
   */
  readonly maxEventBytes?: number;
}

const LF = 0x0a;
const CR = 0x0d;

/**
 * Splits a byte stream into raw SSE events (each including its terminating blank line). Lines end in LF, CRLF
 * or CR (per the SSE spec); a CR at the very end of a chunk is held until the next byte shows whether an LF
 * belongs to it.
 */
export class SseEventSplitter {
  #pending: Buffer[] = [];
  #pendingBytes = 0;
  /** The current line has content (so a line end does not end the event). */
  #lineHasContent = false;
  /** The previous byte was a CR that ended a line; a following LF belongs to it. */
  #afterCR = false;
  /** The CR just seen ended an empty line: the event ends after it (and after its LF, if one follows). */
  #endAfterCR = false;
  /** Set when the current event outgrew the limit: bytes now flow straight through until it ends. */
  #passthrough = false;

  constructor(private readonly maxEventBytes = Number.POSITIVE_INFINITY) {}

  /** Feeds a chunk; `onEvent` gets each complete event, `onPassthrough` bytes of an oversized event. */
  push(chunk: Buffer, onEvent: (raw: Buffer) => void, onPassthrough: (bytes: Buffer) => void): void {
    let start = 0;
    for (let i = 0; i < chunk.length; i++) {
      const b = chunk[i];
      if (this.#endAfterCR) {
        // The event ended at a CR of an empty line; swallow its LF (if any) into the same event.
        this.#endAfterCR = false;
        this.#afterCR = false;
        const end = b === LF ? i + 1 : i;
        this.#emit(chunk.subarray(start, end), onEvent, onPassthrough);
        start = end;
        if (b === LF) continue;
      }
      if (b === LF) {
        if (this.#afterCR) {
          this.#afterCR = false; // second half of a CRLF; the line already ended at the CR
          continue;
        }
        if (!this.#lineHasContent) {
          this.#emit(chunk.subarray(start, i + 1), onEvent, onPassthrough);
          start = i + 1;
        }
        this.#lineHasContent = false;
      } else if (b === CR) {
        this.#afterCR = true;
        if (!this.#lineHasContent) this.#endAfterCR = true;
        this.#lineHasContent = false;
      } else {
        this.#afterCR = false;
        this.#lineHasContent = true;
      }
    }
    if (start < chunk.length) this.#hold(chunk.subarray(start), onPassthrough);
  }

  /**
   * End of stream: an unterminated last event is still handed to `onEvent` (some servers omit the final blank
   * line and some clients act on it anyway, so its ids must be rewritten too).
   */
  flush(onEvent: (raw: Buffer) => void): void {
    this.#endAfterCR = false;
    this.#afterCR = false;
    this.#lineHasContent = false;
    if (this.#passthrough) {
      this.#passthrough = false;
      return;
    }
    if (this.#pendingBytes > 0) onEvent(this.#take(Buffer.alloc(0)));
  }

  #emit(tail: Buffer, onEvent: (raw: Buffer) => void, onPassthrough: (bytes: Buffer) => void): void {
    if (this.#passthrough) {
      this.#passthrough = false;
      if (tail.length > 0) onPassthrough(tail);
      return;
    }
    onEvent(this.#take(tail));
  }

  #hold(bytes: Buffer, onPassthrough: (bytes: Buffer) => void): void {
    if (this.#passthrough) {
      onPassthrough(bytes);
      return;
    }
    this.#pending.push(bytes);
    this.#pendingBytes += bytes.length;
    if (this.#pendingBytes > this.maxEventBytes) {
      this.#passthrough = true;
      onPassthrough(this.#take(Buffer.alloc(0)));
    }
  }

  #take(tail: Buffer): Buffer {
    const out = this.#pending.length === 0 ? tail : Buffer.concat([...this.#pending, tail]);
    this.#pending = [];
    this.#pendingBytes = 0;
    return out;
  }
}

/**
 * Applies `rewrite` to one raw event: the parsed JSON of its data lines. Returns the raw bytes untouched when
 * the event has no JSON data or the rewrite changed nothing.
 */
export function rewriteSseEvent(raw: Buffer, rewrite: SseDataRewrite, mustContain?: string): Buffer {
  if (mustContain !== undefined && raw.indexOf(mustContain) === -1) return raw;
  const lines = raw.toString('utf8').split(/\r\n|\r|\n/);
  const data: string[] = [];
  for (const line of lines) if (line === 'data' || line.startsWith('data:')) data.push(fieldValue(line));
  if (data.length === 0) return raw;
  let parsed: unknown;
  try {
    parsed = JSON.parse(data.join('\n'));
  } catch {
    return raw;
  }
  if (!rewrite(parsed)) return raw;
  const out: string[] = [];
  let wroteData = false;
  for (const line of lines) {
    if (line === '') continue;
    if (line === 'data' || line.startsWith('data:')) {
      if (!wroteData) out.push(`data: ${JSON.stringify(parsed)}`);
      wroteData = true;
    } else {
      out.push(line);
    }
  }
  return Buffer.from(out.join('\n') + '\n\n', 'utf8');
}

/** The value of an SSE `field: value` line: after the colon, minus one leading space. */
function fieldValue(line: string): string {
  const colon = line.indexOf(':');
  if (colon === -1) return '';
  const v = line.slice(colon + 1);
  return v.startsWith(' ') ? v.slice(1) : v;
}

/** A byte Transform applying `rewrite` to every event's JSON data, event by event as the stream flows. */
export function createSseRewriteStream(rewrite: SseDataRewrite, options: SseRewriteOptions = {}): Transform {
  const splitter = new SseEventSplitter(options.maxEventBytes ?? 16 * 1024 * 1024);
  return new Transform({
    transform(chunk: Buffer | string, _enc: BufferEncoding, done: TransformCallback) {
      const buf = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      try {
        splitter.push(
          buf,
          (raw) => this.push(rewriteSseEvent(raw, rewrite, options.mustContain)),
          (bytes) => this.push(bytes),
        );
        done();
      } catch (err) {
        done(err as Error);
      }
    },
    flush(done: TransformCallback) {
      try {
        splitter.flush((raw) => this.push(rewriteSseEvent(raw, rewrite, options.mustContain)));
        done();
      } catch (err) {
        done(err as Error);
      }
    },
  });
}

/** The Responses API stream (create with stream:true, retrieve with ?stream=true): seals the response ids. */
export function createResponsesIdRewriteStream(ctx: SealContext, options: Omit<SseRewriteOptions, 'mustContain'> = {}): Transform {
  // Only lifecycle events carry a `response` object; everything else (token deltas) skips JSON.parse.
  return createSseRewriteStream((data) => sealResponseEvent(data, ctx), { ...options, mustContain: '"response"' });
}
