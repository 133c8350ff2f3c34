// What the answer direction of the Responses → chat completions translation needs to know of the request: the
// Response's identity, the client's custom and namespaced tools (sent upstream as function tools) and the request members a
// Response echoes. Made by the request direction; read by chat-to-response.ts and chat-stream-to-responses.ts.

import type { NamespacedName } from './namespaced-tools.js';
import type { KeptResponseObject } from './kept-responses.js';

export interface ResponseContext {
  /** The Response id the gateway mints: 'resp_' + 32 hex characters. */
  readonly id: string;
  /** Unix seconds. */
  readonly createdAt: number;
  /** The model name the Response carries. */
  readonly model: string;
  /**
   * Names of the client's `custom` tools, sent upstream as function tools with one string parameter `input`:
   * their calls become custom_tool_call items.
   */
  readonly customTools: ReadonlySet<string>;
  /** Chat function names of tools inside the client's namespaces: a call of one carries its own name and `namespace`. */
  readonly namespaced: ReadonlyMap<string, NamespacedName>;
  /**
   * Request members a Response echoes (instructions, tools, tool_choice, parallel_tool_calls, temperature, top_p,
   * max_output_tokens, reasoning, text, store, metadata, user…), copied into the Response object.
   */
  readonly echo: Readonly<Record<string, unknown>>;
  /**
   * Told the Response of an answer that finished (completed or incomplete), to keep it for later requests
   * (previous_response_id, item_reference, retrieve); absent when the client asked `store: false`.
   */
  readonly keep?: (response: KeptResponseObject) => void;
}
