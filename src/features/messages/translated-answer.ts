// The answer of a chat completions backend, rewritten into the Messages API's: a stream event by event
// (chat-stream-to-messages.ts, its events read with sse-events.ts), a whole answer at its end (chat-to-messages.ts),
// an error answer in Anthropic's error shape (anthropic-errors.ts). Each handler returns the usage the upstream
// reported, which the exchange settles with.
import type { AnswerHandler } from '../../dataplane/exchange/transform.js';
import { jsonOr, WholeBody } from '../../dataplane/exchange/whole-body.js';
import { isEventStreamBody } from '../../dataplane/stream/sse.js';
import { GatewayError } from '../../model/errors.js';
import type { Usage } from '../../model/usage.js';
import { errorFromUpstream } from './anthropic-errors.js';
import { answerEvents } from './answer-events.js';
import { chatUsage } from './answer-parts.js';
import { ChatStreamToMessages } from './chat-stream-to-messages.js';
import { type AnswerContext, chatToMessages } from './chat-to-messages.js';
import { SseEvents } from '../../dataplane/stream/sse-events.js';

/** The most of a whole answer (or an error answer) held to translate it. */
const MAX_ANSWER_BYTES = 8 * 1024 * 1024;
const EMPTY = Buffer.alloc(0);

/** A chat completions event stream as Anthropic's Messages events. */
export class TranslatedStream implements AnswerHandler {
  readonly edits = true;
  readonly #translator: ChatStreamToMessages;
  readonly #events = new SseEvents(
    () => true,
    (_event, data) => this.#event(data),
  );
  #out = '';
  #usage: Usage | undefined;

  constructor(ctx: AnswerContext) {
    this.#translator = new ChatStreamToMessages(ctx);
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

  #event(data: string): void {
    const trimmed = data.trim();
    if (trimmed === '[DONE]') {
      this.#out += this.#translator.push('[DONE]');
      return;
    }
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
    const out = Buffer.from(this.#out);
    this.#out = '';
    return out;
  }
}

/** A whole chat completion as a Messages answer; as its events when the client asked for a stream (`asEvents`). */
export class TranslatedAnswer extends WholeBody {
  protected readonly purpose = 'translate';
  /** Told as events: the answer is a stream to the client (a keep-alive's committed 200 is kept). */
  readonly streams: boolean;
  readonly #ctx: AnswerContext;
  #usage: Usage | undefined;

  constructor(ctx: AnswerContext, asEvents = false) {
    super(MAX_ANSWER_BYTES);
    this.streams = asEvents;
    this.#ctx = ctx;
  }

  protected remake(text: string): string {
    const completion = jsonOr(text, undefined);
    this.#usage = chatUsage((completion as { usage?: unknown } | undefined)?.usage);
    const answer = chatToMessages(completion, this.#ctx);
    // The head waits for this body (holdsBody): an answer that cannot be translated is answered with its error.
    if (!answer.ok) throw new GatewayError(answer.status, answer.error.error.message, { code: 'upstream_error' });
    return this.streams ? answerEvents(answer.value) : JSON.stringify(answer.value);
  }

  onEnd(): Usage | undefined {
    return this.#usage;
  }
}

/**
 * A stream request's 2xx answer its chat backend labelled JSON: an event stream (told by its first byte that is not
 * whitespace, as WholeBody tells it) is translated event by event, a whole answer (`{`) as its events at its end.
 */
export class LabelledTranslation implements AnswerHandler {
  readonly edits = true;
  readonly holdsBody = true;
  readonly streams = true;
  readonly #ctx: AnswerContext;
  #chosen: TranslatedStream | TranslatedAnswer | undefined;
  /** Whitespace that came before the first byte that tells. */
  #held: Buffer[] = [];

  constructor(ctx: AnswerContext) {
    this.#ctx = ctx;
  }

  onData(chunk: Buffer): Buffer {
    if (this.#chosen) return this.#chosen.onData(chunk);
    const events = isEventStreamBody(chunk);
    this.#held.push(chunk);
    if (events === undefined) return EMPTY;
    this.#chosen = events ? new TranslatedStream(this.#ctx) : new TranslatedAnswer(this.#ctx, true);
    const held = Buffer.concat(this.#held);
    this.#held = [];
    return this.#chosen.onData(held);
  }

  flush(): Buffer | undefined {
    // A body of whitespace only is no answer: the whole path fails it as it fails any body it cannot translate.
    this.#chosen ??= new TranslatedAnswer(this.#ctx, true);
    return this.#chosen.flush();
  }

  onEnd(): Usage | undefined {
    return this.#chosen?.onEnd();
  }
}

/** A chat backend's error answer (OpenAI's shape, or any text) in Anthropic's error shape, its status kept. */
export class TranslatedError extends WholeBody {
  protected readonly purpose = 'translate';
  readonly #status: number;

  constructor(status: number) {
    super(MAX_ANSWER_BYTES);
    this.#status = status;
  }

  protected remake(text: string): string {
    // A text body: its first characters are the message.
    return JSON.stringify(errorFromUpstream(this.#status, jsonOr(text, text)));
  }
}
