// Tells when a burst of traffic has ended: at least `minRequests` requests since the last time, then none for a
// whole check interval. What a burst allocated (sockets' buffers, promoted request objects) is garbage by then, but
// V8 keeps the pages resident until a memory-reducing GC, which it starts on its own only after a long time without
// any GC; MemoryRelease does it when told (runtime/memory-release.ts). A trickle of traffic never counts as a burst.
// It reads the server's running count of requests at each check: nothing of it runs per request.
export interface TrafficQuietOptions {
  /** How often the request count is looked at (ms); a burst has ended after one interval without a request. */
  readonly intervalMs?: number;
  /** Requests since the last burst that make a new one (default 1,000). */
  readonly minRequests?: number;
  /** Requests within one interval that make the gateway busy (default 10: a trickle is not busy). */
  readonly busyRequests?: number;
}

export class TrafficQuiet {
  readonly #intervalMs: number;
  readonly #minRequests: number;
  readonly #busyRequests: number;
  readonly #onQuiet: () => void;
  /** The running count of requests received (the API server's). */
  readonly #received: () => number;
  /** The count when the last burst was told (or at the start). */
  #atLastBurst: number;
  #seenAtLastCheck: number;
  /** Requests in the last whole interval. */
  #lastInterval = 0;
  #timer: NodeJS.Timeout | undefined;

  constructor(onQuiet: () => void, received: () => number, o: TrafficQuietOptions = {}) {
    this.#onQuiet = onQuiet;
    this.#received = received;
    this.#atLastBurst = this.#seenAtLastCheck = received();
    this.#intervalMs = o.intervalMs ?? 5_000;
    this.#minRequests = o.minRequests ?? 1_000;
    this.#busyRequests = o.busyRequests ?? 10;
  }

  start(): void {
    // unref: the check never keeps the process alive.
    this.#timer ??= setInterval(() => this.check(), this.#intervalMs).unref();
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /**
   * True while requests are being served: at least `busyRequests` in the last interval or since. A memory release
   * is a pause of the whole process, so it waits while this holds (main.ts).
   */
  busy(): boolean {
    return Math.max(this.#lastInterval, this.#received() - this.#seenAtLastCheck) >= this.#busyRequests;
  }

  /** One look at the count (the timer's; tests call it directly). */
  check(): void {
    const received = this.#received();
    this.#lastInterval = received - this.#seenAtLastCheck;
    this.#seenAtLastCheck = received;
    if (this.#lastInterval === 0 && received - this.#atLastBurst >= this.#minRequests) {
      this.#atLastBurst = received;
      this.#onQuiet();
    }
  }
}
