// Forwards one client request to the planned backends under the route's failover policy (failover.ts), then
// relays the chosen upstream response: status and headers as they came (minus hop-by-hop), the body piped chunk
// by chunk with back-pressure (SSE included: nothing is buffered), a cheap tap for time-to-first-token and token
// usage, and a client disconnect aborting the upstream request. A compressed answer is decoded on the way
// (content-decoding.ts), and the backend's credentials are masked in everything relayed (credentials.ts).
// Streams that fail after their status line went out end with an SSE error event; a non-streaming response is
// cut at the route's total deadline.
import type { Request, Response } from 'express';
import type { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream';
import type { Family } from '../../model/families.js';
import type { CompiledBackend, RetryPolicy, RouteTimeouts } from '../../model/routing-table.js';
import type { OutgoingBody } from '../request/payload.js';
import type { RequestContext } from '../exchange/context.js';
import { errors, GatewayError } from '../../model/errors.js';
import type { Metrics } from '../../observability/metrics.js';
import type { BackendHealth } from '../policy/health.js';
import { finalError, outcomeLabel, requestBudgetMs } from '../policy/retry-policy.js';
import { errorCode } from './attempt-outcome.js';
import { bodyCoding, decoders } from './content-decoding.js';
import { credentialsOf } from './credentials.js';
import { runFailover } from './failover.js';
import { downstreamHeaders, upstreamRequestHeaders } from './headers.js';
import { SseKeepAlive, sseErrorEvent, upstreamErrorAsSse, type StreamProgress } from './sse-signals.js';
import { StreamReplacer } from '../stream/stream-replace.js';
import type { UpstreamClient, UpstreamResponse } from './upstream-client.js';
import { RequestTiming, serverTiming } from '../observe/request-timing.js';
import { extractUsage, TailBuffer } from '../observe/usage-tap.js';

export interface ResponseInfo {
  readonly backend: CompiledBackend;
  readonly statusCode: number;
  readonly headers: UpstreamResponse['headers'];
  /** Set for the Responses family: a transform that reads its event stream records the sequence here. */
  readonly progress?: StreamProgress | undefined;
}

/**
 * Optional body rewrite (e.g. replacing upstream ids in JSON or SSE bodies). Return undefined to relay the
 * bytes untouched. When a transform is used, content-length is dropped (the body is sent chunked). It sees the
 * body decoded when the upstream compressed it.
 */
export type ResponseTransform = (info: ResponseInfo) => Transform | undefined;

export interface ForwardDeps {
  readonly upstream: UpstreamClient;
  readonly metrics: Metrics;
  /** Passive health: told the outcome of every attempt (and of every body that fails mid-way). */
  readonly health?: BackendHealth;
}

export interface ForwardOptions {
  readonly req: Request;
  readonly res: Response;
  readonly ctx: RequestContext;
  readonly method: string;
  /** Path below the backend's base URL, e.g. "/chat/completions", with the client's query string if any. */
  readonly path: string;
  /** Planned order (planAttempts); each is tried at most once. */
  readonly backends: readonly CompiledBackend[];
  readonly timeouts: RouteTimeouts;
  /** The route's failover policy (compiled with the route: an empty spec.retry has its defaults there). */
  readonly retry: RetryPolicy;
  /** The client asked for an event stream ("stream": true). */
  readonly streaming?: boolean;
  /** SSE keep-alive interval while a streaming request waits for its first upstream byte; 0 or absent = off. */
  readonly keepAliveMs?: number;
  /** The request body for a backend (its upstream model name differs per backend); null for no body. */
  readonly body: (backend: CompiledBackend) => OutgoingBody | null;
  readonly transform?: ResponseTransform;
  /** Labels for TTFT and usage metrics. */
  readonly labels: { family: Family; model: string };
}

/** Resolves when the response has been relayed, or the client went away. Rejects with a GatewayError before any byte was sent. */
export async function forward(deps: ForwardDeps, o: ForwardOptions): Promise<void> {
  const { req, res, ctx } = o;
  const abort = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) {
      ctx.aborted = true;
      abort.abort();
    }
  });

  const retry = o.retry;
  const streaming = o.streaming ?? false;
  const keepAlive = streaming && (o.keepAliveMs ?? 0) > 0 ? new SseKeepAlive(res, o.keepAliveMs!) : undefined;
  const elapsedMs = () => Number(process.hrtime.bigint() - ctx.start) / 1e6;
  const timing = new RequestTiming(ctx.start);
  const result = await runFailover<UpstreamResponse>({
    backends: o.backends,
    policy: retry,
    timeouts: o.timeouts,
    budgetMs: requestBudgetMs(retry, o.timeouts, streaming),
    startedAt: 0,
    now: elapsedMs,
    clientSignal: abort.signal,
    health: deps.health,
    send: (backend, attempt) => {
      ctx.backend = backend.name;
      const out = o.body(backend);
      timing.sent();
      return deps.upstream.request({
        backend,
        method: o.method,
        path: backend.basePath + o.path,
        headers: upstreamRequestHeaders(req.headers, {
          credentials: credentialsOf(backend).sent,
          contentType: out?.contentType,
          contentLength: out?.body.length ?? 0,
          requestId: ctx.id,
        }),
        body: out?.body ?? null,
        // Both deadlines are ours (precise native timers; undici's fire up to ~0.5 s late): the attempt's
        // headers deadline in failover.ts, the silence inside the body in watchIdle below.
        timeouts: { ...o.timeouts, firstByteMs: attempt.headersMs, streamIdleMs: 0 },
        signal: attempt.signal,
      });
    },
    onAttempt: (backend, outcome) => {
      timing.answered();
      deps.metrics.upstreamAttempts.inc({ backend: backend.id, outcome: outcomeLabel(outcome) });
    },
  });
  keepAlive?.stop();
  ctx.attempts = result.attempts;
  const committed = keepAlive?.committed ?? false;
  // Error events the gateway writes into a Responses stream are Responses-shaped and continue the upstream's
  // sequence_number (sseErrorEvent); any answer of the family may be a stream (GET /v1/responses/{id}?stream=true).
  const progress: StreamProgress | undefined = o.labels.family === 'responses' ? { lastSequenceNumber: undefined } : undefined;
  if (!result.ok) {
    if (result.reason === 'client-gone') return;
    const e = finalError(result.last, o.labels.model, result.attempts);
    return failUnrelayed(res, committed, result.attempts, new GatewayError(e.status, e.message, { code: e.code }), progress);
  }

  const { response, backend } = result;
  if (isRedirect(response.statusCode)) {
    // An OpenAI-compatible API never sends a client elsewhere, and the Location (and the body, often "Redirecting
    // to …") would show the client an upstream's URLs. Not followed either: a redirect means a misconfigured
    // baseURL, which should be fixed, not hidden. Passive health counted it as a failure (healthVerdict).
    discard(response.body);
    return failUnrelayed(res, committed, result.attempts, errors.upstreamRedirect(o.labels.model), progress);
  }
  const contentType = String(response.headers['content-type'] ?? '');
  const isStream = contentType.startsWith('text/event-stream');
  // The 200 already went out with the keep-alives: an upstream error can only be told as an error event (read
  // through the transform too: an error body may quote an upstream id).
  const retell = committed && !(isStream && response.statusCode < 300);
  const transform = o.transform?.({ backend, statusCode: response.statusCode, headers: response.headers, progress });
  const credentials = credentialsOf(backend);
  const coding = bodyCoding(response.headers['content-encoding']);
  if (coding.kind === 'unsupported' && (retell || transform !== undefined || credentials.needles.length > 0)) {
    // Relayed raw, a body in an unknown coding would carry ids unsealed or credentials unmasked.
    discard(response.body);
    return failUnrelayed(res, committed, result.attempts, errors.upstreamEncoding(o.labels.model), progress);
  }
  const decoded = coding.kind === 'decodable';
  const hasBody = o.method !== 'HEAD' && response.statusCode !== 204 && response.statusCode !== 304;
  const stages: Transform[] = [...(decoded && hasBody ? decoders(coding.codings) : []), ...(transform ? [transform] : [])];
  // Errors anywhere in the chain reach its last stage (pipeline destroys every stream with the first error).
  if (stages.length > 0) pipeline([response.body, ...stages], () => {});
  const body: Readable = stages.length === 0 ? response.body : stages[stages.length - 1]!;
  if (retell) {
    res.end(await upstreamErrorAsSse(response.statusCode, body, 5_000, { mask: credentials.needles, responses: progress }));
    return;
  }
  const gatewayMs = timing.gatewayMs();
  if (!committed) {
    const headers = downstreamHeaders(response.headers, { keepLength: stages.length === 0 && !decoded, decoded, mask: credentials.texts });
    headers['x-model-gateway-backend'] = backend.name;
    headers['x-model-gateway-attempts'] = String(result.attempts);
    headers['server-timing'] = serverTiming(gatewayMs, timing.upstreamMs());
    res.writeHead(response.statusCode, headers);
    // Send the headers now so a streaming client sees the status before the first event, unless that event has
    // already arrived with the headers: then it carries them out in one write (a separate header write cost
    // ~18 µs per stream in the benchmark's profile).
    if (isStream && response.body.readableLength === 0) res.flushHeaders();
  }
  // A stream's overhead is what it took to get the headers out (the rest is the model's pace); a plain answer's
  // includes relaying its body, so it is taken when the response has finished.
  const family = { family: o.labels.family };
  if (isStream) deps.metrics.overhead.observe(family, gatewayMs / 1e3);
  else res.once('finish', () => deps.metrics.overhead.observe(family, timing.gatewayMs() / 1e3));
  tapBody(deps.metrics, o, response.statusCode, body, isStream, contentType);

  // A non-streaming JSON answer must be complete by the route's total deadline, retries included. Binary
  // downloads (audio, video content) are bounded by streamIdle instead: a slow reader must not lose a file.
  const deadline =
    streaming || !contentType.includes('json')
      ? undefined
      : setTimeout(() => response.body.destroy(codedError('MG_DEADLINE')), Math.max(0, o.timeouts.totalMs - elapsedMs()));
  const stopIdle = watchIdle(response.body, o.timeouts.streamIdleMs);
  const mask = credentials.needles.length > 0 ? new StreamReplacer(credentials.needles) : undefined;
  const failure = await relay(body, res, isStream ? (err) => streamFailure(err, o.timeouts, progress) : undefined, mask);
  stopIdle();
  if (deadline) clearTimeout(deadline);
  if (failure && !abort.signal.aborted && errorCode(failure) !== 'MG_DEADLINE') deps.health?.recordFailure(backend.id, result.attemptStartedAt);
}

