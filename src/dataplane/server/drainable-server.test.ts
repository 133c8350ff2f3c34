import { IncomingMessage, request, ServerResponse } from 'node:http';
import { connect } from 'node:net';
import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { waitUntil } from '../../../test/support/wait.js';
import { listenDrainable, type DrainableServer } from './drainable-server.js';

/** An SSE handler that sends `count` events `gapMs` apart, then ends. */
function sseHandler(count: number, gapMs: number) {
  return (_req: IncomingMessage, res: ServerResponse) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    let sent = 0;
    const timer = setInterval(() => {
      res.write(`data: ${sent++}\n\n`);
      if (sent === count) {
        clearInterval(timer);
        res.end();
      }
    }, gapMs);
    res.on('close', () => clearInterval(timer));
  };
}

/** Starts a GET and resolves once the first body bytes arrive; `done` settles with the whole body or the error. */
function openStream(url: string): Promise<{ done: Promise<string>; response: IncomingMessage }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent: false }, (response) => {
      let body = '';
      const done = new Promise<string>((ok, fail) => {
        response.on('data', (d: Buffer) => (body += d.toString()));
        response.on('end', () => ok(body));
        response.on('error', fail);
        response.on('aborted', () => fail(new Error('aborted')));
      });
      done.catch(() => undefined);
      response.once('data', () => resolve({ done, response }));
    });
    req.on('error', reject);
    req.end();
  });
}

function connectionRefused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      resolve(false);
    });
    s.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED'));
  });
}

