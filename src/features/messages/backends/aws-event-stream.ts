// AWS event-stream framing (application/vnd.amazon.eventstream), read synchronously as chunks arrive: each message
// starts with its total length, so bytes are held until a whole message is there, which the AWS SDK's own codec
// (@smithy/core's EventStreamCodec) then checks (both CRC32s) and decodes. The SDK's chunker is an async
// iterator; the data plane's answer handlers are synchronous, hence this small splitter in front of the codec.
import { EventStreamCodec, type Message } from '@smithy/core/event-streams';
import { fromUtf8, toUtf8 } from '@smithy/core/serde';

export type { Message as EventStreamMessage } from '@smithy/core/event-streams';

/** Prelude (total and header lengths, prelude CRC) plus the message CRC. */
const MIN_MESSAGE_BYTES = 16;
/** The format's limit on one message (16 MiB, header and payload together). */
const MAX_MESSAGE_BYTES = 16 * 1024 * 1024 + 128 * 1024;

export class EventStreamError extends Error {
  override readonly name = 'EventStreamError';
}

export class EventStreamReader {
  readonly #codec = new EventStreamCodec(toUtf8, fromUtf8);
  #parts: Buffer[] = [];
  #held = 0;
  #failed: EventStreamError | undefined;

  /**
   * The messages completed by this chunk, in order. Throws EventStreamError on a malformed message (after passing on
   * the good ones before it), and on every call after.
   */
  push(chunk: Uint8Array): Message[] {
    if (this.#failed) throw this.#failed;
    if (chunk.byteLength === 0) return [];
    this.#parts.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
    this.#held += chunk.byteLength;
    const out: Message[] = [];
    try {
      while (this.#held >= 4) {
        const length = this.#peekLength();
        if (length < MIN_MESSAGE_BYTES || length > MAX_MESSAGE_BYTES) this.#fail(`a message claims ${length} bytes`);
        if (this.#held < length) break;
        const bytes = this.#take(length);
        try {
          out.push(this.#codec.decode(bytes));
        } catch (e) {
          this.#fail((e as Error).message);
        }
      }
    } catch (e) {
      // The messages before the bad one still go out; the failure is told at the next push or at the end.
      if (out.length > 0) return out;
      throw e;
    }
    return out;
  }

  /** The stream ended: throws EventStreamError if a message was cut short. */
  end(): void {
    if (this.#failed) throw this.#failed;
    if (this.#held > 0) this.#fail(`the stream ended inside a message (${this.#held} bytes held)`);
  }

  #fail(why: string): never {
    this.#failed = new EventStreamError(`malformed AWS event stream: ${why}`);
    this.#parts = [];
    this.#held = 0;
    throw this.#failed;
  }

  #peekLength(): number {
    let first = this.#parts[0]!;
    if (first.length < 4) first = this.#flatten();
    return first.readUInt32BE(0);
  }

  /** The first `n` held bytes as one buffer (copied only when they span chunks). */
  #take(n: number): Buffer {
    let first = this.#parts[0]!;
    if (first.length < n) first = this.#flatten();
    const taken = first.subarray(0, n);
    if (first.length === n) this.#parts.shift();
    else this.#parts[0] = first.subarray(n);
    this.#held -= n;
    return taken;
  }

  #flatten(): Buffer {
    const all = Buffer.concat(this.#parts, this.#held);
    this.#parts = [all];
    return all;
  }
}
