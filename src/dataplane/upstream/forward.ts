// Forwards one exchange to the planned backends under the route's failover policy (failover.ts), then relays the
// chosen upstream response: status and headers as they came (minus hop-by-hop), the body piped chunk by chunk with
// back-pressure (SSE included: nothing is buffered), through the answer stages of the exchange's transforms (id
// sealing, usage, …), the client leaving aborting the upstream request (through the exchange's end hook). A compressed
// answer is decoded on the way (content-decoding.ts), and the backend's credentials are masked in everything
// relayed (credentials.ts), after every transform. Streams that fail after their status line went out end with an
// SSE error event; a non-streaming response is cut at the route's total deadline. Called only through
// dataplane/handlers/upstream-call.ts, which assembles and prepares the transforms.
import type { Request, Response } from 'express';
import type { Transform } from 'node:stream';
import { pipeline } from 'node:stream';
import { errors, GatewayError } from '../../model/errors.js';
import { isIdentityAuth } from '../../model/backend-auth.js';
import type { CompiledBackend, RouteTimeouts } from '../../model/routing-table.js';
import type { Metrics } from '../../observability/metrics.js';
import type { Routed } from '../exchange/exchange.js';
import type { AttemptTrace } from '../exchange/trace-hooks.js';
import type { Answer, AnswerStage, ChunkEditor, ExchangeTransform, StreamProgress } from '../exchange/transform.js';
import { RequestTiming, serverTiming } from '../observe/request-timing.js';
import type { BackendHealth } from '../policy/health.js';
import { finalError, outcomeLabel, requestBudgetMs, SHUTDOWN_CODE, SHUTTING_DOWN } from '../policy/retry-policy.js';
import type { OutgoingBody } from '../request/payload.js';
import { StreamReplacer } from '../stream/stream-replace.js';
import { untilAborted } from './attempt-abort.js';
import { errorCode } from './attempt-outcome.js';
import { bodyCoding, decoders } from './content-decoding.js';
import { type BackendCredentials, credentialsOf, withAdded } from './credentials.js';
import { runFailover } from './failover.js';
import type { Identities } from './identity/identities.js';
import { downstreamHeaders, upstreamRequestHeaders } from './headers.js';
import { SseKeepAlive, sseErrorEvent, upstreamErrorAsSse } from './sse-signals.js';
import { type BodySink, type BodySource, streamSource, type UpstreamBody } from './upstream-body.js';
import type { UpstreamClient, UpstreamResponse } from './upstream-client.js';
import { upstreamPath } from './upstream-path.js';

export interface ForwardDeps {
  readonly upstream: UpstreamClient;
  readonly metrics: Metrics;
  /** Passive health: told the outcome of every attempt (and of every body that fails mid-way). */
  readonly health?: BackendHealth;
  /** Credentials obtained at run time (awsSigV4, gcp, azureAD backends). */
  readonly identities: Identities;
}

/** One call upstream for an exchange whose route is known. */
export interface ForwardCall {
  readonly method: string;
  /** Path below the backend's base URL, e.g. "/chat/completions", with the client's query string if any. */
  readonly path: string;
  /** Planned order (planAttempts, or pinned by a transform); each is tried at most once. */
  readonly backends: readonly CompiledBackend[];
  /** The client asked for an event stream ("stream": true): keep-alives while waiting, no total deadline. */
  readonly streaming: boolean;
  /** The request body for a backend (its upstream model name differs per backend); null for no body. */
  readonly body: (backend: CompiledBackend) => OutgoingBody | null;
  /** The exchange's transforms; their answer stages are put on the relayed answer, in order. */
  readonly transforms: readonly ExchangeTransform[];
}

