// The attempt loop: tries the planned backends in order until one gives an answer worth passing on, under the
// route's retry policy (src/dataplane/policy/retry-policy.ts decides; this file only does the waiting and the bookkeeping).
// - every attempt gets a deadline for its response headers: the first-byte timeout clipped to what is left of
//   the request's budget, so the whole loop never outlives the budget however many backends hang;
// - a backend is tried at most once per request (the plan lists each once);
// - a response with a failover status is drained and dropped only when another attempt will really be made,
//   otherwise it is passed on as it is (so the client sees the last upstream's 429 and its retry-after);
// - the client going away aborts the attempt in flight at once and no further attempt starts;
// - every outcome is reported to passive health and to the caller (metrics), and each that is not the answer
//   (failed over, or the last and none) once more, for the access line.
import type { CompiledBackend, RetryPolicy, RouteTimeouts } from '../../model/routing-table.js';
import type { BackendHealth } from '../policy/health.js';
import { attemptTimeouts, decide, failureReason, healthVerdict, parseRetryAfter, type AttemptOutcome, type StopReason } from '../policy/retry-policy.js';
import { AttemptAbort, type AttemptSignal } from './attempt-abort.js';
import { classifyUpstreamError } from './attempt-outcome.js';

/** The part of an upstream response the loop needs. */
export interface AttemptResponse {
  readonly statusCode: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: DroppableBody;
}

/** What the loop does with a body it does not pass on (an UpstreamBody is one). */
interface DroppableBody {
  /** Cut at once. */
  destroy(): void;
  /** Read to the end when at most `limit` bytes (its keep-alive connection is reused), else cut. */
  dump(limit: number): void;
}

export interface AttemptContext {
  /** Deadline for the response headers of this attempt (already clipped to the budget). */
  readonly headersMs: number;
  /**
   * Aborted when the attempt times out or the client goes away; keep it on the request for its whole life. The send
   * must settle as soon as it aborts (the upstream request does; see untilAborted for a send that waits first).
   */
  readonly signal: AttemptSignal;
}

export interface FailoverOptions<R extends AttemptResponse> {
  /** Planned order (planAttempts), each backend at most once. */
  readonly backends: readonly CompiledBackend[];
  readonly policy: RetryPolicy;
  readonly timeouts: RouteTimeouts;
  /** The request's time budget (requestBudgetMs). */
  readonly budgetMs: number;
  /** Milliseconds since the request arrived. */
  readonly now: () => number;
  /** The client: whether it has gone away, and a hook run when its response is over (the exchange's). */
  readonly client: ClientSide;
  readonly health?: BackendHealth | undefined;
  /** Before each attempt after the first: false skips the backend (the limits of its upstream account are reached). */
  readonly admits?: (backend: CompiledBackend) => boolean | Promise<boolean>;
  send(backend: CompiledBackend, ctx: AttemptContext): Promise<R>;
  onAttempt?(backend: CompiledBackend, outcome: AttemptOutcome, durationMs: number): void;
}

export type FailoverResult<R extends AttemptResponse> =
  | {
      readonly ok: true;
      readonly response: R;
      readonly backend: CompiledBackend;
      readonly attempts: number;
      /** When the response's attempt started on the health clock, for health bookkeeping of the body phase. */
      readonly attemptStartedAt: number;
    }
  | {
      readonly ok: false;
      /** The last attempt's outcome; undefined when no attempt could start. */
      readonly last: AttemptOutcome | undefined;
      readonly backend: CompiledBackend | undefined;
      readonly attempts: number;
      readonly reason: StopReason;
    };

/** What an attempt needs to know of the client side: an Exchange is one. */
interface ClientSide {
  readonly aborted: boolean;
  onEnd(fn: () => void): void;
  /** An attempt that is not the answer (failed over, or the last and none), as "backend:reason", for the access line. */
  attemptFailed?(why: string): void;
}

/**
 * Tells the client side why an attempt was not the answer. A method of the exchange rather than a callback made per
 * request: a request answered at its first attempt allocates nothing for this.
 */
