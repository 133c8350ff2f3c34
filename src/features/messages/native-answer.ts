// The answer of a backend that speaks the Messages API itself: relayed byte for byte, and read only for its usage
// (features/messages/messages-usage.ts): from a stream's message_start and message_delta events (every other event
// is skipped unparsed), or from a whole answer's `usage`; a stream cut short hands what it read to the estimate.
// Observes only: never edits the bytes; but a whole answer to a stream request (a backend or cache that ignored
// `stream`) is told as its events (answer-events.ts).
import type { AnswerHandler } from '../../dataplane/exchange/transform.js';
import { jsonOr, WholeBody } from '../../dataplane/exchange/whole-body.js';
import { GatewayError } from '../../model/errors.js';
import type { Usage } from '../../model/usage.js';
import { answerEvents, type WholeMessage } from './answer-events.js';
import { messagesAnswerUsage, messageUsage, NativeStreamUsage } from './messages-usage.js';
import { SseEvents } from '../../dataplane/stream/sse-events.js';

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

/** A native whole answer to a stream request, as the events of its stream; its usage read as a whole answer's. */
export class NativeAnswerEvents extends WholeBody {
  readonly streams = true;
  protected readonly purpose = 'tell as stream events';
  #usage: Usage | undefined;

  constructor() {
    super(MAX_ANSWER_BYTES, true);
  }

  protected remake(text: string): string {
    const m = jsonOr(text, undefined) as (Partial<WholeMessage> & { type?: unknown }) | undefined;
    // The head waits for this body (holdsBody): what is not a message is an error answer, not a 200 cut short.
    if (m?.type !== 'message' || !Array.isArray(m.content))
      throw new GatewayError(502, 'The upstream answered a stream request with JSON that is not a message.', { code: 'upstream_error' });
    this.#usage = messageUsage(m.usage);
    return answerEvents({ ...m, usage: m.usage ?? {} } as WholeMessage);
  }

  onEnd(): Usage | undefined {
    return this.#usage;
  }
}
