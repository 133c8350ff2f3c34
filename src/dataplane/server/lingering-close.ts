// Closing a connection whose request body was not read (an early refusal: 413, 415, 503 body budget, …). Closed
// at once while the client is still sending, the kernel answers its next bytes with a reset, and a client that
// reads only after sending (raw sockets; node:http under load) loses the answer to EPIPE/ECONNRESET. So, as
// nginx and Apache do (a lingering close): answer with `Connection: close`, half-close once the answer is
// written, keep reading and discarding what the client still sends, and close when its body is complete, when
// it goes quiet, or after a bounded time and amount.
import type { IncomingMessage, ServerResponse } from 'node:http';

export interface LingerBounds {
  /** Longest the connection stays open after the answer was written. */
  readonly totalMs: number;
  /** Longest silence from the client while lingering (Apache: 2 s). */
  readonly idleMs: number;
  /** Most body bytes read and discarded after the refusal. */
  readonly maxBytes: number;
}

export const DEFAULT_LINGER: LingerBounds = { totalMs: 30_000, idleMs: 2_000, maxBytes: 16 * 1024 * 1024 };

/** Unread bodies up to this size are left to node, which reads and drops them and keeps the connection. */
const SMALL_UNREAD_BODY = 64 * 1024;

/**
 * Whether answering now needs a lingering close: the body has not fully arrived and may be large (declared over
 * SMALL_UNREAD_BODY, or chunked). `req.complete` alone cannot tell: a refusal made on the headers is answered
 * before node parses a body that came in the same packet.
 */
export function lingerForUnreadBody(req: IncomingMessage): boolean {
  if (req.complete) return false;
  const declared = req.headers['content-length'];
  return declared === undefined ? req.headers['transfer-encoding'] !== undefined : !(Number(declared) <= SMALL_UNREAD_BODY);
}

/**
 * Call before answering a request whose body has not been read to its end: the answer says `Connection: close`,
 * and the connection is closed in stages once it is written.
 */
export function closeAfterDraining(req: IncomingMessage, res: ServerResponse, bounds: LingerBounds = DEFAULT_LINGER): void {
  res.setHeader('connection', 'close');
  const socket = req.socket;
  const cut = () => socket.destroy();
  let drained = 0;
  let idle: NodeJS.Timeout | undefined;
  // Reading on: the body is discarded here (the refusal already dropped any reader), and counted.
  req.on('data', (chunk: Buffer) => {
    drained += chunk.length;
    if (drained > bounds.maxBytes) cut();
    else idle?.refresh();
  });
  req.resume();
  // node ends a `Connection: close` answer with socket.destroySoon(): FIN, then destroy as soon as the FIN is
  // written, whatever the client is still sending. For this connection the close is staged instead.
  socket.destroySoon = () => {
    socket.end();
    const total = setTimeout(cut, bounds.totalMs);
    idle = setTimeout(cut, bounds.idleMs);
    // Once the body is in and the answer (and FIN) written, nothing is lost by closing.
    const closeWhenDone = () => {
      if (req.complete && socket.writableFinished) cut();
    };
    req.once('end', closeWhenDone);
    socket.once('finish', closeWhenDone);
    socket.once('close', () => {
      clearTimeout(total);
      clearTimeout(idle);
    });
    closeWhenDone();
  };
}
