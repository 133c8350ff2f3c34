// Forwards one exchange to the planned backends and relays the answer that was chosen, one step per file: the
// attempts under the route's failover policy (attempt-loop.ts), the refusals and the head of the answer
// (response-head.ts), the body through the transforms' answer handlers (answer-handlers.ts; decoded on the way when
// compressed, content-decoding.ts) and the credential mask (credential-mask.ts) with back-pressure and deadlines
// (relay.ts, body-deadlines.ts), and failures told as the client can still be told them (error-retelling.ts).
// Called only through dataplane/handlers/upstream-call.ts, which assembles and prepares the transforms.
import type { Request, Response } from 'express';
import type { Transform } from 'node:stream';
import { pipeline } from 'node:stream';
import { errors, GatewayError } from '../../model/errors.js';
import type { Routed } from '../exchange/exchange.js';
import type { Answer, AnswerHandler, ExchangeTransform, StreamProgress } from '../exchange/transform.js';
import { RequestTiming } from '../observe/request-timing.js';
import { finalError, SHUTDOWN_CODE } from '../policy/retry-policy.js';
import { type AnswerHandlers, answerHandlers } from './answer-handlers.js';
import { type AttemptCall, type AttemptDeps, sendAttempts } from './attempt-loop.js';
import { errorCode } from './attempt-outcome.js';
import { BodyDeadlines } from './body-deadlines.js';
import { bodyCoding, decoders } from './content-decoding.js';
import { CredentialMask } from './credential-mask.js';
import { credentialsOf } from './credentials.js';
import { failUnrelayed, retellUpstreamError, streamFailure } from './error-retelling.js';
import { openAiErrorRetelling } from './openai-error-body.js';
import { relay } from './relay.js';
import { codingRefusal, credentialRefusal, redirectRefusal, writeResponseHead } from './response-head.js';
import { SseKeepAlive } from './sse-signals.js';
import { streamSource } from './upstream-body.js';

export type ForwardDeps = AttemptDeps;

const SSE_TYPE = 'text/event-stream; charset=utf-8';

/** One call upstream for an exchange whose route is known. */
export interface ForwardCall extends AttemptCall {
  /** The exchange's transforms; their answer handlers read the relayed answer, in order. */
  readonly transforms: readonly ExchangeTransform[];
}

