// Passive health (outlier ejection) per replica, keyed by backend id. Nothing here does I/O: the attempt loop
// reports outcomes, the planner asks isEjected(), the metrics collector reads state(). The clock is injected.
//
// Model (Envoy's consecutive-failure outlier detection, simplified):
// - `consecutiveFailures` failures in a row eject a backend for baseEjection × 2^(ejections so far), capped.
// - When the cool-down ends the backend is on probation: it is planned normally again, one success makes it
//   healthy, one failure ejects it again (for longer) instead of waiting for N more failed requests.
// - A 429 with retry-after ejects for exactly that long (capped); it is the upstream telling us when to come back.
// - Any success restores a backend at once, even an ejected one that was tried because nothing else was left.
// - The ejection count decays: after a backend has stayed un-ejected for maxEjection, the next ejection starts
//   from the base again, so an incident long ago does not lengthen today's cool-down.
import type { HealthView } from './plan.js';

export type BackendState = 'healthy' | 'ejected' | 'probation';
export const BACKEND_STATES: readonly BackendState[] = ['healthy', 'ejected', 'probation'];

export interface HealthOptions {
  /** Failures in a row that eject a healthy backend. */
  readonly consecutiveFailures: number;
  /** First cool-down; doubles with each repeated ejection. */
  readonly baseEjectionMs: number;
  /** Longest cool-down from failures, and the quiet time after which the doubling starts over. */
  readonly maxEjectionMs: number;
  /** Longest ejection a retry-after header can ask for. */
  readonly maxRetryAfterMs: number;
}

const DEFAULT_HEALTH_OPTIONS: HealthOptions = {
  consecutiveFailures: 3,
  baseEjectionMs: 10_000,
  maxEjectionMs: 300_000,
  maxRetryAfterMs: 300_000,
};

interface Entry {
  failures: number;
  /** Epoch ms until which the backend is ejected; 0 when it never was. */
  ejectedUntil: number;
  /** Ejections counted for the exponential cool-down. */
  ejections: number;
  /** Epoch ms of the latest ejection; outcomes of attempts that started before it are stale. */
  ejectedAt: number;
  /** True between the end of a cool-down and the next success. */
  probation: boolean;
}

export interface HealthChange {
  readonly backendId: string;
  readonly state: BackendState;
  /** For ejections: how long, and why. */
  readonly forMs?: number;
  readonly reason?: 'failures' | 'retry-after';
}

export class BackendHealth implements HealthView {
  readonly #options: HealthOptions;
  readonly #now: () => number;
  readonly #entries = new Map<string, Entry>();
  readonly #listeners = new Set<(change: HealthChange) => void>();
  /** Base URL of each backend in the latest pruned table: a URL change starts its health over. */
  #urls: ReadonlyMap<string, string> = new Map();

  constructor(options: Partial<HealthOptions> = {}, now: () => number = Date.now) {
    this.#options = { ...DEFAULT_HEALTH_OPTIONS, ...options };
    this.#now = now;
  }

