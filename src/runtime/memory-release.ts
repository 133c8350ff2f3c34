// Hands the memory of a configuration burst back to the operating system.
//
// Compiling ten thousand objects (the first list, a relist, and each change after it, since compile always builds a
// whole table) allocates tens of MB that V8 promotes to the old generation. Once that is garbage, V8 keeps the empty
// pages resident: only a memory-reducing GC gives them back, and V8's own memory reducer starts one only after about
// 100 s without any GC. A gateway pod always does a little work (status writes, traffic), so it may hold those pages
// for a long time without using them (bench:config shows the RSS with a large configuration).
//
// So once the configuration has been quiet for a few seconds after a compile, ask V8 for that GC — a pause of about
// 0.1 s with 10,000 tokens, at most once per interval. The same after a burst of traffic (traffic-quiet.ts): its
// buffers and promoted request objects leave pages behind in the same way. `gc` is there when Node runs with --expose-gc (the image's
// entry point and the bin set it); without it this does nothing and V8's memory reducer does the job later.
import type { Logger } from '../observability/logger.js';

export interface MemoryReleaseOptions {
  /** Node's gc (globalThis.gc under --expose-gc); undefined disables the release. */
  readonly gc: NodeJS.GCFunction | undefined;
  /** How long the configuration must stay unchanged after a compile (ms). */
  readonly quietMs?: number;
  /** Least time between two releases (ms): a stream of changes costs one pause per interval at most. */
  readonly minIntervalMs?: number;
  readonly logger?: Logger;
  readonly now?: () => number;
  /**
   * True while the process is serving traffic (TrafficQuiet.busy). The release is a pause of ~0.1–0.3 s: when it
   * falls due while busy, it waits another quiet period instead of stalling requests in flight.
   */
  readonly busy?: () => boolean;
}

export class MemoryRelease {
  readonly #o: MemoryReleaseOptions;
  readonly #quietMs: number;
  readonly #minIntervalMs: number;
  #timer: NodeJS.Timeout | undefined;
  #lastAt = -Infinity;
  #releases = 0;

  constructor(options: MemoryReleaseOptions) {
    this.#o = options;
    this.#quietMs = options.quietMs ?? 5_000;
    this.#minIntervalMs = options.minIntervalMs ?? 60_000;
  }

  /** Number of releases done (tests, logs). */
  get releases(): number {
    return this.#releases;
  }

  /** Call after every compile, and when a burst of traffic has ended: (re)starts the quiet period. */
  notify(): void {
    if (!this.#o.gc) return;
    clearTimeout(this.#timer);
    this.#arm(this.#quietMs);
  }

  stop(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #arm(delayMs: number): void {
    // unref: a pending release never keeps the process alive.
    this.#timer = setTimeout(() => this.#release(), delayMs).unref();
  }

  #release(): void {
    this.#timer = undefined;
    const now = this.#now();
    const wait = this.#lastAt + this.#minIntervalMs - now;
    if (wait > 0) return this.#arm(wait);
    if (this.#o.busy?.()) return this.#arm(this.#quietMs);
    this.#lastAt = now;
    const before = process.memoryUsage.rss();
    const started = performance.now();
    // The memory-reducing flavour: a regular major GC frees the objects but keeps their pages.
    this.#o.gc?.({ type: 'major', execution: 'sync', flavor: 'last-resort' });
    this.#releases++;
    const mb = (n: number) => Math.round(n / 2 ** 20);
    this.#o.logger?.debug(
      { rssBeforeMB: mb(before), rssAfterMB: mb(process.memoryUsage.rss()), pauseMs: Math.round(performance.now() - started) },
      'released the memory of the last config compiles',
    );
  }

  #now(): number {
    return this.#o.now?.() ?? Date.now();
  }
}
