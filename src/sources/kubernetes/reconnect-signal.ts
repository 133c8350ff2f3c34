// The "API server is back" signal the reflectors of one source share.
//
// Why: each reflector (one per kind and namespace) backs off on its own, up to 30 s. After an outage the kinds came
// back one by one as their own timers ran out: some were not due to retry for 18-22 s after the server returned.
// With this signal, while no reflector has a watch open and some are waiting out an outage error (no answer, or a
// 5xx), one of them is let through every probe interval (jittered); the first list or watch that succeeds wakes every
// reflector waiting out an outage error, each after its own small random delay. So the whole source is back within
// about a probe interval of the server; the price is about one request per probe interval during an outage, on top
// of the reflectors' own backed-off retries (which stay, so no reflector depends on the probes alone).
//
// What does not change: while any watch is open (normal operation) there are no probes, and an error that concerns
// one resource (403, 404, 410, 429, an auth plugin failing …) keeps its reflector's own jittered backoff; the probe
// and wake delays are jittered too, so replicas that lost the server together do not return in step.
import type { Logger } from '../../observability/logger.js';

/** Why a wait ended: its own delay ran out, it was chosen to probe, the server answered again, or the reflector stopped. */
export type WakeReason = 'elapsed' | 'probe' | 'back' | 'stopped';

export interface ReconnectSignalOptions {
  /** Longest time between probes during an outage (ms); each delay is random in [½, 1] of it. */
  readonly probeIntervalMs?: number;
  /** Reflectors woken by "back" retry after a random delay in [0, this] (ms). */
  readonly wakeSpreadMs?: number;
  readonly logger?: Logger;
  /** Injectable for tests; returns [0, 1). */
  readonly random?: () => number;
}

interface Waiter {
  readonly outage: boolean;
  readonly finish: (reason: WakeReason) => void;
}

export class ReconnectSignal {
  readonly #probeIntervalMs: number;
  readonly #wakeSpreadMs: number;
  readonly #random: () => number;
  readonly #logger: Logger | undefined;
  /** Waiters in arrival order: the one that has waited longest probes first. */
  #waiters: Waiter[] = [];
  #openWatches = 0;
  #probeTimer: NodeJS.Timeout | undefined;
  /** Probes let through since the last time the server answered (for the log line when it does). */
  #probes = 0;

  constructor(options: ReconnectSignalOptions = {}) {
    this.#probeIntervalMs = options.probeIntervalMs ?? 1000;
    this.#wakeSpreadMs = options.wakeSpreadMs ?? 200;
    this.#random = options.random ?? Math.random;
    this.#logger = options.logger;
  }

  /** Waiters now, and of them those waiting out an outage error (for tests). */
  get waiting(): { all: number; outage: number } {
    return { all: this.#waiters.length, outage: this.#waiters.filter((w) => w.outage).length };
  }

  /**
   * Waits `ms` before a reflector's next attempt, or less: an `outage` waiter may be chosen to probe, and is woken
   * when another reflector reaches the server.
   */
  wait(ms: number, outage: boolean, signal: AbortSignal): Promise<WakeReason> {
    if (signal.aborted) return Promise.resolve('stopped');
    return new Promise((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      let done = false;
      const waiter: Waiter = {
        outage,
        finish: (reason) => {
          if (done) return;
          done = true;
          clearTimeout(timer);
          signal.removeEventListener('abort', onAbort);
          this.#waiters = this.#waiters.filter((w) => w !== waiter);
          resolve(reason);
        },
      };
      const onAbort = () => waiter.finish('stopped');
      timer = setTimeout(() => waiter.finish('elapsed'), ms);
      signal.addEventListener('abort', onAbort, { once: true });
      this.#waiters.push(waiter);
      this.#scheduleProbe();
    });
  }

  /** A reflector's list completed: the server answers. */
  listed(): void {
    this.#back();
  }

  /** A reflector's watch is open (the server answered 200); call watchClosed() when it ends. */
  watchOpened(): void {
    this.#openWatches++;
    this.#back();
  }

  watchClosed(): void {
    this.#openWatches = Math.max(0, this.#openWatches - 1);
    this.#scheduleProbe();
  }

  #back(): void {
    clearTimeout(this.#probeTimer);
    this.#probeTimer = undefined;
    const woken = this.#waiters.filter((w) => w.outage);
    if (woken.length > 0) {
      this.#logger?.info(
        { waiting: woken.length, probes: this.#probes },
        'kubernetes API server answers again; retrying every resource that was waiting for it',
      );
    }
    this.#probes = 0;
    for (const w of woken) {
      // Taken off the list now (a second "back" must not wake it twice); its own timer still ends the wait if sooner.
      this.#waiters = this.#waiters.filter((x) => x !== w);
      setTimeout(() => w.finish('back'), Math.floor(this.#wakeSpreadMs * this.#random()));
    }
  }

  /** One probe timer while nothing is connected and someone waits out an outage error. */
  #scheduleProbe(): void {
    if (this.#probeTimer || this.#openWatches > 0 || !this.#waiters.some((w) => w.outage)) return;
    const delay = Math.round(this.#probeIntervalMs * (1 - 0.5 * this.#random()));
    this.#probeTimer = setTimeout(() => {
      this.#probeTimer = undefined;
      if (this.#openWatches > 0) return;
      const next = this.#waiters.find((w) => w.outage);
      if (!next) return;
      // The next probe is scheduled when this one fails and its reflector waits again (or by any other waiter):
      // probes never pile up on a server that does not answer at all.
      this.#probes++;
      next.finish('probe');
    }, delay);
    this.#probeTimer.unref();
  }
}

/**
 * Whether a failed list or watch says the API server is unreachable or failing as a whole: no HTTP answer (a
 * network or socket error, anywhere in the cause chain) or a 5xx. Other errors concern one resource or one client.
 */
export function isOutageError(err: unknown): boolean {
  const e = err as { code?: unknown; statusCode?: unknown } | undefined;
  const status = typeof e?.statusCode === 'number' ? e.statusCode : typeof e?.code === 'number' ? e.code : undefined;
  if (status !== undefined) return status >= 500 && status !== 501;
  for (let c: unknown = err, depth = 0; c && typeof c === 'object' && depth < 5; c = (c as { cause?: unknown }).cause, depth++) {
    const code = (c as { code?: unknown }).code;
    if (typeof code === 'string' && /^(E[A-Z]+|UND_ERR_[A-Z_]+)$/.test(code)) return true;
  }
  return false;
}