/** Resolves when the response has been relayed, or the client went away. Rejects with a GatewayError before any byte was sent. */
export async function forward(deps: ForwardDeps, x: Routed, req: Request, res: Response, call: ForwardCall): Promise<void> {
  const { timeouts, model } = x.route;
  const keepAlive = call.streaming && x.route.keepAliveMs > 0 ? new SseKeepAlive(res, x.route.keepAliveMs) : undefined;
  const timing = new RequestTiming(x.start);
  const { result, credentials: sentWith, sent, trace } = await sendAttempts(deps, x, req, call, timing);
  keepAlive?.stop();
  x.attempts = result.attempts;
  const committed = keepAlive?.committed ?? false;
  // Error events the gateway writes into a Responses stream are Responses-shaped and continue the upstream's
  // sequence_number (sseErrorEvent); any answer of the family may be a stream (GET /v1/responses/{id}?stream=true).
  const progress: StreamProgress | undefined = x.family === 'responses' ? { lastSequenceNumber: undefined } : undefined;
  if (!result.ok) {
    // An answer that is relayed keeps its attempt open until the relay is over; every other path ends it here.
    trace?.end();
    if (result.reason === 'client-gone') return;
    // The client is told only that nothing answered; the operator's line says why, attempt by attempt (attempt-loop.ts).
    const e = finalError(result.last, model, result.attempts, result.backend?.name);
    return failUnrelayed(res, committed, result.attempts, new GatewayError(e.status, e.message, { code: e.code }), call.transforms, progress);
  }

  const { response, backend } = result;
  const refused = redirectRefusal(response, model) ?? credentialRefusal(response, model, backend.name);
  if (refused) {
    response.body.destroy();
    if (!committed) res.setHeader('x-model-gateway-backend', backend.name);
    return failUnrelayed(res, committed, result.attempts, refused, call.transforms, progress);
  }
  const upstreamType = String(response.headers['content-type'] ?? '');
  // An event stream in the backend's own framing is a stream too, and the client gets it as SSE (a handler decodes it).
  const framed = sent?.eventStream !== undefined && response.statusCode < 300 && upstreamType.startsWith(sent.eventStream);
  const contentType = framed ? SSE_TYPE : upstreamType;
  const isStream = contentType.startsWith('text/event-stream');
  const credentials = sentWith ?? credentialsOf(backend);
  const coding = bodyCoding(response.headers['content-encoding']);
  const answer: Answer = { exchange: x, backend, statusCode: response.statusCode, headers: response.headers, contentType, isStream, progress };
  const { rewrites, handlers, edits } = withErrorRetelling(answerHandlers(call.transforms, answer), openAiErrorRetelling(answer, req, coding));
  // A whole answer to a stream request that a handler tells as the family's events reaches the client as a stream.
  const streamed = isStream || (call.streaming && response.statusCode < 300 && handlers.some((h) => h.streams));
  // The 200 already went out with the keep-alives: an upstream error can only be told as an error event (read
  // through the transforms too: an error body may quote an upstream id).
  const retell = committed && !(streamed && response.statusCode < 300);
  const refusal = codingRefusal(coding, model, retell || rewrites.length > 0 || edits || credentials.needles.length > 0);
  if (refusal) {
    for (const r of rewrites) r.destroy();
    response.body.destroy();
    return failUnrelayed(res, committed, result.attempts, refusal, call.transforms, progress);
  }
  const decoded = coding.kind === 'decodable';
  const hasBody = call.method !== 'HEAD' && response.statusCode !== 204 && response.statusCode !== 304;
  const chain: readonly Transform[] = decoded && hasBody ? [...decoders(coding.codings), ...rewrites] : rewrites;
  // Errors anywhere in the chain reach its last stage (pipeline destroys every stream with the first error).
  if (chain.length > 0) pipeline([response.body.readable(), ...chain], () => {});
  const chainEnd = chain.length === 0 ? undefined : chain[chain.length - 1]!;
  if (retell)
    return retellUpstreamError(
      res,
      response.statusCode,
      response.headers,
      chainEnd ?? response.body.readable(),
      credentials.needles,
      call.transforms,
      progress,
    );

  const gatewayMs = timing.gatewayMs();
  const upstreamMs = timing.upstreamMs();
  // A non-streamed answer a handler remakes whole at its end: the head waits for it, so a failure is still an error answer.
  const holdHead = !committed && !isStream && handlers.some((h) => h.holdsBody);
  const head = () =>
    writeResponseHead(res, response, {
      requestId: x.id,
      backend: backend.name,
      attempts: result.attempts,
      keepLength: chain.length === 0 && !edits,
      decoded,
      mask: credentials.texts,
      gatewayMs,
      upstreamMs,
      isStream,
      heldBytes: response.body.heldBytes,
      contentType: framed ? contentType : undefined,
    });
  if (!committed && !holdHead) head();
  // A stream's overhead is what it took to get the headers out (the rest is the model's pace); a plain answer's
  // includes relaying its body, so it is taken when the exchange ends.
  const labels = [x.family] as const;
  if (isStream) deps.metrics.overhead.observe(labels, gatewayMs / 1e3);
  else
    x.onEnd(() => {
      if (!x.aborted) deps.metrics.overhead.observe(labels, timing.gatewayMs() / 1e3);
    });

  // A non-streaming JSON answer must be complete by the route's total deadline, retries included. Binary
  // downloads (audio, video content) are bounded by streamIdle instead: a slow reader must not lose a file.
  const totalMs = call.streaming || !contentType.includes('json') ? undefined : Math.max(0, timeouts.totalMs - (performance.now() - x.start));
  const watch = new BodyDeadlines(response.body, timeouts.streamIdleMs, totalMs);
  const failure = await relay(chainEnd ? streamSource(chainEnd) : response.body, res, x, {
    trailer: streamed ? (err) => streamFailure(err, timeouts, call.transforms, progress) : undefined,
    mask: CredentialMask.of(credentials),
    handlers,
    watch,
    keep: () => response.body.keepAfterClientLeft(),
    head: holdHead ? head : undefined,
  });
  watch.stop();
  trace?.end({ error: failure });
  const code = errorCode(failure);
  const ours = code === 'MG_DEADLINE' || code === SHUTDOWN_CODE; // the gateway ended the body, not the upstream
  if (failure && !x.aborted && !ours) deps.health?.recordFailure(backend.id, result.attemptStartedAt);
  if (failure && holdHead && !res.headersSent && !x.aborted) {
    res.setHeader('x-model-gateway-backend', backend.name);
    return failUnrelayed(res, false, result.attempts, told(failure), call.transforms, progress);
  }
}

/**
 * The transforms' handlers, and last the retelling of an error body in OpenAI's shape when there is one. It does not
 * count as editing: it holds the body whole and sets the Content-Length of what it passes on (openai-error-body.ts).
 */
function withErrorRetelling(own: AnswerHandlers, retelling: AnswerHandler | undefined): AnswerHandlers {
  return retelling ? { rewrites: own.rewrites, handlers: [...own.handlers, retelling], edits: own.edits } : own;
}

/** A failed body whose head had not gone out, as the error the client gets instead. */
function told(failure: unknown): GatewayError {
  if (failure instanceof GatewayError) return failure;
  return errorCode(failure) === 'MG_DEADLINE' ? errors.upstreamTimeout() : errors.upstreamFailed();
}
