// The responses a translated backend answered, kept so that a later request may continue one by
// `previous_response_id` or name one of its items by `item_reference`, as a client of the Responses API does with
// what it stored (the Vercel AI SDK refers back to every earlier assistant text unless told `store: false`), and
// retrieve or delete it. One record per response: the request's own input items and the Response. Kept under the
// GatewayToken that was answered, for an hour: here in this process, within a byte bound, least recently used going
// first (lru-cache); in Redis, shared by every replica, with redis-kept-responses.ts.
import { LRUCache } from 'lru-cache';

/** What is kept of a response. */
export interface KeptResponse {
  readonly id: string;
  /** The response it continued. */
  readonly previous?: string | undefined;
  /** The request's own input items (references resolved; not the conversation it continued). */
  readonly input: readonly unknown[];
  /** The Response as the client got it (its last state: completed or incomplete). */
  readonly response: KeptResponseObject;
}

/** What the gateway reads of a kept Response: its output items (the rest is for a retrieve). */
export type KeptResponseObject = { readonly output: readonly { readonly id: string; readonly type: string }[] } & Readonly<Record<string, unknown>>;

export interface KeptResponses {
  /** Keeps the record for `scope`; nothing waits on it. */
  keep(scope: string, response: KeptResponse): void;
  /** The responses of these ids kept for `scope` (those not kept are absent), each as its own object. */
  find(scope: string, ids: readonly string[]): Promise<ReadonlyMap<string, KeptResponse>>;
  /** Forgets the response; false when it was not kept for `scope`. */
  delete(scope: string, id: string): Promise<boolean>;
  close(): Promise<void>;
}

export interface KeptResponsesOptions {
  /** How long a response is kept after it was answered (ms). Default one hour. */
  readonly ttlMs?: number;
  /** The most bytes (of the records' JSON) kept in all. Default 64 MiB. */
  readonly maxBytes?: number;
  /** The clock (tests). */
  readonly now?: () => number;
}

export const DEFAULT_KEPT_TTL_MS = 60 * 60 * 1000;
const DEFAULT_MAX_BYTES = 64 * 1024 * 1024;

export class MemoryKeptResponses implements KeptResponses {
  readonly #kept: LRUCache<string, string>;

  constructor(options: KeptResponsesOptions = {}) {
    const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
    this.#kept = new LRUCache<string, string>({
      ttl: options.ttlMs ?? DEFAULT_KEPT_TTL_MS,
      maxSize: maxBytes,
      // A JavaScript string holds up to two bytes a character: the bound is on what the strings may take.
      sizeCalculation: (value, key) => 2 * (value.length + key.length),
      // A record larger than an eighth of the bound would push out many others: not kept.
      maxEntrySize: Math.floor(maxBytes / 8),
      // Reads the clock at each call (its default caches it for a millisecond, by a timer a test's clock does not move).
      ttlResolution: 0,
      ...(options.now ? { perf: { now: options.now } } : {}),
    });
  }

  keep(scope: string, response: KeptResponse): void {
    this.#kept.set(keyOf(scope, response.id), JSON.stringify(response));
  }

  find(scope: string, ids: readonly string[]): Promise<ReadonlyMap<string, KeptResponse>> {
    return Promise.resolve(foundResponses(ids, (id) => this.#kept.get(keyOf(scope, id))));
  }

  delete(scope: string, id: string): Promise<boolean> {
    return Promise.resolve(this.#kept.delete(keyOf(scope, id)));
  }

  close(): Promise<void> {
    this.#kept.clear();
    return Promise.resolve();
  }
}

function keyOf(scope: string, id: string): string {
  return `${scope}\n${id}`;
}

/** The responses found, parsed: `json(id, i)` is the kept JSON of the i-th id, or null or undefined. */
export function foundResponses(ids: readonly string[], json: (id: string, i: number) => string | null | undefined): Map<string, KeptResponse> {
  const found = new Map<string, KeptResponse>();
  for (const [i, id] of ids.entries()) {
    const text = json(id, i);
    if (typeof text === 'string') found.set(id, JSON.parse(text) as KeptResponse);
  }
  return found;
}
