// A token bucket for the status writer: `ratePerSecond` writes on average, bursts up to `burst`. Keeps a change of
// thousands of objects from turning into thousands of simultaneous API requests.
import { setTimeout as delay } from 'node:timers/promises';

export class TokenBucket {
  #tokens: number;
  #last: number;

  constructor(
    readonly ratePerSecond: number,
    readonly burst: number,
    private readonly now: () => number = Date.now,
  ) {
    if (ratePerSecond <= 0 || burst < 1) throw new Error('rate must be positive and burst at least 1');
    this.#tokens = burst;
    this.#last = now();
  }

  /** Takes a token if one is available; otherwise returns the ms to wait for the next one. */
  tryTake(): number {
    const t = this.now();
    this.#tokens = Math.min(this.burst, this.#tokens + ((t - this.#last) / 1000) * this.ratePerSecond);
    this.#last = t;
    if (this.#tokens >= 1) {
      this.#tokens -= 1;
      return 0;
    }
    return Math.ceil(((1 - this.#tokens) / this.ratePerSecond) * 1000);
  }

  /** Waits for a token; resolves false if the signal aborts first. */
  async take(signal?: AbortSignal): Promise<boolean> {
    for (;;) {
      const wait = this.tryTake();
      if (wait === 0) return true;
      try {
        await delay(wait, undefined, { signal });
      } catch {
        return false; // aborted
      }
    }
  }
}
