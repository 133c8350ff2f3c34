// Claims kept in this process: each key is claimed once until it expires. Bounded: past `max` keys the oldest
// claims are forgotten (and could be claimed again), so memory never grows with the keys claimed. The in-process
// store's claims, and a Redis store's while Redis cannot be reached.
export class ClaimSet {
  readonly #max: number;
  readonly #now: () => number;
  /** Expiry (epoch ms) by key, in claim order: the first entries are the oldest. */
  readonly #expiry = new Map<string, number>();

  constructor(max: number, now: () => number = Date.now) {
    this.#max = max;
    this.#now = now;
  }

  /** True when the key was not claimed (or its claim expired): it is claimed now, for ttlMs. */
  claim(key: string, ttlMs: number): boolean {
    const now = this.#now();
    const until = this.#expiry.get(key);
    if (until !== undefined && until > now) return false;
    this.#expiry.delete(key);
    while (this.#expiry.size >= this.#max) this.#expiry.delete(this.#expiry.keys().next().value!);
    this.#expiry.set(key, now + ttlMs);
    return true;
  }
}
