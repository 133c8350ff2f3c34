// TLS to an upstream: a certificate no trusted CA signed is refused, the client told the upstream could not be
// reached and the operator's access line saying why; trusting its CA (NODE_EXTRA_CA_CERTS in production, the
// process's default CAs here) lets the same backend serve. Failing over past it, the access line names every attempt
// that failed and why.
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ProviderUpstream, startProviderUpstream } from '../fakes/provider-upstream.js';
import { deadBaseURL, type TestGateway } from '../helpers/gateway.js';
import { selfSignedCert, type TestCert, trustCert } from '../support/tls-cert.js';
import { waitUntil } from '../support/wait.js';
import { caught, chat, gatewayWith, route } from './harness.js';

let cert: TestCert;
let server: Server;
let gw: TestGateway;
let good: ProviderUpstream;
let busy: ProviderUpstream;

beforeAll(async () => {
  cert = selfSignedCert(['127.0.0.1']);
  server = createServer({ key: cert.key, cert: cert.cert }, (_req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end(
      JSON.stringify({
        id: 'c',
        object: 'chat.completion',
        created: 0,
        model: 'm',
        choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: 'over tls' } }],
      }),
    );
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const baseURL = `https://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  good = await startProviderUpstream(() => undefined);
  busy = await startProviderUpstream(() => 'overloaded', 503);
  const dead = { name: 'dead', baseURL: await deadBaseURL(), priority: 0 };
  const tls = { name: 'tls', baseURL, priority: 1 };
  const busyBackend = { name: 'busy', baseURL: `${busy.origin}/v1`, priority: 2 };
  const goodBackend = { name: 'good', baseURL: `${good.origin}/v1`, priority: 3 };
  gw = await gatewayWith([
    route('extra-tls', [{ name: 'tls', baseURL }]),
    route('extra-failover', [dead, tls, goodBackend], { retry: { attempts: 3 } }),
    route('extra-failover-5xx', [dead, tls, busyBackend, goodBackend], { retry: { attempts: 4 } }),
    route('extra-good', [goodBackend]),
  ]);
});
afterAll(async () => {
  await gw?.close();
  server?.close();
  await good?.close();
  await busy?.close();
});

describe('upstreamError on the access line: every attempt that was not the answer, in order', () => {
  it('a refused connection and a bad certificate, then a backend that answers', async () => {
    const { data, response } = await chat(gw.client(), 'extra-failover');
    expect(data.choices[0]?.message.content).toBe('Hello there');
    expect(response.headers.get('x-model-gateway-attempts')).toBe('3');
    const line = await gw.record(response.headers.get('x-request-id'));
    expect(line.upstreamError).toEqual(['dead:ECONNREFUSED', 'tls:DEPTH_ZERO_SELF_SIGNED_CERT']);
    expect(line.backend).toBe('good');
  });

  it('a status that failed over is named too', async () => {
    const { response } = await chat(gw.client(), 'extra-failover-5xx');
    const line = await gw.record(response.headers.get('x-request-id'));
    expect(line.upstreamError).toEqual(['dead:ECONNREFUSED', 'tls:DEPTH_ZERO_SELF_SIGNED_CERT', 'busy:503']);
  });

  it('is absent when the first attempt answered', async () => {
    const { response } = await chat(gw.client(), 'extra-good');
    const line = await gw.record(response.headers.get('x-request-id'));
    expect(line).not.toHaveProperty('upstreamError');
    expect(line.attempts).toBe(1);
  });
});

describe('an upstream with a self-signed certificate', () => {
  it('is refused: 502 upstream_unreachable, and the access line names the certificate error', async () => {
    const e = await caught(chat(gw.client(), 'extra-tls'));
    expect(e.status).toBe(502);
    expect(e.code).toBe('upstream_unreachable');
    const line = await waitUntil(() => gw.logs.find((l) => l.msg === 'request' && l.model === 'extra-tls'), 3_000, 'the access line');
    expect(line.upstreamError).toEqual(['tls:DEPTH_ZERO_SELF_SIGNED_CERT']);
  });

  it('serves once its certificate is trusted', async () => {
    const untrust = trustCert(cert.cert);
    try {
      // New connections read the default CAs when they are made: nothing of the refused attempt is reused.
      const { data } = await chat(gw.client(), 'extra-tls');
      expect(data.choices[0]?.message.content).toBe('over tls');
    } finally {
      untrust();
    }
  });
});