/**
 * Answers with an error when no upstream answer will be relayed. When keep-alives have already sent the 200 of an
 * event stream, the error can only be told as an error event; otherwise it is thrown (with the attempts header)
 * for the error handler to send.
 */
function failUnrelayed(res: Response, committed: boolean, attempts: number, e: GatewayError, progress: StreamProgress | undefined): void {
  if (committed) {
    res.end(sseErrorEvent({ message: e.message, type: 'server_error', code: e.code }, progress));
    return;
  }
  res.setHeader('x-model-gateway-attempts', String(attempts));
  throw e;
}

/** Drops an upstream body unread. undici's body emits an AbortError when destroyed: without a listener that is an uncaught exception. */
function discard(body: Readable): void {
  body.on('error', () => {});
  body.destroy();
}

/**
 * 3xx other than 304. A 304 answers the client's own conditional request (its If-None-Match / If-Modified-Since
 * are forwarded, e.g. on a video download) and carries no Location, so it is relayed like any answer.
 */
export function isRedirect(status: number): boolean {
  return status >= 300 && status < 400 && status !== 304;
}

function codedError(code: 'MG_DEADLINE' | 'MG_STREAM_IDLE'): Error {
  return Object.assign(new Error(code === 'MG_DEADLINE' ? 'total deadline reached' : 'upstream body idle'), { code });
}

