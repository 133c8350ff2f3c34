// Sends one exchange's attempts under the route's failover policy (failover.ts decides what to try next): each
// attempt's body, headers and credentials, its identity signing (signed last, once every header and the path are
// final), its trace, and the metrics of its outcome. What the last attempt sent is kept: the relayed answer is that
// attempt's, and is masked with its credentials.
import type { Request } from 'express';
import { isIdentityAuth } from '../../model/backend-auth.js';
import type { CompiledBackend } from '../../model/routing-table.js';
import type { Metrics } from '../../observability/metrics.js';
import type { Routed } from '../exchange/exchange.js';
import type { AttemptTrace } from '../exchange/trace-hooks.js';
import type { RequestTiming } from '../observe/request-timing.js';
import type { BackendHealth } from '../policy/health.js';
import { outcomeLabel, requestBudgetMs } from '../policy/retry-policy.js';
import type { OutgoingBody } from '../exchange/transform.js';
import { untilAborted } from './attempt-abort.js';
import { type BackendCredentials, credentialsOf, withAdded } from './credentials.js';
import { type FailoverResult, runFailover } from './failover.js';
import { upstreamRequestHeaders } from './headers.js';
import type { Identities } from './identity/identities.js';
import type { UpstreamClient, UpstreamResponse } from './upstream-client.js';
import { upstreamPath } from './upstream-path.js';

export interface AttemptDeps {
  readonly upstream: UpstreamClient;
  readonly metrics: Metrics;
  /** Passive health: told the outcome of every attempt (and of every body that fails mid-way). */
  readonly health?: BackendHealth;
  /** Credentials obtained at run time (awsSigV4, gcp, azureAD backends). */
  readonly identities: Identities;
}

/** What the attempts are made of. */
export interface AttemptCall {
  readonly method: string;
  /** Path below the backend's base URL, e.g. "/chat/completions", with the client's query string if any. */
  readonly path: string;
  /** Planned order (planAttempts, or pinned by a transform); each is tried at most once. */
  readonly backends: readonly CompiledBackend[];
  /** The client asked for an event stream: no total deadline on the attempts' budget. */
  readonly streaming: boolean;
  /** The request body for a backend (its upstream model name differs per backend); null for no body. */
  readonly body: (backend: CompiledBackend) => OutgoingBody | null;
  /** Whether a failover may go to this backend (the transforms' admitsFailover); absent: always. */
  readonly admits?: (backend: CompiledBackend) => boolean | Promise<boolean>;
}

export interface Attempts {
  readonly result: FailoverResult<UpstreamResponse>;
  /** What the last attempt sent; undefined when none was sent. */
  readonly credentials: BackendCredentials | undefined;
  /** The last attempt's body (its answer's framing: OutgoingBody.eventStream); undefined when none was sent. */
  readonly sent: OutgoingBody | null | undefined;
  /** The last attempt's trace, when tracing is on: open until its answer is relayed or dropped. */
  readonly trace: AttemptTrace | undefined;
}

export async function sendAttempts(deps: AttemptDeps, x: Routed, req: Request, call: AttemptCall, timing: RequestTiming): Promise<Attempts> {
  const { timeouts, retry } = x.route;
  // The attempt in flight, when tracing is on: the one before it failed over when the next one starts.
  let traced: AttemptTrace | undefined;
  let attemptNo = 0;
  let sentWith: BackendCredentials | undefined;
  let sentBody: OutgoingBody | null | undefined;
  const result = await runFailover<UpstreamResponse>({
    backends: call.backends,
    policy: retry,
    timeouts,
    budgetMs: requestBudgetMs(retry, timeouts, call.streaming),
    now: () => performance.now() - x.start,
    client: x,
    health: deps.health,
    admits: call.admits,
    send: (backend, attempt) => {
      x.backend = backend.name;
      const out = call.body(backend);
      timing.sent();
      const path = upstreamPath(backend, out?.path ?? call.path);
      const own = credentialsOf(backend);
      const headers = upstreamRequestHeaders(req.headers, {
        credentials: own.sent,
        contentType: out?.contentType,
        contentLength: out?.body.length ?? 0,
        requestId: x.id,
        edits: out?.headers,
      });
      if (x.trace) {
        traced?.end({ failedOver: true });
        traced = x.trace.attempt(backend, ++attemptNo, path, out?.body);
        traced.inject(headers);
      }
      const request = {
        backend,
        method: call.method,
        path,
        headers,
        body: out?.body ?? null,
        connectMs: timeouts.connectMs,
        signal: attempt.signal,
      };
      sentWith = own;
      sentBody = out;
      if (!isIdentityAuth(backend.auth)) return deps.upstream.request(request);
      // Signed or given a token last, once every header and the path are final.
      const signable = { method: request.method, origin: backend.origin, path: request.path, headers, body: request.body };
      const authorized = deps.identities.authorize(backend, signable).then((added) => {
        sentWith = withAdded(own, added);
        return deps.upstream.request({ ...request, path: signable.path });
      });
      return untilAborted(attempt.signal, authorized);
    },
    onAttempt: (backend, outcome) => {
      timing.answered();
      traced?.outcome(outcome.kind === 'response' ? outcome.status : undefined, outcomeLabel(outcome));
      deps.metrics.upstreamAttempts.inc([backend.id, outcomeLabel(outcome)]);
    },
  });
  return { result, credentials: sentWith, sent: sentBody, trace: traced };
}
