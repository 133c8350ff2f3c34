// Classifies what went wrong talking to an upstream, for the attempt loop (may another backend be tried?),
// for metrics (a bounded outcome label) and for the client (502 vs 504). Pure.
import { errors, type GatewayError } from '../http/errors.js';

export type FailureKind =
  /** Connection refused, reset, unreachable, DNS: nothing was processed upstream. */
  | 'connect_error'
  | 'connect_timeout'
  /** No response headers within firstByte. */
  | 'timeout'
  /** The client went away (our AbortController fired). */
  | 'aborted'
  | 'error';

const CONNECT_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EHOSTDOWN',
  'ENOTFOUND',
  'EAI_AGAIN',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
]);

function codeOf(err: unknown): string | undefined {
  const e = err as { code?: unknown; errors?: unknown[]; cause?: unknown } | null;
  if (!e || typeof e !== 'object') return undefined;
  if (typeof e.code === 'string') return e.code;
  // Happy-eyeballs connects fail with an AggregateError of the per-address errors.
  if (Array.isArray(e.errors) && e.errors.length > 0) return codeOf(e.errors[0]);
  if (e.cause) return codeOf(e.cause);
  return undefined;
}

export function classifyFailure(err: unknown, aborted: boolean): FailureKind {
  if (aborted) return 'aborted';
  const code = codeOf(err);
  if (code === 'UND_ERR_ABORTED' || (err as Error | null)?.name === 'AbortError') return 'aborted';
  if (code === 'UND_ERR_CONNECT_TIMEOUT') return 'connect_timeout';
  if (code === 'UND_ERR_HEADERS_TIMEOUT') return 'timeout';
  if (code !== undefined && CONNECT_CODES.has(code)) return 'connect_error';
  return 'error';
}

/** Whether the next backend may be tried: only when the upstream cannot have processed the request. */
export function isFailoverable(kind: FailureKind): boolean {
  return kind === 'connect_error' || kind === 'connect_timeout';
}

export function failureToError(kind: FailureKind): GatewayError {
  switch (kind) {
    case 'connect_timeout':
    case 'timeout':
      return errors.upstreamTimeout();
    case 'connect_error':
      return errors.upstreamUnreachable();
    default:
      return errors.upstreamFailed();
  }
}
