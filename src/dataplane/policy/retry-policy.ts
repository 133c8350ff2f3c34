// The failover decision, as pure functions: what an attempt's outcome means, whether another attempt may
// start, how long the next attempt may wait, and what a failed request finally answers. The attempt loop in
// dataplane/upstream/ does the I/O and asks these functions at each step, so every rule is testable without sockets.
import type { RetryPolicy, RouteTimeouts } from '../../model/routing-table.js';

/** What one attempt against one backend came to, as far as the decision to fail over is concerned. */
export type AttemptOutcome =
  /** The upstream answered with response headers. */
  | { readonly kind: 'response'; readonly status: number; readonly retryAfterMs?: number | undefined }
  /** Refused, reset or closed before response headers, DNS failure, TLS failure, connect timeout. */
  | { readonly kind: 'connect-failure'; readonly code?: string | undefined }
  /** No response headers within the attempt's first-byte timeout (or what was left of the budget). */
  | { readonly kind: 'timeout' }
  /** The client went away; nothing more is done for it. */
  | { readonly kind: 'aborted' };

/** Why no further attempt is made. */
export type StopReason =
  | 'done' // a response that is not a failover outcome: pass it on
  | 'not-retryable' // a failure the route does not fail over on
  | 'response-started' // bytes already went to the client
  | 'client-gone'
  | 'attempts' // retry.attempts reached
  | 'backends' // every planned backend was tried once
  | 'budget'; // retry.budget used up

export type Decision = { readonly retry: true } | { readonly retry: false; readonly reason: StopReason };

export interface AttemptState {
  /** Attempts made so far, the one that just ended included. */
  readonly attemptsMade: number;
  /** Planned backends not tried yet for this request. */
  readonly backendsLeft: number;
  /** Time since the request arrived. */
  readonly elapsedMs: number;
  readonly clientGone: boolean;
  /** Any byte of an upstream response was written to the client (our own keep-alive comments do not count). */
  readonly responseStarted: boolean;
}

export function isFailoverOutcome(outcome: AttemptOutcome, policy: RetryPolicy): boolean {
  switch (outcome.kind) {
    case 'response':
      return policy.statuses.has(outcome.status);
    case 'connect-failure':
      return policy.onConnectFailure;
    case 'timeout':
      return policy.onTimeout;
    case 'aborted':
      return false;
  }
}

export function decide(outcome: AttemptOutcome, state: AttemptState, policy: RetryPolicy, budgetMs: number = policy.budgetMs): Decision {
  if (outcome.kind === 'aborted' || state.clientGone) return { retry: false, reason: 'client-gone' };
  if (state.responseStarted) return { retry: false, reason: 'response-started' };
  if (!isFailoverOutcome(outcome, policy)) return { retry: false, reason: outcome.kind === 'response' ? 'done' : 'not-retryable' };
  if (state.attemptsMade >= policy.attempts) return { retry: false, reason: 'attempts' };
  if (state.backendsLeft <= 0) return { retry: false, reason: 'backends' };
  if (state.elapsedMs >= budgetMs) return { retry: false, reason: 'budget' };
  return { retry: true };
}

/**
 * The time budget of a request: retry.budget, and for non-streaming requests also the total deadline
 * (a non-streaming response must be complete by then, so waiting for headers past it is pointless).
 */
export function requestBudgetMs(policy: RetryPolicy, timeouts: RouteTimeouts, streaming: boolean): number {
  return streaming ? policy.budgetMs : Math.min(policy.budgetMs, timeouts.totalMs);
}

export interface AttemptTimeouts {
  readonly connectMs: number;
  /** From the start of the attempt to the response headers (connecting included). */
  readonly headersMs: number;
}

/**
 * No attempt starts with less of the budget left than this. Timers fire by the event loop's cached clock, which can
 * lag the monotonic clock the budget is measured with by a millisecond or more: a clipped attempt's deadline then
 * fires with a sliver of the budget left, and a further attempt started on it could only time out (and count
 * against its backend's health).
 */
const MIN_ATTEMPT_MS = 10;

/**
 * The timeouts of the next attempt, clipped to what is left of the budget so that the client never waits
 * attempts × timeout; undefined when nothing is left (no attempt should start).
 */
export function attemptTimeouts(timeouts: RouteTimeouts, budgetMs: number, elapsedMs: number): AttemptTimeouts | undefined {
  const left = budgetMs - elapsedMs;
  if (left < MIN_ATTEMPT_MS) return undefined;
  return { connectMs: Math.min(timeouts.connectMs, left), headersMs: Math.min(timeouts.firstByteMs, left) };
}

/** How an outcome counts for passive health. */
export type HealthVerdict = 'success' | 'failure' | 'rate-limited' | 'none';

export function healthVerdict(outcome: AttemptOutcome): HealthVerdict {
  switch (outcome.kind) {
    case 'response':
      if (outcome.status === 429) return outcome.retryAfterMs !== undefined ? 'rate-limited' : 'failure';
      // 4xx means the upstream is up and judged the request; only 5xx says something about its health, and so
      // does a redirect (not 304): the backend cannot serve the API at its configured URL (the client gets 502).
      if (outcome.status >= 300 && outcome.status < 400 && outcome.status !== 304) return 'failure';
      return outcome.status >= 500 ? 'failure' : 'success';
    case 'connect-failure':
      return outcome.code === SHUTDOWN_CODE ? 'none' : 'failure';
    case 'timeout':
      return 'failure';
    case 'aborted':
      return 'none';
  }
}

