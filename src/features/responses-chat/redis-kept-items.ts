// Kept items (kept-items.ts) in Redis, shared by every replica: a reference finds the item whichever replica
// answered it. Each item is one key, `mg:item:<namespace>/<token>:<id>`, expiring an hour after it was answered;
// an item over 1 MiB is not kept. Keeping never holds an answer (its failures are counted and logged); a lookup
// that Redis cannot answer in time fails the request with a 503, which the SDKs retry, rather than refuse a
// reference to an item that may well be kept.
import { Redis } from 'ioredis';
import { GatewayError } from '../../model/errors.js';
import { DEFAULT_KEPT_TTL_MS, foundItems, KEPT_TYPES, type KeptItems, type MintedItem } from './kept-items.js';

export interface RedisKeptItemsOptions {
  readonly url: string;
  /** How long an item is kept (ms). Default one hour. */
  readonly ttlMs?: number;
  /** Deadline of a lookup (ms). Default 2 s. */
  readonly timeoutMs?: number;
  /** A call to Redis failed: for the log and a metric. */
  readonly onError?: (err: Error) => void;
}

const MAX_ITEM_CHARS = 1024 * 1024;

export class RedisKeptItems implements KeptItems {
  readonly #redis: Redis;
  readonly #ttlMs: number;
  readonly #onError: (err: Error) => void;

  constructor(options: RedisKeptItemsOptions) {
    const timeoutMs = options.timeoutMs ?? 2000;
    this.#ttlMs = options.ttlMs ?? DEFAULT_KEPT_TTL_MS;
    this.#onError = options.onError ?? (() => {});
    this.#redis = new Redis(options.url, {
      // A call made while connecting (the first answers after a start) waits for the connection, within the
      // deadline; one made while Redis is unreachable fails at the first reconnection that fails.
      commandTimeout: timeoutMs,
      connectTimeout: Math.max(timeoutMs, 1000),
      maxRetriesPerRequest: 0,
      retryStrategy: (times) => Math.min(times * 100, 1000),
    });
    // Connection errors come here (and to each failed call): counted, not thrown.
    this.#redis.on('error', (err: Error) => this.#onError(err));
  }

  keep(scope: string, items: readonly MintedItem[]): void {
    const batch = this.#redis.pipeline();
    let any = false;
    for (const item of items) {
      if (!KEPT_TYPES.has(item.type)) continue;
      const json = JSON.stringify(item);
      if (json.length > MAX_ITEM_CHARS) continue;
      batch.set(keyOf(scope, item.id), json, 'PX', this.#ttlMs);
      any = true;
    }
    if (!any) return;
    batch.exec().then(
      (results) => {
        const failed = results?.find(([err]) => err)?.[0];
        if (failed) this.#onError(failed);
      },
      (err: Error) => this.#onError(err),
    );
  }

  async find(scope: string, ids: readonly string[]): Promise<ReadonlyMap<string, Record<string, unknown>>> {
    let values: (string | null)[];
    try {
      values = await this.#redis.mget(ids.map((id) => keyOf(scope, id)));
    } catch (err) {
      this.#onError(err as Error);
      throw new GatewayError(503, 'The store of kept items (item_reference) did not answer; retry, or send the items themselves (store: false).', {
        code: 'service_unavailable',
      });
    }
    return foundItems(ids, (_, i) => values[i]);
  }

  async close(): Promise<void> {
    // QUIT would wait in the offline queue for a Redis that is away: only a connected client says goodbye.
    if (this.#redis.status === 'ready') await this.#redis.quit().catch(() => undefined);
    this.#redis.disconnect();
  }
}

function keyOf(scope: string, id: string): string {
  return `mg:item:${scope}:${id}`;
}
