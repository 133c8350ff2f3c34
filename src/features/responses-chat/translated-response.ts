// The answer of a chat completions backend to a translated Responses request: a whole completion as a Response
// object (chat-to-response.ts), a chat stream as Responses events (chat-stream-to-responses.ts, its events read with
// the one SSE reader), and a stream request's answer labelled JSON as whichever of the two its first byte tells
// (labelledResponse). Each returns the usage the backend reported, which the exchange settles with. Error answers
// are not touched: a chat backend's error is OpenAI's shape already, or retold in it by the data plane.
import { LabelledAnswer, TranslatedEventStream } from '../../dataplane/exchange/event-translation.js';
import type { StreamProgress } from '../../dataplane/exchange/transform.js';
import { jsonOr, WholeBody } from '../../dataplane/exchange/whole-body.js';
import type { Usage } from '../../model/usage.js';
import { chatToResponse } from './chat-to-response.js';
import { ChatStreamToResponses } from './chat-stream-to-responses.js';
import type { ResponseContext } from './response-context.js';

/** The most of a whole answer held to translate it. */
const MAX_ANSWER_BYTES = 8 * 1024 * 1024;

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

/** A chat completions event stream as Responses events; `progress`: where the last sequence_number sent is kept. */
export function translatedResponseStream(ctx: ResponseContext, progress: StreamProgress | undefined): TranslatedEventStream {
  return new TranslatedEventStream(new ChatStreamToResponses(ctx, progress));
}

/**
 * A stream request's 2xx answer its chat backend labelled JSON: an event stream is translated event by event, and
 * the Responses events pass through whole-stream as any event stream; a whole answer becomes a Response, which
 * whole-stream tells as events.
 */
export function labelledResponse(ctx: ResponseContext, progress: StreamProgress | undefined): LabelledAnswer {
  return new LabelledAnswer(
    false,
    () => translatedResponseStream(ctx, progress),
    () => new TranslatedResponse(ctx),
  );
}
