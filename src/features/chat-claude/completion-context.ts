// What the answer direction of the chat completions → Messages translation needs to know of the request: the
// completion's identity and whether the client asked for a usage chunk. Made by the request direction; read by
// messages-to-completion.ts and messages-stream-to-chat.ts.

export interface CompletionContext {
  /** 'chatcmpl-' + 24 hex characters, minted by the gateway. */
  readonly id: string;
  /** Unix seconds. */
  readonly created: number;
  /** The model name the completion carries (the client's). */
  readonly model: string;
  /** stream_options.include_usage: a last chunk with usage and empty choices. */
  readonly includeUsage: boolean;
}
