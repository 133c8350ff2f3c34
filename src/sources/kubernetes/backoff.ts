// Exponential backoff with jitter for reconnecting watches and retrying lists: many replicas that lost the API
// server at the same moment must not come back in lock-step.
export interface BackoffOptions {
  /** First delay (ms). */
  readonly initialMs?: number;
  /** Upper bound of a delay (ms). */
  readonly maxMs?: number;
  /** Fraction of each delay that is randomised: 0.5 → a delay in [d/2, d]. */
  readonly jitter?: number;
  /** Injectable for tests; returns [0, 1). */
  readonly random?: () => number;
}

export class Backoff {
  #attempt = 0;
  readonly #initial: number;
  readonly #max: number;
  readonly #jitter: number;
  readonly #random: () => number;

  constructor(options: BackoffOptions = {}) {
    this.#initial = options.initialMs ?? 500;
    this.#max = options.maxMs ?? 30_000;
    this.#jitter = options.jitter ?? 0.5;
    this.#random = options.random ?? Math.random;
  }

  /** The delay before the next attempt; each call doubles the ceiling up to maxMs. */
  next(): number {
    const ceiling = Math.min(this.#max, this.#initial * 2 ** this.#attempt);
    this.#attempt = Math.min(this.#attempt + 1, 30);
    return Math.round(ceiling * (1 - this.#jitter * this.#random()));
  }

  /** After a success: the next failure starts again from initialMs. */
  reset(): void {
    this.#attempt = 0;
  }
}

/** A timer that resolves early (with false) when the signal aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve(false);
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      resolve(false);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
