// The items a translated backend answered (assistant messages and tool calls), kept so that a later request may name
// them by `item_reference`, as a client of the Responses API does for what it stored: the Vercel AI SDK refers back
// to every earlier assistant text unless told `store: false`. Kept under the GatewayToken that was answered, for an
// hour: here in this process, within a byte bound, least recently used going first (lru-cache); in Redis, shared by
// every replica, with redis-kept-items.ts.
import { LRUCache } from 'lru-cache';

/** An output item as the translation minted it (its `id` is what a reference names). */
export interface MintedItem {
  readonly id: string;
  readonly type: string;
}

export interface KeptItems {
  /** Keeps these items for `scope`; nothing waits on it. */
  keep(scope: string, items: readonly MintedItem[]): void;
  /** The items of these ids kept for `scope` (those not kept are absent), each as its own object. */
  find(scope: string, ids: readonly string[]): Promise<ReadonlyMap<string, Record<string, unknown>>>;
  close(): Promise<void>;
}

/**
 * Item types a reference can stand for (what the Responses → chat translation carries back into a conversation),
 * and the record of a response (kept-conversation.ts).
 */
export const KEPT_TYPES: ReadonlySet<string> = new Set(['message', 'function_call', 'custom_tool_call', 'response']);

export interface KeptItemsOptions {
  /** How long an item is kept after it was answered (ms). Default one hour. */
  readonly ttlMs?: number;
  /** The most bytes (of the items' JSON) kept in all. Default 64 MiB. */
  readonly maxBytes?: number;
  /** The clock (tests). */
  readonly now?: () => number;
}

export const DEFAULT_KEPT_TTL_MS = 60 * 60 * 1000;
const DEFAULT_MAX_BYTES = 64 * 1024 * 1024;

export class MemoryKeptItems implements KeptItems {
  readonly #items: LRUCache<string, string>;

  constructor(options: KeptItemsOptions = {}) {
    const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
    this.#items = new LRUCache<string, string>({
      ttl: options.ttlMs ?? DEFAULT_KEPT_TTL_MS,
      maxSize: maxBytes,
      // A JavaScript string holds up to two bytes a character: the bound is on what the strings may take.
      sizeCalculation: (value, key) => 2 * (value.length + key.length),
      // An item larger than an eighth of the bound would push out many others: not kept.
      maxEntrySize: Math.floor(maxBytes / 8),
      // Reads the clock at each call (its default caches it for a millisecond, by a timer a test's clock does not move).
      ttlResolution: 0,
      ...(options.now ? { perf: { now: options.now } } : {}),
    });
  }

  keep(scope: string, items: readonly MintedItem[]): void {
    for (const item of items) {
      if (KEPT_TYPES.has(item.type)) this.#items.set(keyOf(scope, item.id), JSON.stringify(item));
    }
  }

  find(scope: string, ids: readonly string[]): Promise<ReadonlyMap<string, Record<string, unknown>>> {
    return Promise.resolve(foundItems(ids, (id) => this.#items.get(keyOf(scope, id))));
  }

  close(): Promise<void> {
    this.#items.clear();
    return Promise.resolve();
  }
}

function keyOf(scope: string, id: string): string {
  return `${scope}\n${id}`;
}

/** The items found, parsed: `json(id)` is the kept JSON of the item with that id, or undefined. */
export function foundItems(ids: readonly string[], json: (id: string, i: number) => string | null | undefined): Map<string, Record<string, unknown>> {
  const found = new Map<string, Record<string, unknown>>();
  for (const [i, id] of ids.entries()) {
    const text = json(id, i);
    if (typeof text === 'string') found.set(id, JSON.parse(text) as Record<string, unknown>);
  }
  return found;
}
