// Tells when a burst of traffic has ended: at least `minRequests` requests since the last time, then none for a
// whole check interval. What a burst allocated (sockets' buffers, promoted request objects) is garbage by then, but
// V8 keeps the pages resident until a memory-reducing GC, which it starts on its own only after a long time without
// any GC; MemoryRelease does it when told (runtime/memory-release.ts). A trickle of traffic never counts as a burst.
export interface TrafficQuietOptions {
  /** How often the request count is looked at (ms); a burst has ended after one interval without a request. */
  readonly intervalMs?: number;
  /** Requests since the last burst that make a new one (default 1,000). */
  readonly minRequests?: number;
}

export class TrafficQuiet {
  readonly #intervalMs: number;
  readonly #minRequests: number;
  readonly #onQuiet: () => void;
  #requests = 0;
  #seenAtLastCheck = 0;
  #timer: NodeJS.Timeout | undefined;

  constructor(onQuiet: () => void, o: TrafficQuietOptions = {}) {
    this.#onQuiet = onQuiet;
    this.#intervalMs = o.intervalMs ?? 5_000;
    this.#minRequests = o.minRequests ?? 1_000;
  }

  /** Counts one request (cheap: the serving path calls it for each). */
  readonly request = (): void => {
    this.#requests++;
  };

  start(): void {
    // unref: the check never keeps the process alive.
    this.#timer ??= setInterval(() => this.check(), this.#intervalMs).unref();
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /** One look at the count (the timer's; tests call it directly). */
  check(): void {
    const quiet = this.#requests === this.#seenAtLastCheck;
    if (quiet && this.#requests >= this.#minRequests) {
      this.#requests = 0;
      this.#onQuiet();
    }
    this.#seenAtLastCheck = this.#requests;
  }
}
