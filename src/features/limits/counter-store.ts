// Where the counters live: in this process, or in Redis shared by every replica. A counter is either a window
// counter (a number per key, expiring after its window) or an in-flight count (per replica, so the slots of a
// replica that died are forgotten once its heartbeat is stale). Both speak in leases (lease.ts).

export type CounterKind = 'window' | 'concurrent';

export interface TakeRequest {
  readonly key: string;
  readonly kind: CounterKind;
  /** Units the request in hand lacks: all granted or the whole take refused. */
  readonly need: number;
  /** Units asked for on top, as a lease for later requests. */
  readonly extra: number;
  readonly limit: number;
  /** How long a window counter outlives its last write (window length plus a margin). */
  readonly ttlMs: number;
}

export type TakeResult =
  /** `granted[i]` for each request; `used[i]` the counter after the grant. */
  | { readonly ok: true; readonly granted: readonly number[]; readonly used: readonly number[] }
  /** Nothing was granted; `refused` is the index of the first request that did not fit, `used` its counter. */
  | { readonly ok: false; readonly refused: number; readonly used: number };

export interface Adjustment {
  readonly key: string;
  readonly kind: CounterKind;
  /** Added to the counter (negative: units returned). */
  readonly delta: number;
  readonly ttlMs: number;
}

export interface CounterStore {
  /** Atomic over all requests: either every need fits and each gets its grant, or nothing changes. */
  take(requests: readonly TakeRequest[]): TakeResult | Promise<TakeResult>;
  /**
   * Unconditional adjustments (leases returned, settlement debts, spend, heartbeats and reads with delta 0), applied
   * in one batch; returns each counter's count after its adjustment (a window counter's; this replica's slots).
   */
  adjust(adjustments: readonly Adjustment[]): number[] | Promise<number[]>;
  /** Current counts (this replica's view for the in-process store; all replicas' for Redis), for status. */
  read(keys: readonly { key: string; kind: CounterKind }[]): Promise<number[]>;
  /**
   * True the first time `key` is claimed (until ttlMs passes), false after: in Redis, once over every replica (SET NX);
   * in process, once in this process, among a bounded number of keys.
   */
  claim(key: string, ttlMs: number): boolean | Promise<boolean>;
  /** True when grants are leases worth holding (a remote store); false when asking is as cheap as holding. */
  readonly leases: boolean;
  close(): Promise<void>;
}

/**
 * A store call that never left this process (the store is unreachable or has not answered since start): nothing was
 * applied, so what it carried can be sent again. Any other failure may have been applied and is not sent twice.
 */
export class StoreNotReached extends Error {}
