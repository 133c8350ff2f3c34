// The answer of a chat completions backend to a translated Responses request: a whole completion as a Response
// object (chat-to-response.ts), a chat stream as Responses events (chat-stream-to-responses.ts, its events read with
// the one SSE reader), and a stream request's answer labelled JSON as whichever of the two its first byte tells
// (labelledResponse). Each returns the usage the backend reported, which the exchange settles with. Error answers
// are not touched: a chat backend's error is OpenAI's shape already, or retold in it by the data plane.
import { LabelledAnswer, TranslatedEventStream, TranslatedWhole } from '../../dataplane/exchange/event-translation.js';
import type { StreamProgress } from '../../dataplane/exchange/transform.js';
import { chatToResponse } from './chat-to-response.js';
import { ChatStreamToResponses } from './chat-stream-to-responses.js';
import type { ResponseContext } from './response-context.js';

/** A whole chat completion as a Response object. */
export function translatedResponse(ctx: ResponseContext): TranslatedWhole {
  return new TranslatedWhole((completion) => {
    const { response, usage } = chatToResponse(completion, ctx);
    return { body: response, usage };
  });
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
    () => translatedResponse(ctx),
  );
}
