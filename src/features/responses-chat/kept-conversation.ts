// previous_response_id on a translated route: a request that continues a kept response (kept-responses.ts) gets
// the whole conversation read back, oldest first, as the input before its own: each response's input, then its
// output. As with OpenAI's API, earlier `instructions` are not carried over.
import type { KeptResponses } from './kept-responses.js';

/** How many responses back a conversation is read at most (a lookup each). */
const MAX_TURNS = 1000;

/**
 * The items of the conversation up to and including response `id`, oldest first; undefined when a response of it
 * is not kept (never kept, expired, another key's, or more than MAX_TURNS back).
 */
export async function conversationUpTo(kept: KeptResponses, scope: string, id: string): Promise<unknown[] | undefined> {
  const turns: unknown[][] = [];
  let next: string | undefined = id;
  for (let n = 0; next !== undefined; n++) {
    if (n === MAX_TURNS) return undefined;
    const response = (await kept.find(scope, [next])).get(next);
    if (!response) return undefined;
    turns.push([...response.input, ...response.response.output]);
    next = response.previous;
  }
  return turns.reverse().flat();
}

/** A request's input as items: a string is one user message. */
export function inputItemsOf(input: unknown): unknown[] {
  if (typeof input === 'string') return [{ role: 'user', content: input }];
  return Array.isArray(input) ? input : [];
}
