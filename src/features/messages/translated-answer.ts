// The answer of a chat completions backend, rewritten into the Messages API's: a stream event by event
// (chat-stream-to-messages.ts, its events read with sse-events.ts), a whole answer at its end (chat-to-messages.ts),
// an error answer in Anthropic's error shape (anthropic-errors.ts). Each handler returns the usage the upstream
// reported, which the exchange settles with.
import { LabelledAnswer, TranslatedEventStream } from '../../dataplane/exchange/event-translation.js';
import { jsonOr, WholeBody } from '../../dataplane/exchange/whole-body.js';
import { GatewayError } from '../../model/errors.js';
import type { Usage } from '../../model/usage.js';
import { errorFromUpstream } from './anthropic-errors.js';
import { answerEvents } from './answer-events.js';
import { chatUsage } from './answer-parts.js';
import { ChatStreamToMessages } from './chat-stream-to-messages.js';
import { type AnswerContext, chatToMessages } from './chat-to-messages.js';

/** The most of a whole answer (or an error answer) held to translate it. */
const MAX_ANSWER_BYTES = 8 * 1024 * 1024;

/** A chat completions event stream as Anthropic's Messages events. */
export function translatedStream(ctx: AnswerContext): TranslatedEventStream {
  return new TranslatedEventStream(new ChatStreamToMessages(ctx));
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
 * A stream request's 2xx answer its chat backend labelled JSON: an event stream is translated event by event, a whole
 * answer as its events at its end.
 */
export function labelledTranslation(ctx: AnswerContext): LabelledAnswer {
  return new LabelledAnswer(
    true,
    () => translatedStream(ctx),
    () => new TranslatedAnswer(ctx, true),
  );
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
