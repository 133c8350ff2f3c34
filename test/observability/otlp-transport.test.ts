// The exporter's transport against loopback collectors that answer as told: what it sends (path, headers, body,
// gzip), and how it reads each kind of answer (success, retryable with retry-after, failure, refused connection,
// silence past the timeout, an answer too large, a certificate it does not trust).
import { afterEach, describe, expect, it } from 'vitest';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { OTLPExporterError } from '@opentelemetry/otlp-exporter-base';
import { OtlpTransport, type OtlpTransportOptions, retryAfterMillis } from '../../src/features/tracing/otlp-transport.js';
import { selfSignedCert } from '../support/tls-cert.js';

interface Received {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingMessage['headers'];
  readonly rawHeaders: readonly string[];
  readonly body: Buffer;
}

let server: Server | undefined;
let transport: OtlpTransport | undefined;

afterEach(async () => {
  transport?.shutdown();
  server?.closeAllConnections();
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  server = undefined;
  transport = undefined;
});

async function collector(answer: (res: ServerResponse) => void, tls?: { key: string; cert: string }): Promise<{ url: string; received: Received[] }> {
  const received: Received[] = [];
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    received.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, rawHeaders: req.rawHeaders, body: Buffer.concat(chunks) });
    answer(res);
  };
  server = tls ? createTlsServer(tls, handle) : createServer(handle);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as AddressInfo).port;
  return { url: `${tls ? 'https' : 'http'}://127.0.0.1:${port}/v1/traces`, received };
}

function transportTo(url: string, o: Partial<OtlpTransportOptions> = {}): OtlpTransport {
  transport = new OtlpTransport({
    url,
    headers: async () => ({ 'Content-Type': 'application/x-protobuf', 'x-tenant': 'team-a' }),
    compression: 'none',
    tls: {},
    userAgent: 'model-gateway/test',
    ...o,
  });
  return transport;
}

const DATA = new Uint8Array(Buffer.from('a batch of spans, encoded'.repeat(100)));

