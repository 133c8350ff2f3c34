import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_TIMEOUTS, type CompiledBackend } from '../../model/routing-table.js';
import { AttemptAbort } from './attempt-abort.js';
import { UpstreamClient } from './upstream-client.js';

const servers: Server[] = [];
const sockets = new Map<string, number>();
let origins: string[] = [];

beforeAll(async () => {
  for (let i = 0; i < 2; i++) {
    const srv = createServer((req, res) => res.end(`hello from ${i} ${req.url}`));
    srv.on('connection', () => sockets.set(String(i), (sockets.get(String(i)) ?? 0) + 1));
    srv.listen(0, '127.0.0.1');
    await once(srv, 'listening');
    servers.push(srv);
  }
  origins = servers.map((s) => `http://127.0.0.1:${(s.address() as AddressInfo).port}`);
});
afterAll(async () => {
  for (const s of servers) {
    s.closeAllConnections();
    s.close();
  }
});

const backend = (origin: string): CompiledBackend => ({
  id: 'ns/r/b',
  name: 'b',
  baseURL: `${origin}/v1`,
  origin,
  basePath: '/v1',
  auth: { kind: 'none' },
  headers: [],
  query: [],
  pathStyle: 'openai',
  api: 'openai',
  account: 'a',
  model: 'm',
  priority: 0,
  weight: 1,
  limits: [],
});

async function get(client: UpstreamClient, origin: string): Promise<string> {
  const res = await client.request({ backend: backend(origin), method: 'GET', path: '/v1/x', headers: {}, body: null, connectMs: DEFAULT_TIMEOUTS.connectMs });
  return res.body
    .readable()
    .setEncoding('utf8')
    .toArray()
    .then((parts) => parts.join(''));
}

function request(client: UpstreamClient, origin: string, signal?: AttemptAbort) {
  return client.request({ backend: backend(origin), method: 'GET', path: '/v1/x', headers: {}, body: null, connectMs: DEFAULT_TIMEOUTS.connectMs, signal });
}

describe('UpstreamClient', () => {
  it('keeps one keep-alive pool per origin and reuses its connections', async () => {
    const client = new UpstreamClient();
    // Connections the server saw before this test (other tests use the same servers, in any order).
    const before = sockets.get('0') ?? 0;
    try {
      for (let i = 0; i < 10; i++) expect(await get(client, origins[0]!)).toBe('hello from 0 /v1/x');
      expect(await get(client, origins[1]!)).toBe('hello from 1 /v1/x');
      expect(client.poolCount).toBe(2);
      // Ten sequential requests reuse kept-alive sockets (undici may open a second one while the first is
      // still being released, hence "at most 2", not "exactly 1").
      expect(sockets.get('0')! - before).toBeLessThanOrEqual(2);
    } finally {
      await client.destroy();
    }
  });

  it('drops pools of origins no longer in use', async () => {
    const client = new UpstreamClient();
    try {
      await get(client, origins[0]!);
      await get(client, origins[1]!);
      await client.retainOrigins(new Set([origins[1]!]));
      expect(client.poolCount).toBe(1);
      expect(await get(client, origins[1]!)).toBe('hello from 1 /v1/x');
    } finally {
      await client.close();
    }
    await expect(get(client, origins[1]!)).rejects.toThrow(/closed/);
  });
  it('aborts by its signal: before the answer the request rejects with the reason, after it the body fails with it', async () => {
    const client = new UpstreamClient();
    try {
      const early = new AttemptAbort();
      early.abort(new Error('gone before'));
      await expect(request(client, origins[0]!, early)).rejects.toThrow('gone before');

      // An upstream that sends its headers and a first chunk, then holds the rest.
      const holding = createServer((_req, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write('data: 1\n\n');
      });
      holding.listen(0, '127.0.0.1');
      await once(holding, 'listening');
      try {
        const late = new AttemptAbort();
        const res = await request(client, `http://127.0.0.1:${(holding.address() as AddressInfo).port}`, late);
        expect(res.statusCode).toBe(200);
        const stream = res.body.readable();
        const chunks: string[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c.toString()));
        const failed = new Promise<Error>((r) => stream.once('error', r));
        while (chunks.length === 0) await new Promise((r) => setImmediate(r));
        late.abort(new Error('gone after'));
        expect((await failed).message).toBe('gone after');
        expect(chunks).toEqual(['data: 1\n\n']);
      } finally {
        holding.closeAllConnections();
        holding.close();
      }
      expect(await get(client, origins[0]!)).toBe('hello from 0 /v1/x'); // the pool goes on serving
    } finally {
      await client.destroy();
    }
  });
});
