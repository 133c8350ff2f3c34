// Kept responses (kept-responses.ts) in Redis, shared by every replica: a request continues a response, or refers
// to one of its items, whichever replica answered it. Each response is one key, `mg:response:<namespace>/<token>:
// <id>`, expiring an hour after it was answered; a record over 1 MiB is not kept. Keeping never holds an answer (its
// failures are counted and logged); a lookup that Redis cannot answer in time fails the request with a 503, which
// the SDKs retry, rather than refuse an id that may well be kept.
import { Redis } from 'ioredis';
import { GatewayError } from '../../model/errors.js';
import { DEFAULT_KEPT_TTL_MS, foundResponses, type KeptResponse, type KeptResponses } from './kept-responses.js';

export interface RedisKeptResponsesOptions {
  readonly url: string;
  /** How long a response is kept (ms). Default one hour. */
  readonly ttlMs?: number;
  /** Deadline of a lookup (ms). Default 2 s. */
  readonly timeoutMs?: number;
  /** A call to Redis failed: for the log and a metric. */
  readonly onError?: (err: Error) => void;
}

const MAX_RECORD_CHARS = 1024 * 1024;

export class RedisKeptResponses implements KeptResponses {
  readonly #redis: Redis;
  readonly #ttlMs: number;
  readonly #onError: (err: Error) => void;

  constructor(options: RedisKeptResponsesOptions) {
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

  keep(scope: string, response: KeptResponse): void {
    const json = JSON.stringify(response);
    if (json.length > MAX_RECORD_CHARS) return;
    this.#redis.set(keyOf(scope, response.id), json, 'PX', this.#ttlMs).catch((err: Error) => this.#onError(err));
  }

  async find(scope: string, ids: readonly string[]): Promise<ReadonlyMap<string, KeptResponse>> {
    const values = await this.#call(() => this.#redis.mget(ids.map((id) => keyOf(scope, id))));
    return foundResponses(ids, (_, i) => values[i]);
  }

  async delete(scope: string, id: string): Promise<boolean> {
    return (await this.#call(() => this.#redis.del(keyOf(scope, id)))) > 0;
  }

  /** A lookup or a delete the request waits for: a 503 when Redis does not answer. */
  async #call<T>(command: () => Promise<T>): Promise<T> {
    try {
      return await command();
    } catch (err) {
      this.#onError(err as Error);
      throw new GatewayError(
        503,
        'The store of kept responses did not answer; retry, or send the whole conversation (store: false, no previous_response_id or item_reference).',
        { code: 'service_unavailable' },
      );
    }
  }

  async close(): Promise<void> {
    // QUIT would wait in the offline queue for a Redis that is away: only a connected client says goodbye.
    if (this.#redis.status === 'ready') await this.#redis.quit().catch(() => undefined);
    this.#redis.disconnect();
  }
}

function keyOf(scope: string, id: string): string {
  return `mg:response:${scope}:${id}`;
}
