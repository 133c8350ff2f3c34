// TLS to an upstream: a certificate no trusted CA signed is refused, the client told the upstream could not be
// reached and the operator's access line saying why; trusting its CA (NODE_EXTRA_CA_CERTS in production, the
// process's default CAs here) lets the same backend serve.
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestGateway } from '../helpers/gateway.js';
import { selfSignedCert, type TestCert, trustCert } from '../support/tls-cert.js';
import { waitUntil } from '../support/wait.js';
import { caught, chat, gatewayWith, route } from './harness.js';

let cert: TestCert;
let server: Server;
let gw: TestGateway;

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
  gw = await gatewayWith([route('extra-tls', [{ name: 'tls', baseURL }])]);
});
afterAll(async () => {
  await gw?.close();
  server?.close();
});

describe('an upstream with a self-signed certificate', () => {
  it('is refused: 502 upstream_unreachable, and the access line names the certificate error', async () => {
    const e = await caught(chat(gw.client(), 'extra-tls'));
    expect(e.status).toBe(502);
    expect(e.code).toBe('upstream_unreachable');
    const line = await waitUntil(() => gw.logs.find((l) => l.msg === 'request' && l.model === 'extra-tls'), 3_000, 'the access line');
    expect(line.upstreamError).toBe('DEPTH_ZERO_SELF_SIGNED_CERT');
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