function failed(client: ClientSide, backend: CompiledBackend, outcome: AttemptOutcome): void {
  const why = failureReason(outcome);
  if (why !== undefined) client.attemptFailed?.(`${backend.name}:${why}`);
}

class ClientGone extends Error {
  constructor() {
    super('the client went away');
    this.name = 'AbortError';
  }
}

class AttemptTimeout extends Error {
  constructor() {
    super('attempt timed out before response headers');
    this.name = 'TimeoutError';
  }
}

export async function runFailover<R extends AttemptResponse>(o: FailoverOptions<R>): Promise<FailoverResult<R>> {
  let attempts = 0;
  let last: AttemptOutcome | undefined;
  let lastBackend: CompiledBackend | undefined;
  for (let i = 0; i < o.backends.length; i++) {
    const backend = o.backends[i]!;
    if (o.client.aborted) return { ok: false, last: { kind: 'aborted' }, backend: lastBackend, attempts, reason: 'client-gone' };
    if (attempts > 0 && o.admits && !(await o.admits(backend))) continue;
    const t = attemptTimeouts(o.timeouts, o.budgetMs, o.now());
    if (!t) return { ok: false, last, backend: lastBackend, attempts, reason: 'budget' };
    attempts++;
    lastBackend = backend;

    // One abort per attempt, by its headers deadline or by the client leaving (for as long as the response lives:
    // the upstream request keeps listening for the body).
    const abort = new AttemptAbort();
    o.client.onEnd(() => {
      if (o.client.aborted) abort.abort(new ClientGone());
    });
    const handle = setTimeout(() => abort.abort(new AttemptTimeout()), t.headersMs);
    const startedAt = o.now();
    const healthStartedAt = o.health?.now() ?? 0;
    let response: R | undefined;
    let outcome: AttemptOutcome;
    try {
      response = await o.send(backend, { headersMs: t.headersMs, signal: abort });
      const retryAfterMs = response.statusCode === 429 ? parseRetryAfter((name) => header(response!, name), Date.now()) : undefined;
      outcome = { kind: 'response', status: response.statusCode, retryAfterMs };
    } catch (err) {
      outcome = classifyUpstreamError(err, o.client.aborted ? 'client' : abort.aborted ? 'timeout' : undefined);
    } finally {
      clearTimeout(handle);
    }
    last = outcome;
    record(o.health, backend.id, outcome, healthStartedAt);
    o.onAttempt?.(backend, outcome, o.now() - startedAt);

    const decision = decide(
      outcome,
      {
        attemptsMade: attempts,
        backendsLeft: o.backends.length - i - 1,
        elapsedMs: o.now(),
        clientGone: o.client.aborted,
        responseStarted: false,
      },
      o.policy,
      o.budgetMs,
    );
    if (decision.retry) {
      failed(o.client, backend, outcome);
      // A small error body is read to its end so its keep-alive connection can be reused; a big or slow one is cut.
      response?.body.dump(64 * 1024);
      continue;
    }
    if (response && decision.reason !== 'client-gone') return { ok: true, response, backend, attempts, attemptStartedAt: healthStartedAt };
    if (response) response.body.destroy();
    else failed(o.client, backend, outcome);
    return { ok: false, last: outcome, backend, attempts, reason: decision.reason };
  }
  return { ok: false, last, backend: lastBackend, attempts, reason: 'backends' };
}

function record(health: BackendHealth | undefined, id: string, outcome: AttemptOutcome, startedAt: number): void {
  if (!health) return;
  switch (healthVerdict(outcome)) {
    case 'success':
      health.recordSuccess(id, startedAt);
      return;
    case 'failure':
      health.recordFailure(id, startedAt);
      return;
    case 'rate-limited':
      if (outcome.kind === 'response' && outcome.retryAfterMs !== undefined) health.recordRateLimited(id, outcome.retryAfterMs);
      return;
    case 'none':
      return;
  }
}

function header(r: AttemptResponse, name: string): string | undefined {
  const v = r.headers[name];
  return Array.isArray(v) ? v[0] : v;
}
