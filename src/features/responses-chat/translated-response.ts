// The answer of a chat completions backend to a translated Responses request: a whole completion as a Response
// object (chat-to-response.ts), a chat stream as Responses events (chat-stream-to-responses.ts, its events read with
// the one SSE reader), and a stream request's answer labelled JSON as whichever of the two its first byte tells
// (LabelledResponse). Each returns the usage the backend reported, which the exchange settles with. Error answers
// are not touched: a chat backend's error is OpenAI's shape already, or retold in it by the data plane.
import type { AnswerHandler, StreamProgress } from '../../dataplane/exchange/transform.js';
import { jsonOr, WholeBody } from '../../dataplane/exchange/whole-body.js';
import { isEventStreamBody } from '../../dataplane/stream/sse.js';
import { SseEvents } from '../../dataplane/stream/sse-events.js';
import type { Usage } from '../../model/usage.js';
import { chatToResponse } from './chat-to-response.js';
import { ChatStreamToResponses } from './chat-stream-to-responses.js';
import type { ResponseContext } from './response-context.js';

/** The most of a whole answer held to translate it. */
const MAX_ANSWER_BYTES = 8 * 1024 * 1024;
const EMPTY = Buffer.alloc(0);

/** A whole chat completion as a Response object. */
export class TranslatedResponse extends WholeBody {
  protected readonly purpose = 'translate';
  readonly #ctx: ResponseContext;
  #usage: Usage | undefined;

  constructor(ctx: ResponseContext) {
    super(MAX_ANSWER_BYTES);
    this.#ctx = ctx;
  }

  protected remake(text: string): string {
    // The head waits for this body (holdsBody): a body that is no chat completion is answered with its 502.
    const { response, usage } = chatToResponse(jsonOr(text, undefined), this.#ctx);
    this.#usage = usage;
    return JSON.stringify(response);
  }

  onEnd(): Usage | undefined {
    return this.#usage;
  }
}

/** A chat completions event stream as Responses events. */
export class TranslatedResponseStream implements AnswerHandler {
  readonly edits = true;
  readonly #translator: ChatStreamToResponses;
  /** Where the data plane reads the last sequence_number sent, for the error event that may end the stream. */
  readonly #progress: StreamProgress | undefined;
  readonly #events = new SseEvents(
    () => true,
    (_event, data) => this.#event(data),
  );
  #out = '';
  #usage: Usage | undefined;

  constructor(ctx: ResponseContext, progress: StreamProgress | undefined) {
    this.#translator = new ChatStreamToResponses(ctx);
    this.#progress = progress;
  }

  onData(chunk: Buffer): Buffer {
    this.#events.push(chunk);
    return this.#take();
  }

  flush(): Buffer | undefined {
    this.#events.end();
    const { events, usage } = this.#translator.end();
    this.#usage = usage;
    this.#out += events;
    return this.#take();
  }

  onEnd(): Usage | undefined {
    return this.#usage;
  }

  /**
   * A stream cut short (the client left past the read-on bound, the upstream died): the usage a chunk had reported,
   * exact as far as it goes (a server that reports it in every chunk); the estimate completes it.
   */
  partial(): Usage | undefined {
    return this.#translator.usageSoFar;
  }

  #event(data: string): void {
    const trimmed = data.trim();
    if (trimmed === '[DONE]') return; // the end is told by flush, [DONE] or not
    let chunk: unknown;
    try {
      chunk = JSON.parse(trimmed);
    } catch {
      return; // not a chunk (a comment-like line some servers send): nothing to translate
    }
    this.#out += this.#translator.push(chunk);
  }

  #take(): Buffer {
    if (this.#out === '') return EMPTY;
    const out = this.#out;
    this.#out = '';
    if (this.#progress) this.#progress.lastSequenceNumber = this.#translator.progress.lastSequenceNumber;
    return Buffer.from(out);
  }
}

/**
 * A stream request's 2xx answer its chat backend labelled JSON: an event stream (told by its first byte that is not
 * whitespace, as WholeBody tells it) is translated event by event, and the Responses events pass through
 * whole-stream as any event stream; a whole answer (`{`) becomes a Response, which whole-stream tells as events.
 */
export class LabelledResponse implements AnswerHandler {
  readonly edits = true;
  readonly holdsBody = true;
  readonly #ctx: ResponseContext;
  readonly #progress: StreamProgress | undefined;
  #chosen: TranslatedResponseStream | TranslatedResponse | undefined;
  /** Whitespace that came before the first byte that tells. */
  #held: Buffer[] = [];

  constructor(ctx: ResponseContext, progress: StreamProgress | undefined) {
    this.#ctx = ctx;
    this.#progress = progress;
  }

  onData(chunk: Buffer): Buffer {
    if (this.#chosen) return this.#chosen.onData(chunk);
    const events = isEventStreamBody(chunk);
    this.#held.push(chunk);
    if (events === undefined) return EMPTY;
    this.#chosen = events ? new TranslatedResponseStream(this.#ctx, this.#progress) : new TranslatedResponse(this.#ctx);
    const held = Buffer.concat(this.#held);
    this.#held = [];
    return this.#chosen.onData(held);
  }

  flush(): Buffer | undefined {
    // A body of whitespace only is no answer: the whole path fails it as it fails any body that is no chat completion.
    this.#chosen ??= new TranslatedResponse(this.#ctx);
    if (this.#held.length > 0) this.#chosen.onData(Buffer.concat(this.#held));
    return this.#chosen.flush();
  }

  onEnd(): Usage | undefined {
    return this.#chosen?.onEnd();
  }

  partial(): Usage | undefined {
    return this.#chosen instanceof TranslatedResponseStream ? this.#chosen.partial() : undefined;
  }
}