/**
 * Ends an upstream body that stays silent for longer than ms. Time during which the body is paused by
 * back-pressure does not count: then the client is the slow one, not the upstream.
 */
function watchIdle(body: Readable, ms: number): () => void {
  if (ms <= 0) return () => {};
  const timer = setTimeout(() => {
    if (body.readableFlowing === false) timer.refresh();
    else body.destroy(codedError('MG_STREAM_IDLE'));
  }, ms);
  const onData = () => timer.refresh();
  const stop = () => {
    clearTimeout(timer);
    body.off('data', onData);
  };
  body.on('data', onData);
  body.once('close', stop);
  return stop;
}

/** The error event that ends a stream the upstream broke off after it had started. */
function streamFailure(err: unknown, timeouts: RouteTimeouts, progress: StreamProgress | undefined): string {
  switch (errorCode(err)) {
    case 'MG_STREAM_IDLE':
    case 'UND_ERR_BODY_TIMEOUT':
      return sseErrorEvent(
        { message: `The upstream stream was silent for longer than ${timeouts.streamIdleMs} ms.`, type: 'server_error', code: 'upstream_timeout' },
        progress,
      );
    case 'MG_DEADLINE':
      return sseErrorEvent(
        { message: `The upstream response did not complete within ${timeouts.totalMs} ms.`, type: 'server_error', code: 'upstream_timeout' },
        progress,
      );
    default:
      return sseErrorEvent({ message: 'The upstream connection failed in the middle of the stream.', type: 'server_error', code: 'upstream_error' }, progress);
  }
}

