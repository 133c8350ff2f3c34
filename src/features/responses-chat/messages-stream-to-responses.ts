// A Messages event stream as a Responses stream, by composing the two translations: each Anthropic event goes to
// chat-claude's MessagesStreamToChat, whose chat chunks (handed over as objects, not text) go to
// ChatStreamToResponses. The usage is the one the Messages stream reported (Anthropic's counts, cache reads and
// writes included), not its retelling in chat's shape. Pure.
import type { EventTranslator } from '../../dataplane/exchange/event-translation.js';
import type { StreamProgress } from '../../dataplane/exchange/transform.js';
import type { Usage } from '../../model/usage.js';
import type { CompletionContext } from '../chat-claude/completion-context.js';
import { MessagesStreamToChat } from '../chat-claude/messages-stream-to-chat.js';
import { ChatStreamToResponses } from './chat-stream-to-responses.js';
import type { ResponseContext } from './response-context.js';

export class MessagesStreamToResponses implements EventTranslator {
  readonly #chunks: unknown[] = [];
  readonly #chat: MessagesStreamToChat;
  readonly #responses: ChatStreamToResponses;

  /** `sent`: where each sequence_number sent is recorded (for an error event the data plane may end the stream with). */
  constructor(chat: CompletionContext, response: ResponseContext, sent?: StreamProgress) {
    this.#chat = new MessagesStreamToChat(chat, (chunk) => this.#chunks.push(chunk));
    this.#responses = new ChatStreamToResponses(response, sent);
  }

  get usageSoFar(): Usage | undefined {
    return this.#chat.usageSoFar;
  }

  /** One Anthropic event (its parsed data, and its name when it had one): the Responses events it makes. */
  push(data: unknown, event?: string): string {
    this.#chat.push(data, event);
    return this.#drain();
  }

  /** The upstream ended: what is still owed (the cut-stream error event when the answer never finished). */
  end(): { events: string; usage: Usage | undefined } {
    const { usage } = this.#chat.end();
    const events = this.#drain() + this.#responses.end().events;
    return { events, usage };
  }

  #drain(): string {
    let out = '';
    for (const chunk of this.#chunks.splice(0)) out += this.#responses.push(chunk);
    return out;
  }
}
