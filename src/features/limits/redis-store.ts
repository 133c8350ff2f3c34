// The shared store: counters in one Redis (a single primary; Redis Cluster is not supported, the scripts touch
// several keys), changed only by the atomic scripts of redis-scripts.ts. Every call has a deadline
// (`timeoutMs`, ioredis's commandTimeout) and nothing waits for a connection: with the offline queue off, a
// call while Redis is unreachable fails at once, and the limiter lets the request through (or refuses it, fail
// closed) instead of holding it.
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import type { Adjustment, CounterKind, CounterStore, TakeRequest, TakeResult } from './counter-store.js';
import { ADJUST, READ, TAKE } from './redis-scripts.js';

export interface RedisStoreOptions {
  readonly url: string;
  /** Deadline of every store call. */
  readonly timeoutMs: number;
  /** A replica whose in-flight heartbeat is older than this no longer holds its slots. */
  readonly staleMs?: number;
  /** Identity of this replica in in-flight counters (default: random per process). */
  readonly replica?: string;
  /** Connection state changes, for the log. */
  readonly onState?: (state: 'ready' | 'down', detail?: string) => void;
}

interface Scripts {
  mgTake(numKeys: number, ...args: (string | number)[]): Promise<number[]>;
  mgAdjust(numKeys: number, ...args: (string | number)[]): Promise<number>;
  mgRead(numKeys: number, ...args: (string | number)[]): Promise<number[]>;
}

const KIND: Record<CounterKind, string> = { window: 'w', concurrent: 'c' };

export class RedisStore implements CounterStore {
  readonly leases = true;
  readonly #redis: Redis & Scripts;
  readonly #replica: string;
  readonly #staleMs: number;

  constructor(options: RedisStoreOptions) {
    this.#replica = options.replica ?? randomUUID();
    this.#staleMs = options.staleMs ?? 30_000;
    const redis = new Redis(options.url, {
      commandTimeout: options.timeoutMs,
      connectTimeout: Math.max(options.timeoutMs, 1000),
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      // Keep trying to reconnect, at most once a second: requests are not waiting on it.
      retryStrategy: (times) => Math.min(times * 100, 1000),
    });
    redis.defineCommand('mgTake', { lua: TAKE });
    redis.defineCommand('mgAdjust', { lua: ADJUST });
    redis.defineCommand('mgRead', { lua: READ });
    redis.on('ready', () => options.onState?.('ready'));
    redis.on('error', (err: Error) => options.onState?.('down', err.message));
    this.#redis = redis as Redis & Scripts;
  }

  /** Resolves once connected, or after `ms` (the gateway serves either way; calls fail open until then). */
  async ready(ms: number): Promise<boolean> {
    if (this.#redis.status === 'ready') return true;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#redis.off('ready', onReady);
        resolve(false);
      }, ms);
      const onReady = () => {
        clearTimeout(timer);
        resolve(true);
      };
      this.#redis.once('ready', onReady);
    });
  }

  async take(requests: readonly TakeRequest[]): Promise<TakeResult> {
    const args: (string | number)[] = requests.map((r) => r.key);
    args.push(this.#replica, this.#staleMs);
    for (const r of requests) args.push(KIND[r.kind], r.need, r.extra, r.limit, Math.ceil(r.ttlMs));
    const out = await this.#redis.mgTake(requests.length, ...args);
    if (out[0] !== 1) return { ok: false, refused: out[1]!, used: out[2]! };
    const granted: number[] = [];
    const used: number[] = [];
    for (let i = 0; i < requests.length; i++) {
      granted.push(out[1 + 2 * i]!);
      used.push(out[2 + 2 * i]!);
    }
    return { ok: true, granted, used };
  }

  async adjust(adjustments: readonly Adjustment[]): Promise<void> {
    const args: (string | number)[] = adjustments.map((a) => a.key);
    args.push(this.#replica);
    for (const a of adjustments) args.push(KIND[a.kind], a.delta, Math.ceil(a.ttlMs));
    await this.#redis.mgAdjust(adjustments.length, ...args);
  }

  async read(keys: readonly { key: string; kind: CounterKind }[]): Promise<number[]> {
    if (keys.length === 0) return [];
    return this.#redis.mgRead(keys.length, ...keys.map((k) => k.key), this.#staleMs, ...keys.map((k) => KIND[k.kind]));
  }

  async close(): Promise<void> {
    this.#redis.disconnect();
  }
}
