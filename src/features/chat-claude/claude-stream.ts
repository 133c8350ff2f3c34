// An anthropic backend's event stream answering a translated chat request, as chat completion chunks
// (messages-stream-to-chat.ts, its events read with the one SSE reader; Bedrock's AWS event stream decoded into
// Anthropic's SSE first), and a stream request's answer labelled JSON as whichever its first byte tells. Each
// returns the usage the backend reported, which the exchange settles with.
import { LabelledAnswer, TranslatedEventStream } from '../../dataplane/exchange/event-translation.js';
import { bedrockSseHandler } from '../messages/backends/bedrock-sse.js';
import { claudeCompletion } from './claude-completion.js';
import type { CompletionContext } from './completion-context.js';
import { MessagesStreamToChat } from './messages-stream-to-chat.js';

/** An Anthropic event stream (or Bedrock's AWS event stream, decoded into Anthropic's SSE first) as chat chunks. */
export function claudeStream(ctx: CompletionContext, awsEventStream: boolean): TranslatedEventStream {
  return new TranslatedEventStream(new MessagesStreamToChat(ctx), awsEventStream ? bedrockSseHandler() : undefined);
}

/**
 * A stream request's 2xx answer labelled JSON: an event stream is translated event by event, which whole-stream
 * passes on; a whole message becomes a chat completion, which whole-stream tells as chunks.
 */
export function labelledClaudeAnswer(ctx: CompletionContext): LabelledAnswer {
  return new LabelledAnswer(
    false,
    () => claudeStream(ctx, false),
    () => claudeCompletion(ctx),
  );
}
