// The head of a relayed answer: what refuses an answer before a byte of it goes out (a redirect, a body in a coding
// the gateway cannot read when it must read it), and the status line and headers that go out (hop-by-hop removed,
// credentials masked, the gateway's own headers and Server-Timing added).
import type { Response } from 'express';
import { errors, type GatewayError } from '../../model/errors.js';
import { serverTiming } from '../observe/request-timing.js';
import type { BodyCoding } from './content-decoding.js';
import { downstreamHeaders } from './headers.js';
import type { UpstreamResponse } from './upstream-client.js';

/**
 * 3xx other than 304. A 304 answers the client's own conditional request (its If-None-Match / If-Modified-Since
 * are forwarded, e.g. on a video download) and carries no Location, so it is relayed like any answer.
 */
function isRedirect(status: number): boolean {
  return status >= 300 && status < 400 && status !== 304;
}

/**
 * The refusal of a redirect. An OpenAI-compatible API never sends a client elsewhere, and the Location (and the
 * body, often "Redirecting to …") would show the client an upstream's URLs. Not followed either: a redirect means a
 * misconfigured baseURL, which should be fixed, not hidden. Passive health counted it as a failure (healthVerdict).
 */
export function redirectRefusal(response: UpstreamResponse, model: string): GatewayError | undefined {
  return isRedirect(response.statusCode) ? errors.upstreamRedirect(model) : undefined;
}

/**
 * An upstream's 401 refuses the credential the gateway sent for that backend, never the client's key (which never
 * goes upstream): passed on, the SDKs would tell the client its own key is wrong (Claude Code asks to log in again).
 */
export function credentialRefusal(response: UpstreamResponse, model: string, backend: string): GatewayError | undefined {
  return response.statusCode === 401 ? errors.upstreamCredentialRefused(model, backend) : undefined;
}

/**
 * The refusal of a body in a coding the gateway cannot decode when something must read it (a stage, the mask, a
 * retelling): relayed raw, it would carry ids unsealed or credentials unmasked.
 */
export function codingRefusal(coding: BodyCoding, model: string, mustRead: boolean): GatewayError | undefined {
  return coding.kind === 'unsupported' && mustRead ? errors.upstreamEncoding(model) : undefined;
}

export interface HeadOptions {
  readonly requestId: string;
  readonly backend: string;
  readonly attempts: number;
  /** The body goes out as it came: its Content-Length holds. */
  readonly keepLength: boolean;
  /** The body is decoded on the way: its Content-Encoding goes. */
  readonly decoded: boolean;
  /** Credential texts to mask in header values. */
  readonly mask: readonly string[];
  readonly gatewayMs: number;
  readonly upstreamMs: number;
  readonly isStream: boolean;
  /** Body bytes that arrived with the upstream's headers. */
  readonly heldBytes: number;
  /** Replaces the upstream's Content-Type (an event stream in the backend's own framing, relayed as SSE). */
  readonly contentType?: string | undefined;
}

export function writeResponseHead(res: Response, response: UpstreamResponse, o: HeadOptions): void {
  const headers = downstreamHeaders(response.headers, { keepLength: o.keepLength, decoded: o.decoded, mask: o.mask });
  if (o.contentType !== undefined) headers['content-type'] = o.contentType;
  headers['x-request-id'] = o.requestId; // named in the head itself, which then goes out as given (request-id.ts)
  headers['x-model-gateway-backend'] = o.backend;
  headers['x-model-gateway-attempts'] = String(o.attempts);
  headers['server-timing'] = serverTiming(o.gatewayMs, o.upstreamMs);
  res.writeHead(response.statusCode, headers);
  // Send the headers now so a streaming client sees the status before the first event, unless that event has
  // already arrived with the headers: then it carries them out in one write (sending the headers alone costs
  // a socket write of its own per stream).
  if (o.isStream && o.heldBytes === 0) res.flushHeaders();
}
