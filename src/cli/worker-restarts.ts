// When the primary of `serve --workers N` replaces a dead worker, and when it gives up. A worker that keeps dying
// soon after its start (an out-of-memory loop, a crash on the first request) is replaced after a delay that doubles
// each time, and after too many deaths within a window the primary exits 1, so Kubernetes restarts the pod and shows
// CrashLoopBackOff instead of a pod that forks forever. Pure: the caller passes the clock.

export interface RestartPolicy {
  /** Delay before the first replacement of a slot; doubled for each further young death in a row of that slot. */
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
  /** A worker that lived less than this died young (its slot's delay keeps growing); one that lived longer resets it. */
  readonly youngMs: number;
  /** Deaths (of any slot) within windowMs that make the primary give up. */
  readonly maxDeaths: number;
  readonly windowMs: number;
}

const DEFAULT_RESTART_POLICY: RestartPolicy = {
  baseDelayMs: 1_000,
  maxDelayMs: 30_000,
  youngMs: 60_000,
  maxDeaths: 3,
  windowMs: 5 * 60_000,
};

export type RestartDecision = { readonly replace: true; readonly delayMs: number } | { readonly replace: false; readonly deaths: number };

export class WorkerRestarts {
  private readonly deaths: number[] = [];
  private readonly youngInARow = new Map<number, number>();

  constructor(private readonly policy: RestartPolicy = DEFAULT_RESTART_POLICY) {}

  /** A worker of `slot`, started at `startedAt`, died at `now`: replace it after delayMs, or give up. */
  died(slot: number, startedAt: number, now: number): RestartDecision {
    const p = this.policy;
    this.deaths.push(now);
    while (this.deaths.length > 0 && this.deaths[0]! <= now - p.windowMs) this.deaths.shift();
    if (this.deaths.length >= p.maxDeaths) return { replace: false, deaths: this.deaths.length };
    const young = now - startedAt < p.youngMs;
    const inARow = young ? (this.youngInARow.get(slot) ?? 0) + 1 : 1;
    this.youngInARow.set(slot, inARow);
    return { replace: true, delayMs: Math.min(p.maxDelayMs, p.baseDelayMs * 2 ** (inARow - 1)) };
  }
}
