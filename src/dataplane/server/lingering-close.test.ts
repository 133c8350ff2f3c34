import { createServer, type IncomingMessage, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { closeAfterDraining, lingerForUnreadBody, type LingerBounds } from './lingering-close.js';

const BOUNDS: LingerBounds = { totalMs: 1_500, idleMs: 300, maxBytes: 1024 * 1024 };

let server: Server | undefined;
const clients: Socket[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) c.destroy();
  server?.closeAllConnections();
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  server = undefined;
});

/** Server side of the (one) refused connection: ms from the answer being written to the socket's close. */
let lingered: Promise<number>;

/** A server that refuses every request on its headers (413) with a lingering close. */
async function refusing(): Promise<number> {
  let closedAfter!: (ms: number) => void;
  lingered = new Promise((resolve) => (closedAfter = resolve));
  server = createServer((req, res) => {
    closeAfterDraining(req, res, BOUNDS);
    res.once('finish', () => {
      const at = Date.now();
      req.socket.once('close', () => closedAfter(Date.now() - at));
    });
    res.writeHead(413, { 'content-type': 'text/plain' }).end('too large');
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  return (server.address() as AddressInfo).port;
}

interface Client {
  readonly socket: Socket;
  /** Resolves with what the client received once the server closed (ms from the answer to the server's close). */
  readonly closed: Promise<{ afterAnswerMs: number; text: string }>;
}

function client(port: number, declared: number): Client {
  // Half-open allowed: a node socket would otherwise end its own side on the server's FIN, closing for the server.
  const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true });
  socket.on('error', () => undefined);
  clients.push(socket);
  let text = '';
  socket.on('data', (d: Buffer) => (text += d.toString('latin1')));
  const closed = lingered.then((afterAnswerMs) => ({ afterAnswerMs, text }));
  socket.write(`POST / HTTP/1.1\r\nHost: x\r\nContent-Length: ${declared}\r\n\r\n`);
  return { socket, closed };
}

describe('closeAfterDraining', () => {
  it('answers with Connection: close, then closes as soon as the body is in', async () => {
    const c = client(await refusing(), 200_000);
    c.socket.write(Buffer.alloc(200_000, 0x20));
    const { afterAnswerMs, text } = await c.closed;
    expect(text).toMatch(/^HTTP\/1\.1 413 /);
    expect(text.toLowerCase()).toContain('connection: close');
    expect(afterAnswerMs).toBeLessThan(BOUNDS.idleMs);
  });

  it('a client that goes quiet mid-body is cut after the idle bound', async () => {
    const c = client(await refusing(), 10_000_000);
    c.socket.write(Buffer.alloc(1_000, 0x20));
    const { afterAnswerMs, text } = await c.closed;
    expect(text).toMatch(/^HTTP\/1\.1 413 /);
    expect(afterAnswerMs).toBeGreaterThanOrEqual(BOUNDS.idleMs - 50);
    expect(afterAnswerMs).toBeLessThan(BOUNDS.totalMs);
  });

  it('a client that trickles is cut after the total bound', async () => {
    const c = client(await refusing(), 10_000_000);
    const trickle = setInterval(() => c.socket.write(' '), BOUNDS.idleMs / 4);
    try {
      const { afterAnswerMs } = await c.closed;
      expect(afterAnswerMs).toBeGreaterThanOrEqual(BOUNDS.totalMs - 50);
      expect(afterAnswerMs).toBeLessThan(BOUNDS.totalMs + 1_000);
    } finally {
      clearInterval(trickle);
    }
  });

  it('a client that keeps sending is cut after the byte bound', async () => {
    const c = client(await refusing(), 1_000_000_000);
    let sent = 0;
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    const pump = () => {
      while (!c.socket.destroyed && sent < 1_000_000_000) {
        sent += chunk.length;
        if (!c.socket.write(chunk)) return void c.socket.once('drain', pump);
      }
    };
    pump();
    const { afterAnswerMs, text } = await c.closed;
    expect(text).toMatch(/^HTTP\/1\.1 413 /);
    expect(afterAnswerMs).toBeLessThan(BOUNDS.totalMs);
    // Socket buffers on both sides hold a few MB beyond what the server read.
    expect(sent).toBeLessThan(BOUNDS.maxBytes + 16 * 1024 * 1024);
  });
});

describe('lingerForUnreadBody', () => {
  const req = (headers: Record<string, string>, complete = false) => ({ headers, complete }) as unknown as IncomingMessage;

  it.each([
    [{}, false],
    [{ 'content-length': '100' }, false],
    [{ 'content-length': String(64 * 1024) }, false],
    [{ 'content-length': String(64 * 1024 + 1) }, true],
    [{ 'content-length': 'junk' }, true],
    [{ 'transfer-encoding': 'chunked' }, true],
  ])('%j → %s', (headers, expected) => {
    expect(lingerForUnreadBody(req(headers))).toBe(expected);
  });

  it('a body already complete needs no lingering, whatever its size', () => {
    expect(lingerForUnreadBody(req({ 'content-length': '99999999' }, true))).toBe(false);
  });
});