/**
 * Bounded label value for model_gateway_upstream_attempts_total: the status class of a response (429 apart,
 * since it is the one 4xx that fails over), or what went wrong before one.
 */
export type OutcomeLabel = '2xx' | '3xx' | '4xx' | '429' | '5xx' | 'connect_error' | 'credentials' | 'timeout' | 'aborted';

export function outcomeLabel(outcome: AttemptOutcome): OutcomeLabel {
  switch (outcome.kind) {
    case 'response':
      if (outcome.status === 429) return '429';
      if (outcome.status === 401) return 'credentials'; // the backend refused the gateway's credential
      if (outcome.status >= 500) return '5xx';
      if (outcome.status >= 400) return '4xx';
      return outcome.status >= 300 ? '3xx' : '2xx';
    case 'connect-failure':
      // Nothing was sent: the backend's credential could not be had (an alert worth its own label).
      return outcome.code === CREDENTIALS_CODE ? 'credentials' : 'connect_error';
    case 'timeout':
      return 'timeout';
    case 'aborted':
      return 'aborted';
  }
}

/** Why an attempt gave no answer the client gets, for the access line: the socket or TLS code, timeout, or the status. */
export function failureReason(outcome: AttemptOutcome): string | undefined {
  switch (outcome.kind) {
    case 'response':
      return String(outcome.status);
    case 'connect-failure':
      return outcome.code ?? 'other';
    case 'timeout':
      return 'timeout';
    case 'aborted':
      return undefined;
  }
}

/**
 * retry-after-ms (OpenAI's, milliseconds) or retry-after (seconds or an HTTP date) → milliseconds from now.
 * Undefined when absent, unparsable or not in the future.
 */
export function parseRetryAfter(get: (name: string) => string | undefined, nowMs: number): number | undefined {
  const ms = get('retry-after-ms');
  if (ms !== undefined && /^\s*[0-9]+(\.[0-9]+)?\s*$/.test(ms)) {
    const v = Math.ceil(Number(ms));
    return v > 0 ? v : undefined;
  }
  const ra = get('retry-after')?.trim();
  if (ra === undefined || ra === '') return undefined;
  if (/^[0-9]+(\.[0-9]+)?$/.test(ra)) {
    const v = Math.ceil(Number(ra) * 1000);
    return v > 0 ? v : undefined;
  }
  const at = Date.parse(ra);
  return Number.isFinite(at) && at > nowMs ? at - nowMs : undefined;
}

/**
 * The error code of an upstream request ended by the gateway's own shutdown (the drain deadline destroys the upstream
 * pools with it; a closed pool refuses new requests with it): not the upstream's failure.
 */
export const SHUTDOWN_CODE = 'MG_SHUTDOWN';

/** The code an attempt fails with when its backend's credential cannot be had (dataplane/upstream/identity/). */
export const CREDENTIALS_CODE = 'MG_CREDENTIALS';

/** The gateway's own answer when no upstream response can be passed on (OpenAI error shape is built by the caller). */
export interface FinalError {
  readonly status: 502 | 503 | 504;
  readonly code: 'upstream_unreachable' | 'upstream_timeout' | 'upstream_error' | 'upstream_credentials' | 'server_shutting_down';
  readonly message: string;
}

/** What a client is told when its request is ended by the drain deadline (a 503 the SDKs retry, elsewhere). */
export const SHUTTING_DOWN: FinalError = {
  status: 503,
  code: 'server_shutting_down',
  message: 'The gateway is shutting down and ended this request; retry it.',
};

/**
 * What a request answers when its last attempt ended without a response to pass on. The message names the
 * model and what happened, never a backend URL or key.
 */
export function finalError(last: AttemptOutcome | undefined, model: string, attempts: number, backend?: string): FinalError {
  const tries = attempts === 1 ? '1 attempt' : `${attempts} attempts`;
  // The backend is named (operators find it in the route's status), the reason is not: it is the operator's business.
  if (last?.kind === 'connect-failure' && last.code === CREDENTIALS_CODE)
    return {
      status: 502,
      code: 'upstream_credentials',
      message: `Backend "${backend ?? '?'}" of model "${model}" could not obtain its credential (${tries}); its route's status says why.`,
    };
  if (last === undefined)
    return { status: 504, code: 'upstream_timeout', message: `The time budget of model "${model}" ran out before an upstream could be tried.` };
  if (last.kind === 'connect-failure' && last.code === SHUTDOWN_CODE) return SHUTTING_DOWN;
  if (last.kind === 'timeout' || (last.kind === 'connect-failure' && last.code === 'UND_ERR_CONNECT_TIMEOUT'))
    return { status: 504, code: 'upstream_timeout', message: `No upstream of model "${model}" answered in time (${tries}).` };
  if (last.kind === 'connect-failure' && last.code === 'other')
    return { status: 502, code: 'upstream_error', message: `The upstream of model "${model}" failed before answering (${tries}).` };
  return { status: 502, code: 'upstream_unreachable', message: `No upstream of model "${model}" could be reached (${tries}).` };
}
