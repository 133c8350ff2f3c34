// The answer of an anthropic backend to a Responses request translated through chat: a whole Messages answer as a
// Response object (messagesToCompletion, then chatToResponse), a Messages stream as Responses events
// (messages-stream-to-responses.ts; Bedrock's AWS event stream decoded into Anthropic's SSE first), and a stream
// request's answer labelled JSON as whichever of the two its first byte tells. Each returns the usage the backend
// reported, in Anthropic's counts (cache reads and writes), which the exchange settles with. Error answers are
// chat-claude's claudeErrorAnswer's to retell.
import { LabelledAnswer, TranslatedEventStream } from '../../dataplane/exchange/event-translation.js';
import type { StreamProgress } from '../../dataplane/exchange/transform.js';
import { jsonOr, WholeBody } from '../../dataplane/exchange/whole-body.js';
import type { Usage } from '../../model/usage.js';
import type { CompletionContext } from '../chat-claude/completion-context.js';
import { messagesToCompletion } from '../chat-claude/messages-to-completion.js';
import { bedrockSseHandler } from '../messages/backends/bedrock-sse.js';
import { chatToResponse } from './chat-to-response.js';
import { MessagesStreamToResponses } from './messages-stream-to-responses.js';
import type { ResponseContext } from './response-context.js';

/** The most of a whole answer held to translate it. */
const MAX_ANSWER_BYTES = 8 * 1024 * 1024;

/** What both steps of the answer's translation need to know of the request. */
export interface ClaudeResponseContext {
  readonly chat: CompletionContext;
  readonly response: ResponseContext;
}

/** A whole Messages answer as a Response object. */
export class ClaudeResponse extends WholeBody {
  protected readonly purpose = 'translate';
  readonly #ctx: ClaudeResponseContext;
  #usage: Usage | undefined;

  constructor(ctx: ClaudeResponseContext) {
    super(MAX_ANSWER_BYTES);
    this.#ctx = ctx;
  }

  protected remake(text: string): string {
    // The head waits for this body (holdsBody): what is not a message throws a 502 (NotAMessagesAnswer), not a 200 cut short.
    const { completion, usage } = messagesToCompletion(jsonOr(text, undefined), this.#ctx.chat);
    this.#usage = usage;
    return JSON.stringify(chatToResponse(completion, this.#ctx.response).response);
  }

  onEnd(): Usage | undefined {
    return this.#usage;
  }
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
    () => new ClaudeResponse(ctx),
  );
}
