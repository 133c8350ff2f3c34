// previous_response_id on a translated route: each response the gateway answered with `store` on is kept (beside
// its items, kept-items.ts) as a record of the request's own input items and the answer's output items, naming the
// response it continued. A request that continues one gets the whole conversation read back, oldest first, as
// the input before its own; as with OpenAI's API, earlier `instructions` are not carried over.
import type { KeptItems } from './kept-items.js';

/** The kept record of a response. */
export interface KeptResponse {
  readonly type: 'response';
  readonly id: string;
  /** The response it continued. */
  readonly previous: string | undefined;
  /** The request's own input items, then the answer's output items. */
  readonly items: readonly unknown[];
}

/** How many responses back a conversation is read at most (a lookup each). */
const MAX_TURNS = 1000;

export function responseRecord(id: string, previous: string | undefined, input: readonly unknown[], output: readonly unknown[]): KeptResponse {
  return { type: 'response', id, previous, items: [...input, ...output] };
}

/**
 * The items of the conversation up to and including response `id`, oldest first; undefined when a response of it
 * is not kept (never kept, expired, another key's, or more than MAX_TURNS back).
 */
export async function conversationUpTo(items: KeptItems, scope: string, id: string): Promise<unknown[] | undefined> {
  const turns: (readonly unknown[])[] = [];
  let next: string | undefined = id;
  for (let n = 0; next !== undefined; n++) {
    if (n === MAX_TURNS) return undefined;
    const record = (await items.find(scope, [next])).get(next);
    if (!record || record['type'] !== 'response' || !Array.isArray(record['items'])) return undefined;
    turns.push(record['items'] as unknown[]);
    next = typeof record['previous'] === 'string' ? record['previous'] : undefined;
  }
  return turns.reverse().flat();
}

/** A request's input as items: a string is one user message. */
export function inputItemsOf(input: unknown): unknown[] {
  if (typeof input === 'string') return [{ role: 'user', content: input }];
  return Array.isArray(input) ? input : [];
}
