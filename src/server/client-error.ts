// Protocol-level failures never reach express: a request line or header block node cannot parse, headers
// over the size limit, a request that did not arrive within the header/request timeouts. Node answers those
// with a bare status line; this answers them like every other gateway error (OpenAI's JSON shape, an
// x-request-id) and closes the connection, since the byte stream can no longer be trusted.
import { randomUUID } from 'node:crypto';
import type { Duplex } from 'node:stream';
import { GatewayError } from '../http/errors.js';

/** Pure: the error to answer a node client error (by its code) with. */
export function clientErrorFor(code: string | undefined): GatewayError {
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

/**
 * Writes the error to the socket and closes it. `responding` says whether a response on this connection has
 * already started (its bytes are on the wire, so another status line would corrupt it): then only close.
 */
export function answerClientError(err: NodeJS.ErrnoException, socket: Duplex, responding: boolean): void {
  if (err.code === 'ECONNRESET' || err.code === 'EPIPE' || !socket.writable || responding) {
    socket.destroy();
    return;
  }
  const error = clientErrorFor(err.code);
  const body = JSON.stringify(error.toBody());
  const head = [
    `HTTP/1.1 ${error.status} ${STATUS_TEXT[error.status] ?? 'Error'}`,
    `x-request-id: ${randomUUID()}`,
    'content-type: application/json; charset=utf-8',
    `content-length: ${Buffer.byteLength(body)}`,
    'connection: close',
  ];
  socket.end(`${head.join('\r\n')}\r\n\r\n${body}`);
  // end() waits for the peer to read; a peer that never reads must not keep the socket forever.
  setTimeout(() => socket.destroy(), 5_000).unref();
}

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request',
  408: 'Request Timeout',
  413: 'Payload Too Large',
  431: 'Request Header Fields Too Large',
};
