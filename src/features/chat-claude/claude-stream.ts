// An anthropic backend's event stream answering a translated chat request, as chat completion chunks
// (messages-stream-to-chat.ts, its events read with the one SSE reader; Bedrock's AWS event stream decoded into
// Anthropic's SSE first), and a stream request's answer labelled JSON as whichever its first byte tells. Each
// returns the usage the backend reported, which the exchange settles with.
import type { AnswerHandler } from '../../dataplane/exchange/transform.js';
import { isEventStreamBody } from '../../dataplane/stream/sse.js';
import { SseEvents } from '../../dataplane/stream/sse-events.js';
import type { Usage } from '../../model/usage.js';
import { bedrockSseHandler } from '../messages/backends/bedrock-sse.js';
import { ClaudeCompletion } from './claude-completion.js';
import type { CompletionContext } from './completion-context.js';
import { MessagesStreamToChat } from './messages-stream-to-chat.js';

const EMPTY = Buffer.alloc(0);

/** An Anthropic event stream (or Bedrock's, decoded first) as chat completion chunks. */
export class ClaudeStream implements AnswerHandler {
  readonly edits = true;
  readonly #translator: MessagesStreamToChat;
  /** Bedrock's AWS event-stream frames, decoded into Anthropic's SSE before the events are read. */
  readonly #decode: AnswerHandler | undefined;
  readonly #events = new SseEvents(
    () => true,
    (event, data) => this.#event(event, data),
  );
  #out = '';
  #usage: Usage | undefined;

  constructor(ctx: CompletionContext, awsEventStream: boolean) {
    this.#translator = new MessagesStreamToChat(ctx);
    this.#decode = awsEventStream ? bedrockSseHandler() : undefined;
  }

  onData(chunk: Buffer): Buffer {
    this.#events.push(this.#decode ? this.#decode.onData!(chunk) : chunk);
    return this.#take();
  }

  flush(): Buffer | undefined {
    const rest = this.#decode?.flush?.();
    if (rest && rest.length > 0) this.#events.push(rest);
    this.#events.end();
    const { chunks, usage } = this.#translator.end();
    this.#usage = usage;
    this.#out += chunks;
    return this.#take();
  }

  onEnd(): Usage | undefined {
    return this.#usage;
  }

  /** A stream cut short: message_start's input and cache counts, exact as far as they go; the estimate completes them. */
  partial(): Usage | undefined {
    return this.#translator.partialUsage;
  }

  #event(event: string | undefined, data: string): void {
    let parsed: unknown;
    try {
      parsed = JSON.parse(data);
    } catch {
      return; // not an event's JSON: nothing to translate
    }
    this.#out += this.#translator.push(event, parsed);
  }

  #take(): Buffer {
    if (this.#out === '') return EMPTY;
    const out = this.#out;
    this.#out = '';
    return Buffer.from(out);
  }
}

/**
 * A stream request's 2xx answer labelled JSON: an event stream (told by its first byte past whitespace) is
 * translated event by event, which whole-stream passes on; a whole message becomes a chat completion, which
 * whole-stream tells as chunks.
 */
export class LabelledClaudeAnswer implements AnswerHandler {
  readonly edits = true;
  readonly holdsBody = true;
  readonly #ctx: CompletionContext;
  #chosen: ClaudeStream | ClaudeCompletion | undefined;
  #held: Buffer[] = [];

  constructor(ctx: CompletionContext) {
    this.#ctx = ctx;
  }

  onData(chunk: Buffer): Buffer {
    if (this.#chosen) return this.#chosen.onData(chunk);
    const events = isEventStreamBody(chunk);
    this.#held.push(chunk);
    if (events === undefined) return EMPTY;
    this.#chosen = events ? new ClaudeStream(this.#ctx, false) : new ClaudeCompletion(this.#ctx);
    const held = Buffer.concat(this.#held);
    this.#held = [];
    return this.#chosen.onData(held);
  }

  flush(): Buffer | undefined {
    this.#chosen ??= new ClaudeCompletion(this.#ctx);
    if (this.#held.length > 0) this.#chosen.onData(Buffer.concat(this.#held));
    return this.#chosen.flush();
  }

  onEnd(): Usage | undefined {
    return this.#chosen?.onEnd();
  }

  partial(): Usage | undefined {
    return this.#chosen instanceof ClaudeStream ? this.#chosen.partial() : undefined;
  }
}