describe('listenDrainable', () => {
  let server: DrainableServer | undefined;
  afterEach(async () => {
    await server?.drain(0);
    server = undefined;
  });

  it('lets an in-flight stream finish while refusing new connections', async () => {
    server = await listenDrainable(sseHandler(6, 80), { host: '127.0.0.1', port: 0 });
    expect(server.received()).toBe(0);
    const { done } = await openStream(server.url);
    expect(server.inFlight()).toBe(1);
    expect(server.received()).toBe(1);
    const started = Date.now();
    const drained = server.drain(5_000);
    expect(await connectionRefused(server.address.port)).toBe(true);
    const body = await done;
    expect(body.match(/^data: \d+$/gm)).toHaveLength(6); // every event arrived, none was cut
    expect(server.received()).toBe(1); // a running count: the finished request stays counted
    expect(await drained).toEqual({ completed: true, cut: 0 });
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('cuts what is still running at the deadline', async () => {
    server = await listenDrainable(sseHandler(1000, 50), { host: '127.0.0.1', port: 0 });
    const { done } = await openStream(server.url);
    const started = Date.now();
    expect(await server.drain(200)).toEqual({ completed: false, cut: 1 });
    expect(Date.now() - started).toBeLessThan(1_000);
    await expect(done).rejects.toThrow();
  });

  it('at the deadline, lets the application end what is still running before anything is cut', async () => {
    let end: (() => void) | undefined;
    server = await listenDrainable(
      (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' }).write('data: 0\n\n');
        end = () => res.end('event: error\ndata: {}\n\n');
      },
      { host: '127.0.0.1', port: 0 },
    );
    const { done } = await openStream(server.url);
    const started = Date.now();
    expect(await server.drain(200, () => end?.())).toEqual({ completed: false, cut: 1 });
    expect(Date.now() - started).toBeLessThan(1_000); // it did not wait out the grace: the response was done
    expect(await done).toBe('data: 0\n\nevent: error\ndata: {}\n\n');
  });

  it('… and cuts what that does not end within the grace', async () => {
    server = await listenDrainable(sseHandler(1000, 50), { host: '127.0.0.1', port: 0 });
    const { done } = await openStream(server.url);
    let called = 0;
    expect(await server.drain(200, () => called++)).toEqual({ completed: false, cut: 1 });
    expect(called).toBe(1);
    await expect(done).rejects.toThrow();
  });

  it('closes idle keep-alive connections at once instead of waiting for their timeout', async () => {
    server = await listenDrainable((_req, res) => res.end('ok'), { host: '127.0.0.1', port: 0 });
    const socket = connect(server.address.port, '127.0.0.1');
    await new Promise((r) => socket.once('connect', r));
    socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    await new Promise((r) => socket.once('data', r)); // the response arrived; the socket is now idle, kept alive
    const closed = new Promise((r) => socket.once('close', r));
    const started = Date.now();
    expect(await server.drain(10_000)).toEqual({ completed: true, cut: 0 });
    await closed;
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it('asks clients to close a keep-alive connection whose response had not begun when the drain started', async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => (release = r));
    server = await listenDrainable((_req, res) => void gate.then(() => res.end('slow')), { host: '127.0.0.1', port: 0 });
    const socket = connect(server.address.port, '127.0.0.1');
    await new Promise((r) => socket.once('connect', r));
    let received = '';
    socket.on('data', (d: Buffer) => (received += d.toString()));
    socket.write('GET /slow HTTP/1.1\r\nHost: x\r\n\r\n');
    await waitUntil(() => server!.inFlight() === 1, 5_000, '/slow to arrive');
    const drained = server.drain(5_000);
    release();
    await new Promise((r) => socket.once('close', r));
    expect(await drained).toEqual({ completed: true, cut: 0 });
    expect(received.toLowerCase()).toContain('connection: close');
    expect(received).toContain('slow');
  });

  it('asks clients to close a keep-alive connection when a request arrives during the drain', async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => (release = r));
    server = await listenDrainable(
      (req, res) => {
        if (req.url === '/slow') void gate.then(() => res.end('slow'));
        else res.end('fast');
      },
      { host: '127.0.0.1', port: 0 },
    );
    // One keep-alive socket: start /slow, drain, then pipeline /fast behind it on the same connection.
    const socket = connect(server.address.port, '127.0.0.1');
    await new Promise((r) => socket.once('connect', r));
    let received = '';
    socket.on('data', (d: Buffer) => (received += d.toString()));
    socket.write('GET /slow HTTP/1.1\r\nHost: x\r\n\r\n');
    await waitUntil(() => server!.inFlight() === 1, 5_000, '/slow to arrive');
    const drained = server.drain(5_000);
    socket.write('GET /fast HTTP/1.1\r\nHost: x\r\n\r\n');
    // Node parses a pipelined request at once and queues its response behind the one in flight.
    await waitUntil(() => server!.inFlight() === 2, 5_000, '/fast to arrive behind /slow');
    release();
    await new Promise((r) => socket.once('close', r));
    expect(await drained).toEqual({ completed: true, cut: 0 });
    expect(received).toContain('slow');
    expect(received).toContain('fast');
    expect(received.toLowerCase()).toContain('connection: close');
  });

  it('creates requests and responses with the prototypes given, so express has none to change', async () => {
    const app = express();
    let inExpress: { req: object; res: object; host: string | undefined } | undefined;
    app.get('/', (req, res) => {
      inExpress = { req: Object.getPrototypeOf(req) as object, res: Object.getPrototypeOf(res) as object, host: req.get('host') };
      res.json({ ok: true });
    });
    const before: { req: object; res: object; instances: boolean; highWaterMark: boolean }[] = [];
    server = await listenDrainable(
      (req, res) => {
        before.push({
          req: Object.getPrototypeOf(req) as object,
          res: Object.getPrototypeOf(res) as object,
          instances: req instanceof IncomingMessage && res instanceof ServerResponse,
          // node's options (its second constructor argument) reached the response
          highWaterMark: res.writableHighWaterMark === req.socket.writableHighWaterMark,
        });
        app(req, res);
      },
      { host: '127.0.0.1', port: 0, prototypes: { request: app.request, response: app.response } },
    );
    for (let i = 0; i < 2; i++) {
      const r = await fetch(server.url);
      expect(await r.json()).toEqual({ ok: true });
    }
    expect(before).toEqual([
      { req: app.request, res: app.response, instances: true, highWaterMark: true },
      { req: app.request, res: app.response, instances: true, highWaterMark: true },
    ]);
    expect(inExpress).toEqual({ req: app.request, res: app.response, host: server.url.slice('http://'.length) });
  });

  it('refuses prototypes that do not inherit from node:http', async () => {
    await expect(
      listenDrainable(() => undefined, { host: '127.0.0.1', port: 0, prototypes: { request: {} as IncomingMessage, response: {} as ServerResponse } }),
    ).rejects.toThrow(/prototypes must inherit/);
  });
});
