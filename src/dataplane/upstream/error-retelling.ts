// How a failure is told to the client once forwarding has failed or broken off: thrown for the error handler while
// nothing was sent; as an SSE error event once a stream's 200 went out (keep-alives committed it, or the upstream's
// body broke off mid-stream); an upstream's error answer retold as an event when the 200 is already out.
import type { Response } from 'express';
import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import type { GatewayError } from '../../model/errors.js';
import type { RouteTimeouts } from '../../model/routing-table.js';
import type { ExchangeTransform, SseError, StreamProgress } from '../exchange/transform.js';
import { SHUTDOWN_CODE, SHUTTING_DOWN } from '../policy/retry-policy.js';
import { errorCode } from './attempt-outcome.js';
import { sseErrorEvent, upstreamErrorAsSse } from './sse-signals.js';
import type { Needle } from '../stream/stream-replace.js';

/** The error event of this exchange's API: a transform's own shape (`errorEvent`), else OpenAI's (sseErrorEvent). */
function errorEvent(transforms: readonly ExchangeTransform[], e: SseError, progress: StreamProgress | undefined): string {
  for (const t of transforms) {
    const own = t.errorEvent?.(e);
    if (own !== undefined) return own;
  }
  return sseErrorEvent(e, progress);
}

/**
 * Answers with an error when no upstream answer will be relayed. When keep-alives have already sent the 200 of an
 * event stream, the error can only be told as an error event; otherwise it is thrown (with the attempts header)
 * for the error handler to send.
 */
export function failUnrelayed(
  res: Response,
  committed: boolean,
  attempts: number,
  e: GatewayError,
  transforms: readonly ExchangeTransform[],
  progress: StreamProgress | undefined,
): void {
  if (committed) {
    res.end(errorEvent(transforms, { message: e.message, type: 'server_error', code: e.code }, progress));
    return;
  }
  res.setHeader('x-model-gateway-attempts', String(attempts));
  throw e;
}

/** The 200 went out with the keep-alives: the upstream's error answer is told as an error event. */
export async function retellUpstreamError(
  res: Response,
  status: number,
  headers: IncomingHttpHeaders,
  body: Readable,
  mask: readonly Needle[],
  transforms: readonly ExchangeTransform[],
  progress: StreamProgress | undefined,
): Promise<void> {
  res.end(await upstreamErrorAsSse(status, body, 5_000, { mask, headers, responses: progress, event: (e) => errorEvent(transforms, e, progress) }));
}

/** The error event that ends a stream the upstream broke off after it had started. */
export function streamFailure(err: unknown, timeouts: RouteTimeouts, transforms: readonly ExchangeTransform[], progress: StreamProgress | undefined): string {
  switch (errorCode(err)) {
    case 'MG_STREAM_IDLE':
    case 'UND_ERR_BODY_TIMEOUT':
      return errorEvent(
        transforms,
        { message: `The upstream stream was silent for longer than ${timeouts.streamIdleMs} ms.`, type: 'server_error', code: 'upstream_timeout' },
        progress,
      );
    case 'MG_DEADLINE':
      return errorEvent(
        transforms,
        { message: `The upstream response did not complete within ${timeouts.totalMs} ms.`, type: 'server_error', code: 'upstream_timeout' },
        progress,
      );
    case SHUTDOWN_CODE:
      return errorEvent(transforms, { message: SHUTTING_DOWN.message, type: 'server_error', code: SHUTTING_DOWN.code }, progress);
    default:
      return errorEvent(
        transforms,
        { message: 'The upstream connection failed in the middle of the stream.', type: 'server_error', code: 'upstream_error' },
        progress,
      );
  }
}
