// Which headers cross the gateway. Hop-by-hop headers (RFC 9110 §7.6.1) never do, in either direction; the
// client's credentials never go upstream (the backend's own key replaces them); a few upstream headers that
// describe the upstream account or would confuse the client are dropped on the way back, and the backend's
// credentials are masked in the rest.
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';
import { maskHeaders, type SentCredential } from './credentials.js';

const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'trailers',
  'transfer-encoding',
  'upgrade',
]);

/** Request headers that are never forwarded: hop-by-hop, recomputed ones, and anything that can carry a client credential or account. */
const REQUEST_DROP = new Set([
  ...HOP_BY_HOP,
  'host',
  'content-length',
  'content-type',
  'expect',
  // Asked as identity (set below): the gateway reads answers to seal ids, count tokens and mask credentials.
  'accept-encoding',
  'authorization',
  'api-key',
  'x-api-key',
  'cookie',
  'openai-organization',
  'openai-project',
  'x-request-id',
]);

const RESPONSE_DROP = new Set([
  ...HOP_BY_HOP,
  'set-cookie',
  'openai-organization',
  'openai-project',
  'x-request-id',
  'date',
  'server',
  // Upstream URLs (e.g. a 201's Location naming the upstream object): the client only ever talks to the gateway.
  'location',
  'content-location',
]);

/** The usual Connection values, which name no header beyond the hop-by-hop ones (most requests and answers carry one). */
const PLAIN_CONNECTION = new Set(['keep-alive', 'close', 'Keep-Alive', 'Close']);

/** Extra tokens listed in a Connection header are hop-by-hop too. */
function connectionTokens(value: string | string[] | undefined): Set<string> | undefined {
  if (!value || (typeof value === 'string' && PLAIN_CONNECTION.has(value))) return undefined;
  const text = Array.isArray(value) ? value.join(',') : value;
  const set = new Set<string>();
  for (const t of text.split(',')) {
    const k = t.trim().toLowerCase();
    if (k) set.add(k);
  }
  return set;
}

export interface UpstreamHeaderOptions {
  /** What authenticates the gateway to the backend (credentialsOf(backend).sent); empty for an upstream without auth. */
  credentials: readonly SentCredential[];
  contentType: string | undefined;
  contentLength: number;
  requestId: string;
  /** The body's own edits (OutgoingBody.headers): client headers dropped, headers set; the credential still wins. */
  edits?: { readonly drop: readonly string[]; readonly set: Readonly<Record<string, string>> } | undefined;
}

export function upstreamRequestHeaders(client: IncomingHttpHeaders, opts: UpstreamHeaderOptions): Record<string, string | string[]> {
  const extra = connectionTokens(client.connection);
  const out: Record<string, string | string[]> = {};
  for (const name in client) {
    if (REQUEST_DROP.has(name) || extra?.has(name) || opts.edits?.drop.includes(name)) continue;
    const v = client[name];
    if (v !== undefined) out[name] = v;
  }
  if (opts.edits) Object.assign(out, opts.edits.set);
  for (const c of opts.credentials) out[c.header] = c.value;
  out['accept-encoding'] = 'identity';
  if (opts.contentType !== undefined) out['content-type'] = opts.contentType;
  out['content-length'] = String(opts.contentLength);
  out['x-request-id'] = opts.requestId;
  return out;
}

export interface DownstreamHeaderOptions {
  /** False when the gateway changes the body's length (a rewrite, a decoded body). */
  readonly keepLength: boolean;
  /** True when the gateway decoded the upstream's Content-Encoding: the client gets the body as identity. */
  readonly decoded: boolean;
  /** Credential texts to mask in header values (credentialsOf(backend).texts). */
  readonly mask: readonly string[];
}

/**
 * Upstream response headers as sent to the client. The upstream's own request id is kept as
 * x-upstream-request-id, since x-request-id is the gateway's.
 */
export function downstreamHeaders(upstream: Record<string, string | string[] | undefined>, opts: DownstreamHeaderOptions): OutgoingHttpHeaders {
  const extra = connectionTokens(upstream['connection']);
  const out: OutgoingHttpHeaders = {};
  for (const name in upstream) {
    if (RESPONSE_DROP.has(name) || extra?.has(name)) continue;
    if (!opts.keepLength && name === 'content-length') continue;
    if (opts.decoded && name === 'content-encoding') continue;
    const v = upstream[name];
    if (v !== undefined) out[name] = v;
  }
  const upstreamId = upstream['x-request-id'];
  if (typeof upstreamId === 'string') out['x-upstream-request-id'] = upstreamId;
  return maskHeaders(out, opts.mask);
}
