// The in-process store: exact for one process, nothing shared. With N replicas and no Redis, each replica
// counts on its own, so together they admit up to N times each limit (docs/usage-and-limits.md).
import type { Adjustment, CounterKind, CounterStore, TakeRequest, TakeResult } from './counter-store.js';
import { ClaimSet } from './claim-set.js';
import { grant } from './lease.js';

/** Most claims an in-process store keeps (a claim is a key and a number): the oldest are forgotten past it. */
export const MAX_LOCAL_CLAIMS = 100_000;

interface Entry {
  value: number;
  /** Epoch ms after which the entry is gone; Infinity for in-flight counts. */
  expiresAt: number;
}

export class MemoryStore implements CounterStore {
  /** False: asking is as cheap as holding. The unit tests set it to model a shared store's leases. */
  readonly leases: boolean;
  readonly #entries = new Map<string, Entry>();
  readonly #now: () => number;
  readonly #claims: ClaimSet;
  #sweepAt = 0;

  constructor(options: { now?: () => number; leases?: boolean } = {}) {
    this.#now = options.now ?? Date.now;
    this.leases = options.leases ?? false;
    this.#claims = new ClaimSet(MAX_LOCAL_CLAIMS, this.#now);
  }

  claim(key: string, ttlMs: number): boolean {
    return this.#claims.claim(key, ttlMs);
  }

  take(requests: readonly TakeRequest[]): TakeResult {
    const now = this.#now();
    this.#sweep(now);
    const granted: number[] = [];
    for (let i = 0; i < requests.length; i++) {
      const r = requests[i]!;
      const used = this.#value(r.key, now);
      const g = grant(used, r.need, r.extra, r.limit);
      if (g === 0 && r.need > 0) return { ok: false, refused: i, used };
      granted.push(g);
    }
    const used: number[] = [];
    for (let i = 0; i < requests.length; i++) used.push(this.#add(requests[i]!, granted[i]!, now));
    return { ok: true, granted, used };
  }

  adjust(adjustments: readonly Adjustment[]): number[] {
    const now = this.#now();
    return adjustments.map((a) => (a.delta !== 0 ? this.#add(a, a.delta, now) : this.#value(a.key, now)));
  }

  async read(keys: readonly { key: string; kind: CounterKind }[]): Promise<number[]> {
    const now = this.#now();
    return keys.map((k) => this.#value(k.key, now));
  }

  async close(): Promise<void> {
    this.#entries.clear();
  }

  #value(key: string, now: number): number {
    const e = this.#entries.get(key);
    return e && e.expiresAt > now ? e.value : 0;
  }

  #add(r: { key: string; kind: CounterKind; ttlMs: number }, delta: number, now: number): number {
    const value = Math.max(0, this.#value(r.key, now) + delta);
    this.#entries.set(r.key, { value, expiresAt: r.kind === 'concurrent' ? Number.POSITIVE_INFINITY : now + r.ttlMs });
    return value;
  }

  /** Drops expired window counters now and then (keys carry their window's start, so old ones are never read again). */
  #sweep(now: number): void {
    if (now < this.#sweepAt) return;
    this.#sweepAt = now + 60_000;
    for (const [k, e] of this.#entries) if (e.expiresAt <= now) this.#entries.delete(k);
  }
}
