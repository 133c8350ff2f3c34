// The OTLP transport's retries stay within the export's timeout (OTEL_EXPORTER_OTLP_TIMEOUT), as the SDK's own do:
// against a collector that refuses connections or keeps answering 503, an export ends at its timeout, not after
// undici's whole backoff (about 13 s).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { undiciTransport } from './otlp-transport.js';

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((r) => (server ? server.close(r) : r(undefined)));
  server = undefined;
});

async function collector(status: number): Promise<{ url: string; hits: () => number }> {
  let hits = 0;
  server = createServer((req, res) => {
    hits++;
    req.resume();
    req.on('end', () => res.writeHead(status).end());
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', () => r()));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`, hits: () => hits };
}

/** A loopback port nothing listens on: a server is started and closed again. */
async function refusedURL(): Promise<string> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const { port } = s.address() as AddressInfo;
  await new Promise((r) => s.close(r));
  return `http://127.0.0.1:${port}/v1/traces`;
}

const transport = (url: string) => undiciTransport({ url, headers: async () => ({}), compression: 'none', userAgent: 'test', tls: {} });

describe('undiciTransport', () => {
  it('gives up on a collector that refuses connections at the export timeout', async () => {
    const t = transport(await refusedURL());
    const started = performance.now();
    const result = await t.send(new Uint8Array([1]), 500);
    expect(result.status).toBe('retryable');
    expect(performance.now() - started).toBeLessThan(2_000);
    t.shutdown();
  });

  it('gives up on a collector that keeps answering 503 at the export timeout, after retrying', async () => {
    const c = await collector(503);
    const t = transport(c.url);
    const started = performance.now();
    const result = await t.send(new Uint8Array([1]), 1_500);
    expect(result.status).toBe('retryable');
    expect(performance.now() - started).toBeLessThan(3_000);
    expect(c.hits()).toBeGreaterThanOrEqual(2); // it did retry (1 s after the first)
    t.shutdown();
  });

  it('returns a collector’s answer', async () => {
    const c = await collector(200);
    const t = transport(c.url);
    expect((await t.send(new Uint8Array([1]), 1_000)).status).toBe('success');
    t.shutdown();
  });
});
