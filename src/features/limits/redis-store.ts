// The shared store: counters in one Redis (a single primary; Redis Cluster is not supported, the scripts touch
// several keys), changed only by the atomic scripts of redis-scripts.ts. The store has answered once its
// connection is up and its scripts are loaded (SCRIPT LOAD); until then a call waits for that, at most
// `startupWaitMs`, so the first burst after a start is counted like any other. After that every call has a
// deadline (`timeoutMs`, deadline.ts) and nothing waits for a connection: with the offline queue off, a call
// while Redis is unreachable fails at once, and the limiter lets the request through (or refuses it, fail
// closed) instead of holding it.
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { type Adjustment, type CounterKind, type CounterStore, StoreNotReached, type TakeRequest, type TakeResult } from './counter-store.js';
import { withDeadline } from './deadline.js';
import { ADJUST, READ, TAKE } from './redis-scripts.js';

export interface RedisStoreOptions {
  readonly url: string;
  /** Deadline of every store call. */
  readonly timeoutMs: number;
  /** How long a call made before the store first answered waits for it. */
  readonly startupWaitMs: number;
  /** A replica whose in-flight heartbeat is older than this no longer holds its slots. */
  readonly staleMs?: number;
  /** Identity of this replica in in-flight counters (default: random per process). */
  readonly replica?: string;
  /** Connection state changes, for the log. */
  readonly onState?: (state: 'ready' | 'down', detail?: string) => void;
}

interface Scripts {
  mgTake(numKeys: number, ...args: (string | number)[]): Promise<number[]>;
  mgAdjust(numKeys: number, ...args: (string | number)[]): Promise<number[]>;
  mgRead(numKeys: number, ...args: (string | number)[]): Promise<number[]>;
}

const KIND: Record<CounterKind, string> = { window: 'w', concurrent: 'c' };

/** Commands a dead connection would leave pending forever end after this (the deadline answers callers long before). */
const BACKSTOP_FACTOR = 20;
/** Retry of a script load that failed on a connection that stayed up. */
const RELOAD_MS = 200;

export class RedisStore implements CounterStore {
  readonly leases = true;
  readonly #redis: Redis & Scripts;
  readonly #replica: string;
  readonly #staleMs: number;
  readonly #timeoutMs: number;
  readonly #startupWaitMs: number;
  #answered = false;
  #loading = false;
  #closed = false;
  /** Callers waiting for the first answer: told true when it comes, false when the store closes first. */
  #waiters = new Set<(answered: boolean) => void>();

  constructor(options: RedisStoreOptions) {
    this.#replica = options.replica ?? randomUUID();
    this.#staleMs = options.staleMs ?? 30_000;
    this.#timeoutMs = options.timeoutMs;
    this.#startupWaitMs = options.startupWaitMs;
    const redis = new Redis(options.url, {
      // The deadline is withDeadline's; this one only ends commands a silent connection would keep forever.
      commandTimeout: Math.max(options.timeoutMs * BACKSTOP_FACTOR, 1000),
      connectTimeout: Math.max(options.timeoutMs, 1000),
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      // Keep trying to reconnect, at most once a second: requests are not waiting on it.
      retryStrategy: (times) => Math.min(times * 100, 1000),
    });
    redis.defineCommand('mgTake', { lua: TAKE });
    redis.defineCommand('mgAdjust', { lua: ADJUST });
    redis.defineCommand('mgRead', { lua: READ });
    redis.on('ready', () => {
      options.onState?.('ready');
      void this.#loadScripts();
    });
    redis.on('error', (err: Error) => options.onState?.('down', err.message));
    this.#redis = redis as Redis & Scripts;
  }

  /** True once the store has answered: connected, scripts loaded. */
  get answered(): boolean {
    return this.#answered;
  }

  /** Resolves true once the store has answered; false after `ms` (absent: no limit) or when it closes first. */
  ready(ms?: number): Promise<boolean> {
    if (this.#answered) return Promise.resolve(true);
    if (this.#closed) return Promise.resolve(false);
    return new Promise((resolve) => {
      const timer = ms === undefined ? undefined : setTimeout(() => done(false), ms);
      timer?.unref();
      const done = (answered: boolean) => {
        clearTimeout(timer);
        this.#waiters.delete(done);
        resolve(answered);
      };
      this.#waiters.add(done);
    });
  }

  /** Loads the scripts, so the store has answered (once per process: a reconnect finds them, or ioredis resends them). */
  async #loadScripts(): Promise<void> {
    if (this.#answered || this.#loading || this.#closed) return;
    this.#loading = true;
    try {
      await Promise.all([TAKE, ADJUST, READ].map((lua) => this.#redis.script('LOAD', lua)));
      this.#answered = true;
      for (const w of [...this.#waiters]) w(true);
    } catch {
      // Still connected: try again shortly; disconnected: the next 'ready' does.
      if (this.#redis.status === 'ready') setTimeout(() => void this.#loadScripts(), RELOAD_MS).unref();
    } finally {
      this.#loading = false;
    }
  }

  /** A store call under the deadline; before the first answer, after waiting (bounded) for it. */
  async #call<T>(send: () => Promise<T>): Promise<T> {
    if (!this.#answered && !(await this.ready(this.#startupWaitMs))) {
      throw new StoreNotReached(`the limits store has not answered since start (waited ${this.#startupWaitMs} ms)`);
    }
    // With the offline queue off, a command sent now would fail unsent: say so, so nothing it carried is lost.
    if (this.#redis.status !== 'ready') throw new StoreNotReached(`the limits store is unreachable (${this.#redis.status})`);
    return withDeadline(send(), this.#timeoutMs);
  }

  async take(requests: readonly TakeRequest[]): Promise<TakeResult> {
    const args: (string | number)[] = requests.map((r) => r.key);
    args.push(this.#replica, this.#staleMs);
    for (const r of requests) args.push(KIND[r.kind], r.need, r.extra, r.limit, Math.ceil(r.ttlMs));
    const out = await this.#call(() => this.#redis.mgTake(requests.length, ...args));
    if (out[0] !== 1) return { ok: false, refused: out[1]!, used: out[2]! };
    const granted: number[] = [];
    const used: number[] = [];
    for (let i = 0; i < requests.length; i++) {
      granted.push(out[1 + 2 * i]!);
      used.push(out[2 + 2 * i]!);
    }
    return { ok: true, granted, used };
  }

  async adjust(adjustments: readonly Adjustment[]): Promise<number[]> {
    const args: (string | number)[] = adjustments.map((a) => a.key);
    args.push(this.#replica);
    for (const a of adjustments) args.push(KIND[a.kind], a.delta, Math.ceil(a.ttlMs));
    return this.#call(() => this.#redis.mgAdjust(adjustments.length, ...args));
  }

  async claim(key: string, ttlMs: number): Promise<boolean> {
    const set = await this.#call(() => this.#redis.set(key, '1', 'PX', Math.ceil(ttlMs), 'NX'));
    return set === 'OK';
  }

  async read(keys: readonly { key: string; kind: CounterKind }[]): Promise<number[]> {
    if (keys.length === 0) return [];
    return this.#call(() => this.#redis.mgRead(keys.length, ...keys.map((k) => k.key), this.#staleMs, ...keys.map((k) => KIND[k.kind])));
  }

  async close(): Promise<void> {
    this.#closed = true;
    for (const w of [...this.#waiters]) w(false);
    this.#redis.disconnect();
  }
}
