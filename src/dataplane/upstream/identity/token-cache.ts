// An access token that is refreshed before it expires. The identity libraries cache tokens too, but each on its
// own terms; this one gives every kind the same three guarantees the data plane relies on:
// - no request is sent with a token that expires within its safety margin (it waits for a new one instead);
// - a token is renewed ahead of expiry in the background, while requests keep using the current one;
// - concurrent requests share one refresh (single flight), and a failed refresh is not retried by every request
//   at once: failures are remembered for a short time;
// - a fetch that does not settle in time counts as a failure (an identity library may wait on a silent token endpoint
//   for minutes, and every request would wait on that one fetch); its source is told, to start afresh next time.
export interface IssuedToken {
  readonly token: string;
  /** Epoch milliseconds. */
  readonly expiresAt: number;
}

/** Fetches a token; `signal` aborts when the cache gives up on this fetch (its deadline passed). */
export type TokenSource = (signal: AbortSignal) => Promise<IssuedToken>;

export interface TokenCacheOptions {
  /** Renew this long before expiry (default 5 min), at most half the token's lifetime. */
  readonly refreshAheadMs?: number;
  /** Never hand out a token expiring within this (default 30 s), at most a tenth of its lifetime. */
  readonly minValidityMs?: number;
  /** After a failed fetch, requests get that failure for this long before another fetch starts (default 2 s). */
  readonly failureHoldMs?: number;
  /** A fetch not settled after this long fails (default 30 s). */
  readonly fetchTimeoutMs?: number;
  readonly now?: () => number;
}

export class TokenCache {
  readonly #fetch: TokenSource;
  readonly #refreshAheadMs: number;
  readonly #minValidityMs: number;
  readonly #failureHoldMs: number;
  readonly #fetchTimeoutMs: number;
  readonly #now: () => number;
  #current: (IssuedToken & { readonly refreshAt: number; readonly usableUntil: number }) | undefined;
  #inFlight: Promise<IssuedToken> | undefined;
  #failure: { readonly error: unknown; readonly until: number } | undefined;

  constructor(fetch: TokenSource, o: TokenCacheOptions = {}) {
    this.#fetch = fetch;
    this.#refreshAheadMs = o.refreshAheadMs ?? 5 * 60_000;
    this.#minValidityMs = o.minValidityMs ?? 30_000;
    this.#failureHoldMs = o.failureHoldMs ?? 2_000;
    this.#fetchTimeoutMs = o.fetchTimeoutMs ?? 30_000;
    this.#now = o.now ?? Date.now;
  }

  /** A token valid for at least the safety margin; rejects with the fetch's error when none can be had. */
  get(): Promise<IssuedToken> {
    const now = this.#now();
    const c = this.#current;
    if (c !== undefined && now < c.usableUntil) {
      // Renewed in the background while the current one is still good (not again while a failure is held).
      if (now >= c.refreshAt && !this.#holdingFailure(now)) this.#refresh().catch(() => {});
      return Promise.resolve(c);
    }
    if (this.#inFlight === undefined && this.#failure !== undefined && this.#holdingFailure(now)) return Promise.reject(this.#failure.error);
    return this.#refresh();
  }

  #holdingFailure(now: number): boolean {
    return this.#failure !== undefined && now < this.#failure.until;
  }

  #refresh(): Promise<IssuedToken> {
    if (this.#inFlight) return this.#inFlight;
    const started = this.#now();
    const p = this.#fetchInTime().then(
      (t) => {
        const lifetime = Math.max(0, t.expiresAt - started);
        this.#current = {
          ...t,
          refreshAt: t.expiresAt - Math.min(this.#refreshAheadMs, lifetime / 2),
          usableUntil: t.expiresAt - Math.min(this.#minValidityMs, lifetime / 10),
        };
        this.#failure = undefined;
        this.#inFlight = undefined;
        return t;
      },
      (error: unknown) => {
        this.#failure = { error, until: this.#now() + this.#failureHoldMs };
        this.#inFlight = undefined;
        throw error;
      },
    );
    this.#inFlight = p;
    return p;
  }

  #fetchInTime(): Promise<IssuedToken> {
    const abort = new AbortController();
    return new Promise<IssuedToken>((resolve, reject) => {
      const timer = setTimeout(() => {
        const error = new Error(`the token request did not finish within ${this.#fetchTimeoutMs / 1000} s`);
        abort.abort(error);
        reject(error);
      }, this.#fetchTimeoutMs);
      timer.unref();
      this.#fetch(abort.signal)
        .then(resolve, reject)
        .finally(() => clearTimeout(timer));
    });
  }
}
