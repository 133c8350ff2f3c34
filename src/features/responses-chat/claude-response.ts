// The answer of an anthropic backend to a Responses request translated through chat: a whole Messages answer as a
// Response object (messagesToCompletion, then chatToResponse), a Messages stream as Responses events
// (messages-stream-to-responses.ts; Bedrock's AWS event stream decoded into Anthropic's SSE first), and a stream
// request's answer labelled JSON as whichever of the two its first byte tells. Each returns the usage the backend
// reported, in Anthropic's counts (cache reads and writes), which the exchange settles with. Error answers are
// chat-claude's claudeErrorAnswer's to retell.
import { LabelledAnswer, TranslatedEventStream, TranslatedWhole } from '../../dataplane/exchange/event-translation.js';
import type { StreamProgress } from '../../dataplane/exchange/transform.js';
import type { CompletionContext } from '../chat-claude/completion-context.js';
import { messagesToCompletion } from '../chat-claude/messages-to-completion.js';
import { bedrockSseHandler } from '../messages/backends/bedrock-sse.js';
import { chatToResponse } from './chat-to-response.js';
import { MessagesStreamToResponses } from './messages-stream-to-responses.js';
import type { ResponseContext } from './response-context.js';

/** What both steps of the answer's translation need to know of the request. */
export interface ClaudeResponseContext {
  readonly chat: CompletionContext;
  readonly response: ResponseContext;
}

/** A whole Messages answer as a Response object: what is not a message throws a 502 (NotAMessagesAnswer). */
export function claudeResponse(ctx: ClaudeResponseContext): TranslatedWhole {
  return new TranslatedWhole((message) => {
    const { completion, usage } = messagesToCompletion(message, ctx.chat);
    return { body: chatToResponse(completion, ctx.response).response, usage };
  });
}

/** A Messages event stream (Bedrock's AWS event stream when `awsEventStream`) as Responses events. */
export function claudeResponseStream(ctx: ClaudeResponseContext, progress: StreamProgress | undefined, awsEventStream: boolean): TranslatedEventStream {
  return new TranslatedEventStream(new MessagesStreamToResponses(ctx.chat, ctx.response, progress), awsEventStream ? bedrockSseHandler() : undefined);
}

/** A stream request's 2xx answer labelled JSON: an event stream translated event by event, else a whole Response. */
export function labelledClaudeResponse(ctx: ClaudeResponseContext, progress: StreamProgress | undefined): LabelledAnswer {
  return new LabelledAnswer(
    false,
    () => claudeResponseStream(ctx, progress, false),
    () => claudeResponse(ctx),
  );
}
