// Tells when a burst of traffic has ended: at least `minRequests` requests since the last time, then at most a
// trickle (probes) for `quietChecks` whole check intervals in a row. What a burst allocated (sockets' buffers,
// promoted request objects) is garbage by then, but V8 keeps the pages resident until a memory-reducing GC, which it
// starts on its own only after a long time without any GC; MemoryRelease does it when told
// (runtime/memory-release.ts). A trickle of traffic never counts as a burst.
//
// The quiet period is long (30 s) because that GC has a price beyond its pause: a major GC with no request in flight
// makes V8 throw away much of the request path's optimised code, and the next requests run through its compilers
// again (bench:pause measures it). A lull of a few seconds must not cost that; a burst that has really ended may.
// It reads the server's running count of requests at each check: nothing of it runs per request.
export interface TrafficQuietOptions {
  /** How often the request count is looked at (ms). */
  readonly intervalMs?: number;
  /** Intervals in a row with at most a trickle of requests that end a burst (default 6: 30 s). */
  readonly quietChecks?: number;
  /** Requests since the last burst that make a new one (default 1,000). */
  readonly minRequests?: number;
  /** Requests within one interval that make the gateway busy (default 10: a trickle is not busy). */
  readonly busyRequests?: number;
}

export class TrafficQuiet {
  readonly #intervalMs: number;
  readonly #minRequests: number;
  readonly #busyRequests: number;
  readonly #quietChecks: number;
  readonly #onQuiet: () => void;
  /** The running count of requests received (the API server's). */
  readonly #received: () => number;
  /** The count when the last burst was told (or at the start). */
  #atLastBurst: number;
  #seenAtLastCheck: number;
  /** Requests in the last whole interval. */
  #lastInterval = 0;
  /** Whole intervals in a row, up to the last check, with fewer than busyRequests requests. */
  #quietInARow = 0;
  #timer: NodeJS.Timeout | undefined;

  constructor(onQuiet: () => void, received: () => number, o: TrafficQuietOptions = {}) {
    this.#onQuiet = onQuiet;
    this.#received = received;
    this.#atLastBurst = this.#seenAtLastCheck = received();
    this.#intervalMs = o.intervalMs ?? 5_000;
    this.#minRequests = o.minRequests ?? 1_000;
    this.#busyRequests = o.busyRequests ?? 10;
    this.#quietChecks = o.quietChecks ?? 6;
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
    this.#quietInARow = this.#lastInterval < this.#busyRequests ? this.#quietInARow + 1 : 0;
    if (this.#quietInARow >= this.#quietChecks && received - this.#atLastBurst >= this.#minRequests) {
      this.#atLastBurst = received;
      this.#onQuiet();
    }
  }
}