describe('OtlpTransport', () => {
  it("POSTs the batch to the collector's path with the exporter's headers, and reads a success with its body", async () => {
    const c = await collector((res) => res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end(Buffer.from([1, 2, 3])));
    const r = await transportTo(c.url).send(DATA, 5_000);
    expect(r).toEqual({ status: 'success', data: Buffer.from([1, 2, 3]) });
    expect(c.received).toHaveLength(1);
    const [got] = c.received;
    expect(got).toMatchObject({ method: 'POST', url: '/v1/traces' });
    expect(got!.headers).toMatchObject({ 'content-type': 'application/x-protobuf', 'x-tenant': 'team-a', 'user-agent': 'model-gateway/test' });
    expect(got!.headers['content-encoding']).toBeUndefined();
    expect(Buffer.compare(got!.body, Buffer.from(DATA))).toBe(0);
  });

  it('keeps a User-Agent the user set among the headers, and sends one only', async () => {
    const c = await collector((res) => res.writeHead(200).end());
    const headers = async () => ({ 'Content-Type': 'application/x-protobuf', 'User-Agent': 'my-agent/1' });
    expect((await transportTo(c.url, { headers }).send(DATA, 5_000)).status).toBe('success');
    const agents = c.received[0]!.rawHeaders.filter((_, i, raw) => i % 2 === 1 && raw[i - 1]!.toLowerCase() === 'user-agent');
    expect(agents).toEqual(['my-agent/1']);
  });

  it('gzips the body with OTEL_EXPORTER_OTLP_COMPRESSION=gzip, and says so', async () => {
    const c = await collector((res) => res.writeHead(200).end());
    expect((await transportTo(c.url, { compression: 'gzip' }).send(DATA, 5_000)).status).toBe('success');
    const [got] = c.received;
    expect(got!.headers['content-encoding']).toBe('gzip');
    expect(got!.body.length).toBeLessThan(DATA.length);
    expect(Buffer.compare(gunzipSync(got!.body), Buffer.from(DATA))).toBe(0);
  });

  it("reads 429, 502, 503 and 504 as retryable, after the collector's retry-after when it gives one", async () => {
    for (const [status, retryAfter, expected] of [
      [503, '2', 2000],
      [429, undefined, undefined],
      [502, '0', 0],
      [504, undefined, undefined],
    ] as const) {
      const c = await collector((res) => res.writeHead(status, retryAfter === undefined ? {} : { 'retry-after': retryAfter }).end('busy'));
      expect(await transportTo(c.url).send(DATA, 5_000)).toEqual({ status: 'retryable', retryInMillis: expected });
      transport?.shutdown();
      await new Promise<void>((r) => server!.close(() => r()));
    }
    server = undefined;
  });

  it("reads any other status as a failure that carries the collector's status and message", async () => {
    const c = await collector((res) => res.writeHead(400, 'Bad Request', { 'content-type': 'application/json' }).end('{"code":3,"message":"bad span"}'));
    const r = await transportTo(c.url).send(DATA, 5_000);
    expect(r.status).toBe('failure');
    const error = (r as { error: OTLPExporterError }).error;
    expect(error).toBeInstanceOf(OTLPExporterError);
    expect(error).toMatchObject({ code: 400, message: 'Bad Request', data: '{"code":3,"message":"bad span"}' });
  });

  it('reads a refused connection as retryable', async () => {
    const c = await collector(() => {});
    await new Promise<void>((r) => server!.close(() => r()));
    server = undefined;
    const r = await transportTo(c.url).send(DATA, 5_000);
    expect(r).toMatchObject({ status: 'retryable', error: { code: 'ECONNREFUSED' } });
  });

  it('gives up on a collector silent past the timeout (retryable) and closes the connection', async () => {
    const c = await collector(() => {}); // never answers
    const closed = new Promise<void>((resolve) => server!.on('connection', (socket) => socket.on('close', () => resolve())));
    const started = Date.now();
    const r = await transportTo(c.url).send(DATA, 300);
    expect(r).toMatchObject({ status: 'retryable', error: { message: 'Request timed out' } });
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    await closed;
  });

  it('fails an answer over 4 MiB without reading the rest', async () => {
    const c = await collector((res) => {
      res.writeHead(200);
      res.write(Buffer.alloc(5 * 1024 * 1024));
    }); // never ends: the transport must stop reading on its own
    const r = await transportTo(c.url).send(DATA, 10_000);
    expect(r).toMatchObject({ status: 'failure', error: { message: expect.stringMatching(/exceeded size limit of 4194304 bytes/) } });
  });

  it('trusts an https collector only through the CA it is given (OTEL_EXPORTER_OTLP_CERTIFICATE)', async () => {
    const cert = selfSignedCert(['127.0.0.1']);
    const c = await collector((res) => res.writeHead(200).end(), cert);
    const untrusted = await transportTo(c.url).send(DATA, 5_000);
    expect(untrusted.status).toBe('failure');
    transport?.shutdown();
    const trusted = await transportTo(c.url, { tls: { ca: Buffer.from(cert.cert) } }).send(DATA, 5_000);
    expect(trusted.status).toBe('success');
  });
});

describe('retryAfterMillis', () => {
  it('reads seconds or an HTTP date; anything else leaves the delay to the backoff', () => {
    const now = Date.parse('2026-11-27T10:00:00Z');
    expect(retryAfterMillis('3', now)).toBe(3000);
    expect(retryAfterMillis('0', now)).toBe(0);
    expect(retryAfterMillis('Fri, 27 Nov 2026 10:00:05 GMT', now)).toBe(5000);
    expect(retryAfterMillis('Fri, 27 Nov 2026 09:00:00 GMT', now)).toBe(0);
    expect(retryAfterMillis('soon', now)).toBeUndefined();
    expect(retryAfterMillis(undefined, now)).toBeUndefined();
  });
});
