import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { describe, expect, it } from 'vitest';
import { exchangeOf } from '../exchange/exchange.js';
import { chooseRequestId, idOnEveryHead, requestId } from './request-id.js';

describe('chooseRequestId', () => {
  it('keeps a sane id', () => {
    expect(chooseRequestId('abc-123_x.y:z')).toBe('abc-123_x.y:z');
    expect(chooseRequestId('a'.repeat(128))).toBe('a'.repeat(128));
  });
  it.each([[undefined], [''], ['a'.repeat(129)], ['with space'], ['new\nline'], [['a', 'b']]])('mints one for %j', (incoming) => {
    expect(chooseRequestId(incoming as string | string[] | undefined)).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });
});

describe('idOnEveryHead', () => {
  const FIXED = Object.freeze({ 'content-type': 'text/event-stream' });

  /** An app answering each path a different way, as the gateway's paths do. */
  async function serve() {
    const app = express();
    idOnEveryHead(app.response);
    app.use(requestId);
    app.get('/send', (_req, res) => void res.status(404).json({ error: 'x' }));
    app.get('/object-with-id', (_req, res) => void res.writeHead(200, { 'x-request-id': exchangeOf(res).id, a: '1' }).end());
    app.get('/shared-object', (_req, res) => void res.writeHead(200, FIXED).end());
    app.get('/array', (_req, res) => void res.writeHead(200, 'Fine', ['a', '1', 'b', '2']).end());
    app.get('/implicit', (_req, res) => {
      res.write('x');
      res.end();
    });
    const server = app.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
  }

  it('puts the exchange id on the head of every kind of answer, once, without touching a shared headers object', async () => {
    const { server, origin } = await serve();
    try {
      for (const path of ['/send', '/object-with-id', '/shared-object', '/array', '/implicit']) {
        const r = await fetch(`${origin}${path}`, { headers: { 'x-request-id': `id-${path.slice(1)}` } });
        await r.arrayBuffer();
        // fetch joins repeated headers with ", ": a second copy would show.
        expect(r.headers.get('x-request-id'), path).toBe(`id-${path.slice(1)}`);
      }
      const fresh = await fetch(`${origin}/array`);
      expect(fresh.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
      expect(fresh.headers.get('b')).toBe('2');
      expect(FIXED).toEqual({ 'content-type': 'text/event-stream' });
    } finally {
      server.close();
    }
  });
});
