// The answer of a backend that speaks the Messages API itself: relayed byte for byte, and read only for its usage
// (features/messages/messages-usage.ts): from a stream's message_start and message_delta events (every other event
// is skipped unparsed), or from a whole answer's `usage`; a stream cut short hands what it read to the estimate.
// Observes only: never edits the bytes.
import type { AnswerHandler } from '../../dataplane/exchange/transform.js';
import type { Usage } from '../../model/usage.js';
import { messagesAnswerUsage, NativeStreamUsage } from './messages-usage.js';
import { SseEvents } from './sse-events.js';

/** A whole answer longer than this is not parsed for its usage (the usage feature then estimates). */
const MAX_ANSWER_BYTES = 8 * 1024 * 1024;

const USAGE_EVENTS = (event: string) => event === 'message_start' || event === 'message_delta';

/** The reader of a native event stream's usage. */
export class NativeStreamReader implements AnswerHandler {
  readonly #counts = new NativeStreamUsage();
  readonly #events = new SseEvents(USAGE_EVENTS, (_event, data) => this.#observe(data));

  onData(chunk: Buffer): Buffer {
    this.#events.push(chunk);
    return chunk;
  }

  onEnd(): Usage | undefined {
    return this.#counts.usage();
  }

  /** A stream cut short: message_start's input and cache counts are the upstream's own (its output count is not). */
  partial(): Usage | undefined {
    return this.#counts.usage();
  }

  #observe(data: string): void {
    try {
      this.#counts.observe(JSON.parse(data));
    } catch {
      // Not JSON: nothing to count in it; the answer is relayed as it came.
    }
  }
}

/** The reader of a native whole answer's usage. */
export class NativeAnswerReader implements AnswerHandler {
  #chunks: Buffer[] | undefined = [];
  #bytes = 0;

  onData(chunk: Buffer): Buffer {
    if (this.#chunks) {
      this.#bytes += chunk.length;
      if (this.#bytes > MAX_ANSWER_BYTES) this.#chunks = undefined;
      else this.#chunks.push(chunk);
    }
    return chunk;
  }

  onEnd(): Usage | undefined {
    const chunks = this.#chunks;
    if (!chunks) return undefined;
    return messagesAnswerUsage(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
  }
}