/** Client gone or upstream failed mid-body: the status line is out, so cutting the connection is the only signal left. */
function cut(src: Readable, dst: Response): void {
  if (!dst.destroyed) dst.destroy();
  if (!src.destroyed) src.destroy();
}

/**
 * Relays src to dst with back-pressure (as src.pipe(dst) would), passing every chunk through `mask` when given.
 * pipe() and pipeline() are not used: pipeline() allocates an AbortController per call and aborts it on
 * completion, which builds a DOMException with a stack trace for every request (about 5% of CPU in a profile),
 * and pipe() offers no place for the mask, which must see every byte the client gets.
 * When the source fails and `trailer` is given (event streams), the client gets that last event and a clean
 * end instead of a cut connection, so SDKs report an error rather than a network failure.
 * Resolves with the source's error, if it failed.
 */
function relay(src: Readable, dst: Response, trailer?: (err: unknown) => string, mask?: StreamReplacer): Promise<unknown> {
  return new Promise((resolve) => {
    let settled = false;
    let failure: unknown;
    let lastByte = 0x0a;
    let prevByte = 0x0a;
    let waiting = false;
    const settle = () => {
      if (settled) return;
      settled = true;
      src.off('error', onError);
      src.off('data', onData);
      src.off('end', onEnd);
      dst.off('close', onClose);
      dst.off('drain', onDrain);
      resolve(failure);
    };
    const onData = (chunk: Buffer) => {
      const out = mask ? mask.push(chunk) : chunk;
      if (out.length === 0) return;
      if (out.length >= 2) [prevByte, lastByte] = [out[out.length - 2]!, out[out.length - 1]!];
      else [prevByte, lastByte] = [lastByte, out[0]!];
      if (!dst.write(out) && !waiting) {
        waiting = true;
        src.pause();
        dst.once('drain', onDrain);
      }
    };
    const onDrain = () => {
      waiting = false;
      src.resume();
    };
    const onEnd = () => {
      const rest = mask?.end();
      if (rest && rest.length > 0) dst.end(rest);
      else dst.end();
    };
    const onError = (err: unknown) => {
      failure = err;
      if (trailer && !dst.destroyed && !dst.writableEnded) {
        if (!src.destroyed) src.destroy();
        // Close a half-sent event first so the error event is parsed on its own. A tail the mask held back is
        // dropped: it is the start of a credential or of a cut event.
        const atBoundary = prevByte === 0x0a && lastByte === 0x0a;
        dst.end((atBoundary ? '' : '\n\n') + trailer(err));
      } else cut(src, dst);
      settle();
    };
    const onClose = () => {
      if (!dst.writableFinished) cut(src, dst);
      settle();
    };
    if (dst.destroyed) {
      // The client left between the upstream's answer and here: its 'close' has already fired.
      cut(src, dst);
      settle();
      return;
    }
    src.on('error', onError);
    src.once('end', onEnd);
    dst.on('close', onClose);
    src.on('data', onData);
  });
}

/** Observes the (decoded) body as it flows past: first-chunk time for streams and the tail for token usage. */
function tapBody(metrics: Metrics, o: ForwardOptions, statusCode: number, body: Readable, isStream: boolean, contentType: string): void {
  const wantsUsage = statusCode < 300 && (isStream || contentType.includes('json'));
  if (!isStream && !wantsUsage) return;
  const tail = wantsUsage ? new TailBuffer() : undefined;
  let first = isStream;
  body.on('data', (chunk: Buffer) => {
    if (first) {
      first = false;
      const seconds = Number(process.hrtime.bigint() - o.ctx.start) / 1e9;
      metrics.timeToFirstToken.observe(o.labels, seconds);
    }
    tail?.push(chunk);
  });
  if (tail) {
    body.once('end', () => {
      // Runs inside the upstream body's 'end' event, before the relay finishes the client's response: a throw
      // here would be an uncaught exception and leave the client hanging. Usage metrics are best effort.
      try {
        const usage = extractUsage(tail.text());
        if (!usage) return;
        if (usage.input !== undefined) metrics.tokenUsage.observe({ ...o.labels, type: 'input' }, usage.input);
        if (usage.output !== undefined) metrics.tokenUsage.observe({ ...o.labels, type: 'output' }, usage.output);
      } catch {
        // An upstream body the tap cannot account for is not the client's problem.
      }
    });
  }
}
