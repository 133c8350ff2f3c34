// A whole Messages answer of an anthropic backend to a translated chat request, as a chat completion
// (messages-to-completion.ts), with the usage the backend reported, which the exchange settles with.
import { TranslatedWhole } from '../../dataplane/exchange/event-translation.js';
import type { CompletionContext } from './completion-context.js';
import { messagesToCompletion } from './messages-to-completion.js';

/** A whole Messages answer as a chat completion; what is not a message throws a 502 (NotAMessagesAnswer). */
export function claudeCompletion(ctx: CompletionContext): TranslatedWhole {
  return new TranslatedWhole((message) => {
    const { completion, usage } = messagesToCompletion(message, ctx);
    return { body: completion, usage };
  });
}
