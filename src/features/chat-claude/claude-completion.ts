// A whole Messages answer of an anthropic backend to a translated chat request, as a chat completion
// (messages-to-completion.ts), with the usage the backend reported, which the exchange settles with.
import { jsonOr, WholeBody } from '../../dataplane/exchange/whole-body.js';
import type { Usage } from '../../model/usage.js';
import type { CompletionContext } from './completion-context.js';
import { messagesToCompletion } from './messages-to-completion.js';

/** The most of a whole answer held to translate it. */
const MAX_ANSWER_BYTES = 8 * 1024 * 1024;

/** A whole Messages answer as a chat completion. */
export class ClaudeCompletion extends WholeBody {
  protected readonly purpose = 'translate';
  readonly #ctx: CompletionContext;
  #usage: Usage | undefined;

  constructor(ctx: CompletionContext) {
    super(MAX_ANSWER_BYTES);
    this.#ctx = ctx;
  }

  protected remake(text: string): string {
    // The head waits for this body (holdsBody): what is not a message throws a 502 (NotAMessagesAnswer), not a 200 cut short.
    const { completion, usage } = messagesToCompletion(jsonOr(text, undefined), this.#ctx);
    this.#usage = usage;
    return JSON.stringify(completion);
  }

  onEnd(): Usage | undefined {
    return this.#usage;
  }
}
