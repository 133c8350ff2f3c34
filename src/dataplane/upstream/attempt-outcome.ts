// Maps what the HTTP client throws before response headers to an attempt outcome. Pure: looks only at the error
// object (and its `cause` chain, as fetch wraps socket errors in a TypeError).
import { CREDENTIALS_CODE, SHUTDOWN_CODE, type AttemptOutcome } from '../policy/retry-policy.js';

const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT']);

/** Codes that mean the request never got a response; shown as `code` for logs (never a URL or key). */
const KNOWN_CONNECT_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EAI_FAIL',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EHOSTDOWN',
  'ENETDOWN',
  'ETIMEDOUT',
  'EADDRNOTAVAIL',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'EPROTO',
  'CERT_HAS_EXPIRED',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  SHUTDOWN_CODE,
  CREDENTIALS_CODE,
]);

export function errorCode(err: unknown, depth = 0): string | undefined {
  const e = err as { code?: unknown; errors?: unknown; cause?: unknown } | null;
  if (!e || typeof e !== 'object' || depth > 5) return undefined;
  if (typeof e.code === 'string') return e.code;
  // Happy-eyeballs connects fail with an AggregateError of the per-address errors.
  if (Array.isArray(e.errors) && e.errors.length > 0) return errorCode(e.errors[0], depth + 1);
  return errorCode(e.cause, depth + 1);
}

/**
 * An error thrown before response headers → outcome. `abortedBy` says who aborted the attempt's signal, since an
 * AbortError alone cannot tell the attempt timer from a client that went away.
 */
export function classifyUpstreamError(err: unknown, abortedBy?: 'timeout' | 'client'): AttemptOutcome {
  if (abortedBy === 'client') return { kind: 'aborted' };
  if (abortedBy === 'timeout') return { kind: 'timeout' };
  const code = errorCode(err);
  if (code !== undefined && TIMEOUT_CODES.has(code)) return { kind: 'timeout' };
  // Anything else before headers means this backend gave no answer: refused, reset, DNS, TLS, or a socket
  // error undici names differently. Known codes are kept for logs; unknown ones are reported generically.
  const known = code !== undefined && (KNOWN_CONNECT_CODES.has(code) || code.startsWith('ERR_TLS_') || code.startsWith('ERR_SSL_'));
  return { kind: 'connect-failure', code: known ? code : 'other' };
}