/** Resolves when the response has been relayed, or the client went away. Rejects with a GatewayError before any byte was sent. */
export async function forward(deps: ForwardDeps, x: Routed, req: Request, res: Response, call: ForwardCall): Promise<void> {
  const { timeouts, retry, model } = x.route;
  const family = x.family;
  const keepAlive = call.streaming && x.route.keepAliveMs > 0 ? new SseKeepAlive(res, x.route.keepAliveMs) : undefined;
  const elapsedMs = () => performance.now() - x.start;
  const timing = new RequestTiming(x.start);
  // The attempt in flight, when tracing is on: the one before it failed over when the next one starts.
  let traced: AttemptTrace | undefined;
  let attemptNo = 0;
  // What the last attempt sent: the relayed answer is that attempt's, and is masked with it.
  let sentWith: BackendCredentials | undefined;
  const result = await runFailover<UpstreamResponse>({
    backends: call.backends,
    policy: retry,
    timeouts,
    budgetMs: requestBudgetMs(retry, timeouts, call.streaming),
    now: elapsedMs,
    client: x,
    health: deps.health,
    send: (backend, attempt) => {
      x.backend = backend.name;
      const out = call.body(backend);
      timing.sent();
      const path = upstreamPath(backend, call.path);
      const own = credentialsOf(backend);
      const headers = upstreamRequestHeaders(req.headers, {
        credentials: own.sent,
        contentType: out?.contentType,
        contentLength: out?.body.length ?? 0,
        requestId: x.id,
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
  keepAlive?.stop();
  x.attempts = result.attempts;
  // An answer that is relayed keeps its attempt open until the relay is over; every other path ends it here.
  if (!result.ok) traced?.end();
  const committed = keepAlive?.committed ?? false;
  // Error events the gateway writes into a Responses stream are Responses-shaped and continue the upstream's
  // sequence_number (sseErrorEvent); any answer of the family may be a stream (GET /v1/responses/{id}?stream=true).
  const progress: StreamProgress | undefined = family === 'responses' ? { lastSequenceNumber: undefined } : undefined;
  if (!result.ok) {
    if (result.reason === 'client-gone') return;
    const e = finalError(result.last, model, result.attempts, result.backend?.name);
    return failUnrelayed(res, committed, result.attempts, new GatewayError(e.status, e.message, { code: e.code }), progress);
  }

  const { response, backend } = result;
  if (isRedirect(response.statusCode)) {
    // An OpenAI-compatible API never sends a client elsewhere, and the Location (and the body, often "Redirecting
    // to …") would show the client an upstream's URLs. Not followed either: a redirect means a misconfigured
    // baseURL, which should be fixed, not hidden. Passive health counted it as a failure (healthVerdict).
    response.body.destroy();
    return failUnrelayed(res, committed, result.attempts, errors.upstreamRedirect(model), progress);
  }
  const contentType = String(response.headers['content-type'] ?? '');
  const isStream = contentType.startsWith('text/event-stream');
  // The 200 already went out with the keep-alives: an upstream error can only be told as an error event (read
  // through the transforms too: an error body may quote an upstream id).
  const retell = committed && !(isStream && response.statusCode < 300);
  const answer: Answer = { exchange: x, backend, statusCode: response.statusCode, headers: response.headers, contentType, isStream, progress };
  const stages = answerStages(call.transforms, answer);
  const rewrites = collect(stages, REWRITE);
  const editors = collect(stages, EDIT);
  const credentials = sentWith ?? credentialsOf(backend);
  const coding = bodyCoding(response.headers['content-encoding']);
  if (coding.kind === 'unsupported' && (retell || rewrites.length > 0 || editors.length > 0 || credentials.needles.length > 0)) {
    // Relayed raw, a body in an unknown coding would carry ids unsealed or credentials unmasked.
    for (const r of rewrites) r.destroy();
    response.body.destroy();
    return failUnrelayed(res, committed, result.attempts, errors.upstreamEncoding(model), progress);
  }
  const decoded = coding.kind === 'decodable';
  const hasBody = call.method !== 'HEAD' && response.statusCode !== 204 && response.statusCode !== 304;
  const chain: readonly Transform[] = decoded && hasBody ? [...decoders(coding.codings), ...rewrites] : rewrites;
  // Errors anywhere in the chain reach its last stage (pipeline destroys every stream with the first error).
  if (chain.length > 0) pipeline([response.body.readable(), ...chain], () => {});
  const chainEnd = chain.length === 0 ? undefined : chain[chain.length - 1]!;
  if (retell) {
    const stream = chainEnd ?? response.body.readable();
    res.end(await upstreamErrorAsSse(response.statusCode, stream, 5_000, { mask: credentials.needles, responses: progress }));
    return;
  }
  const gatewayMs = timing.gatewayMs();
  if (!committed) {
    const headers = downstreamHeaders(response.headers, { keepLength: chain.length === 0 && editors.length === 0, decoded, mask: credentials.texts });
    headers['x-request-id'] = x.id; // named in the head itself, which then goes out as given (request-id.ts)
    headers['x-model-gateway-backend'] = backend.name;
    headers['x-model-gateway-attempts'] = String(result.attempts);
    headers['server-timing'] = serverTiming(gatewayMs, timing.upstreamMs());
    res.writeHead(response.statusCode, headers);
    // Send the headers now so a streaming client sees the status before the first event, unless that event has
    // already arrived with the headers: then it carries them out in one write (sending the headers alone costs
    // a socket write of its own per stream).
    if (isStream && response.body.heldBytes === 0) res.flushHeaders();
  }
  // A stream's overhead is what it took to get the headers out (the rest is the model's pace); a plain answer's
  // includes relaying its body, so it is taken when the exchange ends.
  const labels = [family] as const;
  if (isStream) deps.metrics.overhead.observe(labels, gatewayMs / 1e3);
  else
    x.onEnd(() => {
      if (!x.aborted) deps.metrics.overhead.observe(labels, timing.gatewayMs() / 1e3);
    });

  // A non-streaming JSON answer must be complete by the route's total deadline, retries included. Binary
  // downloads (audio, video content) are bounded by streamIdle instead: a slow reader must not lose a file.
  const totalMs = call.streaming || !contentType.includes('json') ? undefined : Math.max(0, timeouts.totalMs - elapsedMs());
  const watch = new BodyDeadlines(response.body, timeouts.streamIdleMs, totalMs);
  const mask = credentials.needles.length > 0 ? new StreamReplacer(credentials.needles) : undefined;
  const observers = collect(stages, OBSERVER);
  const failure = await relay(chainEnd ? streamSource(chainEnd) : response.body, res, x, {
    trailer: isStream ? (err) => streamFailure(err, timeouts, progress) : undefined,
    mask,
    editors,
    observers,
    watch,
  });
  watch.stop();
  traced?.end({ error: failure });
  const code = errorCode(failure);
  const ours = code === 'MG_DEADLINE' || code === SHUTDOWN_CODE; // the gateway ended the body, not the upstream
  if (failure && !x.aborted && !ours) deps.health?.recordFailure(backend.id, result.attemptStartedAt);
}

/** What the editors held back at the end, each one's rest passed through the editors after it; undefined: nothing. */
function editorsRest(editors: readonly ChunkEditor[]): Buffer | undefined {
  let held: Buffer | undefined;
  for (const e of editors) {
    const through = held ? e.push(held) : undefined;
    const rest = e.end();
    held = through?.length ? (rest.length ? Buffer.concat([through, rest]) : through) : rest.length ? rest : undefined;
  }
  return held;
}

const NONE: readonly never[] = [];
const REWRITE = (s: AnswerStage) => s.rewrite;
const EDIT = (s: AnswerStage) => s.edit;
const OBSERVER = (s: AnswerStage) => (s.observe !== undefined || s.end !== undefined ? s : undefined);

/** What pick finds in the stages, in order; one shared empty array when none (the usual case for rewrites). */
function collect<T>(stages: readonly AnswerStage[], pick: (s: AnswerStage) => T | undefined): readonly T[] {
  let out: T[] | undefined;
  for (const s of stages) {
    const v = pick(s);
    if (v !== undefined) (out ??= []).push(v);
  }
  return out ?? NONE;
}

/** The stage each transform puts on this answer, in the transforms' order. */
function answerStages(transforms: readonly ExchangeTransform[], answer: Answer): AnswerStage[] {
  const out: AnswerStage[] = [];
  for (const t of transforms) {
    const stage = t.answer?.(answer);
    if (stage) out.push(stage);
  }
  return out;
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

/**
 * 3xx other than 304. A 304 answers the client's own conditional request (its If-None-Match / If-Modified-Since
 * are forwarded, e.g. on a video download) and carries no Location, so it is relayed like any answer.
 */
function isRedirect(status: number): boolean {
  return status >= 300 && status < 400 && status !== 304;
}

function codedError(code: 'MG_DEADLINE' | 'MG_STREAM_IDLE'): Error {
  return Object.assign(new Error(code === 'MG_DEADLINE' ? 'total deadline reached' : 'upstream body idle'), { code });
}

/**
 * The body phase's deadlines on one timer: silence inside the body longer than idleMs (time during which the body
 * is paused by back-pressure does not count: then the client is the slow one, not the upstream) and, for a JSON
 * answer, the route's total deadline. The relay reports each chunk with touch(), a clock read: no listener and no
 * timer update per chunk. The timer fires only when a deadline may have passed, and is re-armed for what is left.
 */
class BodyDeadlines {
  readonly #body: UpstreamBody;
  readonly #idleMs: number;
  readonly #totalAt: number | undefined;
  #last: number;
  #timer: NodeJS.Timeout | undefined;

  constructor(body: UpstreamBody, idleMs: number, totalMs: number | undefined) {
    this.#body = body;
    this.#idleMs = idleMs;
    const now = performance.now();
    this.#last = now;
    this.#totalAt = totalMs === undefined ? undefined : now + totalMs;
    this.#arm(now);
  }

  touch(): void {
    this.#last = performance.now();
  }

  stop(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #arm(now: number): void {
    const idleIn = this.#idleMs > 0 ? this.#last + this.#idleMs - now : Number.POSITIVE_INFINITY;
    const totalIn = this.#totalAt === undefined ? Number.POSITIVE_INFINITY : this.#totalAt - now;
    const delay = Math.min(idleIn, totalIn);
    this.#timer = delay === Number.POSITIVE_INFINITY ? undefined : setTimeout(() => this.#check(), Math.max(0, delay));
  }

  #check(): void {
    const now = performance.now();
    if (this.#totalAt !== undefined && now >= this.#totalAt) return void this.#body.destroy(codedError('MG_DEADLINE'));
    if (this.#idleMs > 0 && now - this.#last >= this.#idleMs) {
      if (!this.#body.paused) return void this.#body.destroy(codedError('MG_STREAM_IDLE'));
      this.#last = now; // paused by the client: the silence is not the upstream's
    }
    this.#arm(now);
  }
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
    case SHUTDOWN_CODE:
      return sseErrorEvent({ message: SHUTTING_DOWN.message, type: 'server_error', code: SHUTTING_DOWN.code }, progress);
    default:
      return sseErrorEvent({ message: 'The upstream connection failed in the middle of the stream.', type: 'server_error', code: 'upstream_error' }, progress);
  }
}

/** Client gone or upstream failed mid-body: the status line is out, so cutting the connection is the only signal left. */
function cut(src: BodySource, dst: Response): void {
  if (!dst.destroyed) dst.destroy();
  src.destroy();
}

interface RelayOptions {
  /** When the source fails (event streams): the last event to send before ending cleanly. */
  readonly trailer: ((err: unknown) => string) | undefined;
  /** Masks the backend's credentials in every byte the client gets. */
  readonly mask: StreamReplacer | undefined;
  /** The transforms' synchronous edits, in order, before the observers. */
  readonly editors: readonly ChunkEditor[];
  /** The transforms' observers: each chunk (before masking), then end() when the body completed. */
  readonly observers: readonly AnswerStage[];
  readonly watch: BodyDeadlines;
}

/**
 * Relays src to dst with back-pressure (as src.pipe(dst) would), passing every chunk to the observers and through
 * the mask. pipe() and pipeline() are not used: pipeline() allocates an AbortController per call and aborts it on
 * completion, which builds a DOMException with a stack trace for every request (a visible share of CPU),
 * and pipe() offers no place for the mask, which must see every byte the client gets.
 * When the source fails and a trailer is given (event streams), the client gets that last event and a clean
 * end instead of a cut connection, so SDKs report an error rather than a network failure. The client leaving
 * (the exchange ending first) cuts the source.
 * Resolves with the source's error, if it failed.
 */
function relay(src: BodySource, dst: Response, x: Routed, o: RelayOptions): Promise<unknown> {
  return new Promise((resolve) => {
    if (x.aborted || dst.destroyed) {
      // The client left between the upstream's answer and here.
      resolve(undefined);
      cut(src, dst);
      return;
    }
    const r = new Relay(src, dst, o, resolve);
    // The exchange's end hook (no listener of our own): a response that ends before the body did was cut.
    x.onEnd(() => r.clientEnded());
    src.attach(r);
  });
}

/** One relay's state, and the source's sink (methods on one object rather than a closure each). */
class Relay implements BodySink {
  readonly #src: BodySource;
  readonly #dst: Response;
  readonly #o: RelayOptions;
  readonly #resolve: (failure: unknown) => void;
  #settled = false;
  #failure: unknown;
  #lastByte = 0x0a;
  #prevByte = 0x0a;
  #waiting = false;
  #onDrain: (() => void) | undefined;

  constructor(src: BodySource, dst: Response, o: RelayOptions, resolve: (failure: unknown) => void) {
    this.#src = src;
    this.#dst = dst;
    this.#o = o;
    this.#resolve = resolve;
  }

  data(chunk: Buffer): void {
    if (this.#settled) return;
    const o = this.#o;
    o.watch.touch();
    for (const e of o.editors) chunk = e.push(chunk);
    if (chunk.length === 0) return;
    for (const s of o.observers) s.observe?.(chunk);
    const out = o.mask ? o.mask.push(chunk) : chunk;
    if (out.length === 0) return;
    this.#prevByte = out.length >= 2 ? out[out.length - 2]! : this.#lastByte;
    this.#lastByte = out[out.length - 1]!;
    if (!this.#dst.write(out) && !this.#waiting) {
      this.#waiting = true;
      this.#src.pause();
      this.#onDrain ??= () => {
        this.#waiting = false;
        this.#src.resume();
      };
      this.#dst.once('drain', this.#onDrain);
    }
  }

  end(): void {
    if (this.#settled) return;
    const o = this.#o;
    const held = o.editors.length > 0 ? editorsRest(o.editors) : undefined;
    if (held) for (const s of o.observers) s.observe?.(held);
    for (const s of o.observers) s.end?.();
    const masked = held && o.mask ? o.mask.push(held) : held;
    const rest = o.mask?.end();
    const last = masked && rest?.length ? Buffer.concat([masked, rest]) : (masked ?? rest);
    if (last && last.length > 0) this.#dst.end(last);
    else this.#dst.end();
    this.#settle();
  }

  error(err: unknown): void {
    if (this.#settled) return;
    this.#failure = err;
    const dst = this.#dst;
    const trailer = this.#o.trailer;
    if (trailer && !dst.destroyed && !dst.writableEnded) {
      this.#src.destroy();
      // Close a half-sent event first so the error event is parsed on its own. A tail the mask held back is
      // dropped: it is the start of a credential or of a cut event.
      const atBoundary = this.#prevByte === 0x0a && this.#lastByte === 0x0a;
      dst.end((atBoundary ? '' : '\n\n') + trailer(err));
    } else cut(this.#src, dst);
    this.#settle();
  }

  /** The response is over: if the body was still coming, the client left and the source is cut. */
  clientEnded(): void {
    if (this.#settled) return;
    this.#settle();
    cut(this.#src, this.#dst);
  }

  #settle(): void {
    if (this.#settled) return;
    this.#settled = true;
    if (this.#onDrain) this.#dst.off('drain', this.#onDrain);
    this.#resolve(this.#failure);
  }
}