  /** Called on every ejection and every return to healthy (for logs); returns the unsubscribe function. */
  onChange(listener: (change: HealthChange) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** The clock outcomes are timed with: pass now() as an attempt's startedAt. */
  now(): number {
    return this.#now();
  }

  isEjected(backendId: string): boolean {
    return this.state(backendId) === 'ejected';
  }

  state(backendId: string): BackendState {
    const e = this.#entries.get(backendId);
    if (!e) return 'healthy';
    if (e.ejectedUntil > this.#now()) return 'ejected';
    return e.probation ? 'probation' : 'healthy';
  }

  /** Milliseconds of cool-down left (0 when not ejected); for logs and debugging. */
  ejectedForMs(backendId: string): number {
    const e = this.#entries.get(backendId);
    return e ? Math.max(0, e.ejectedUntil - this.#now()) : 0;
  }

  /**
   * `startedAt` is when the attempt began: outcomes of attempts already in flight when the backend was ejected
   * say nothing new about it (a slow success must not cancel a fresh retry-after, a slow failure must not
   * re-eject a backend on probation).
   */
  recordSuccess(backendId: string, startedAt = this.#now()): void {
    const e = this.#entries.get(backendId);
    if (!e || startedAt < e.ejectedAt) return;
    const wasUnhealthy = this.state(backendId) !== 'healthy';
    e.failures = 0;
    e.probation = false;
    e.ejectedUntil = Math.min(e.ejectedUntil, this.#now());
    if (e.ejections === 0) this.#entries.delete(backendId);
    if (wasUnhealthy) this.#emit({ backendId, state: 'healthy' });
  }

  /** A failure that counts against the backend (connect error, timeout, 5xx, 429 without retry-after). */
  recordFailure(backendId: string, startedAt = this.#now()): void {
    const e = this.#entry(backendId);
    const now = this.#now();
    // While ejected, failures (of last-resort attempts) do not extend the cool-down; stale ones say nothing.
    if (e.ejectedUntil > now || startedAt < e.ejectedAt) return;
    e.failures++;
    if (e.probation || e.failures >= this.#options.consecutiveFailures) {
      if (e.ejectedUntil > 0 && now - e.ejectedUntil >= this.#options.maxEjectionMs && !e.probation) e.ejections = 0;
      const forMs = Math.min(this.#options.baseEjectionMs * 2 ** e.ejections, this.#options.maxEjectionMs);
      e.ejections++;
      this.#eject(backendId, e, now, forMs, 'failures');
    }
  }

  /** The upstream said 429 with retry-after: leave it alone for that long (capped), without growing the backoff. */
  recordRateLimited(backendId: string, retryAfterMs: number): void {
    const e = this.#entry(backendId);
    const now = this.#now();
    const forMs = Math.min(Math.max(0, retryAfterMs), this.#options.maxRetryAfterMs);
    if (forMs <= 0 || now + forMs <= e.ejectedUntil) return;
    this.#eject(backendId, e, now, forMs, 'retry-after');
  }

  /**
   * Takes the configured backends (id → base URL) of a new table: forgets backends that are no longer configured,
   * so the map cannot grow with config churn, and those whose URL changed, as the failures were the old URL's (a
   * corrected baseURL must not wait out the cool-down its typo earned).
   */
  prune(live: ReadonlyMap<string, string>): void {
    for (const id of this.#entries.keys()) {
      const url = live.get(id);
      if (url === undefined || (this.#urls.has(id) && this.#urls.get(id) !== url)) this.#entries.delete(id);
    }
    this.#urls = new Map(live);
  }

  /** Backend ids with any recorded state (for tests and debugging). */
  trackedIds(): string[] {
    return [...this.#entries.keys()];
  }

  #eject(backendId: string, e: Entry, now: number, forMs: number, reason: 'failures' | 'retry-after'): void {
    e.ejectedUntil = now + forMs;
    e.ejectedAt = now;
    e.failures = 0;
    // Whatever ends the cool-down, the next request is a probe: one failure sends it straight back.
    e.probation = true;
    this.#emit({ backendId, state: 'ejected', forMs, reason });
  }

  #emit(change: HealthChange): void {
    for (const l of this.#listeners) l(change);
  }

  #entry(backendId: string): Entry {
    let e = this.#entries.get(backendId);
    if (!e) {
      e = { failures: 0, ejectedUntil: 0, ejectedAt: 0, ejections: 0, probation: false };
      this.#entries.set(backendId, e);
    }
    return e;
  }
}

/** Every backend of a table, id → base URL: what health may keep state for (see BackendHealth.prune). */
export function configuredBackends(routes: Iterable<{ readonly backends: readonly { readonly id: string; readonly baseURL: string }[] }>): Map<string, string> {
  const backends = new Map<string, string>();
  for (const r of routes) for (const b of r.backends) backends.set(b.id, b.baseURL);
  return backends;
}
