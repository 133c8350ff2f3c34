// Protocol-level failures never reach express: a request line or header block node cannot parse, headers
// over the size limit, a request that did not arrive within the header/request timeouts, an HTTP/1.1 request
// without Host. Node answers those with a bare status line; this answers them like every other gateway error
// (OpenAI's JSON shape, an x-request-id) and closes the connection.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { GatewayError } from '../../model/errors.js';
import { chooseRequestId } from '../request/request-id.js';
import { closeAfterDraining, lingerForUnreadBody } from './lingering-close.js';

/** Pure: the error to answer a node client error (by its code) with. */
function clientErrorFor(code: string | undefined): GatewayError {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return new GatewayError(431, 'The request line and headers are larger than the gateway accepts.', { code: 'request_header_fields_too_large' });
    case 'ERR_HTTP_REQUEST_TIMEOUT':
    case 'HPE_HEADERS_TIMEOUT':
      return new GatewayError(408, 'The request did not arrive in time.', { code: 'request_timeout' });
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return new GatewayError(413, 'The chunked request body has oversized chunk extensions.', { code: 'request_too_large' });
    default:
      return new GatewayError(400, 'The request is not valid HTTP/1.1.', { code: 'invalid_request' });
  }
}

/** The head fields and body of a protocol-level error answer (the connection is closed after it). */
function errorAnswer(error: GatewayError, requestId: string): { headers: Record<string, string>; body: string } {
  const body = JSON.stringify(error.toBody());
  return {
    headers: {
      'x-request-id': requestId,
      'content-type': 'application/json; charset=utf-8',
      'content-length': String(Buffer.byteLength(body)),
      connection: 'close',
    },
    body,
  };
}

/**
 * Writes the error to the socket and closes it, since the byte stream can no longer be trusted. `responding` says
 * whether a response on this connection has already started (its bytes are on the wire, so another status line
 * would corrupt it): then only close.
 */
/** What the server answered on its own, for the access log: the handler never saw the request. */
export interface ProtocolAnswer {
  readonly status: number;
  readonly requestId: string;
}

export function answerClientError(
  err: NodeJS.ErrnoException,
  socket: Duplex,
  responding: boolean,
  requestId: string = randomUUID(),
): ProtocolAnswer | undefined {
  if (err.code === 'ECONNRESET' || err.code === 'EPIPE' || !socket.writable || responding) {
    socket.destroy();
    return undefined;
  }
  const error = clientErrorFor(err.code);
  const { headers, body } = errorAnswer(error, requestId);
  const head = [`HTTP/1.1 ${error.status} ${STATUS_TEXT[error.status] ?? 'Error'}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
  socket.end(`${head.join('\r\n')}\r\n\r\n${body}`);
  // end() waits for the peer to read; a peer that never reads must not keep the socket forever.
  setTimeout(() => socket.destroy(), 5_000).unref();
  return { status: error.status, requestId };
}

/**
 * RFC 9112 §3.2: an HTTP/1.1 request without Host must be refused with 400. The server lets node pass such
 * requests on (requireHostHeader: false) so that they are refused here, in the gateway's shape.
 */
export function lacksHost(req: IncomingMessage): boolean {
  return req.httpVersionMajor === 1 && req.httpVersionMinor === 1 && req.headers.host === undefined;
}

const MISSING_HOST = new GatewayError(400, 'HTTP/1.1 requests must carry a Host header.', { code: 'invalid_request' });

export function answerMissingHost(req: IncomingMessage, res: ServerResponse): ProtocolAnswer {
  if (lingerForUnreadBody(req)) closeAfterDraining(req, res);
  const requestId = chooseRequestId(req.headers['x-request-id']);
  const { headers, body } = errorAnswer(MISSING_HOST, requestId);
  res.writeHead(MISSING_HOST.status, headers).end(body);
  return { status: MISSING_HOST.status, requestId };
}

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request',
  408: 'Request Timeout',
  413: 'Payload Too Large',
  431: 'Request Header Fields Too Large',
};
