// HTTP/1.1 requires Host (RFC 9112 §3.2). node refuses a request without it with a bare 400 (no body, no
// x-request-id); the gateway refuses it in OpenAI's shape, like every other error.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayHandle } from '../../src/gateway/main.js';
import { startRecordingUpstream, type RecordingUpstream } from '../fakes/recording-upstream.js';
import { ALICE_KEY, standardManifests } from '../helpers/gateway.js';
import { startServedGateway } from './served-gateway.js';
import { expectOpenAIError, rawRequest } from './support.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

let upstream: RecordingUpstream;
let gw: GatewayHandle;
beforeAll(async () => {
  upstream = await startRecordingUpstream();
  gw = await startServedGateway(standardManifests(upstream.baseURL));
});
afterAll(async () => {
  await gw?.close({ timeoutMs: 0 });
  await upstream?.close();
});

const head = (lines: string[]) => `${lines.join('\r\n')}\r\n\r\n`;

describe('a request without Host', () => {
  it('HTTP/1.1 → 400 invalid_request in OpenAI shape, with an x-request-id, connection closed', async () => {
    // Regression: node's own "HTTP/1.1 400 Bad Request" with no body and no x-request-id.
    const r = await rawRequest(gw.apiURL, [head(['GET /v1/models HTTP/1.1', `Authorization: Bearer ${ALICE_KEY}`])]);
    expectOpenAIError(r, 400, 'invalid_request');
    expect(r.json.error.message).toMatch(/Host/);
    expect(r.headers['x-request-id']).toMatch(UUID);
    expect(r.closed).toBe(true);
  });

  it('keeps a sane incoming x-request-id, and nothing reaches the upstream', async () => {
    const before = upstream.requests.length;
    const body = JSON.stringify({ model: 'gpt-4o-mini', messages: [] });
    const r = await rawRequest(gw.apiURL, [
      head([
        'POST /v1/chat/completions HTTP/1.1',
        `Authorization: Bearer ${ALICE_KEY}`,
        'X-Request-Id: trace-123',
        'Content-Type: application/json',
        `Content-Length: ${body.length}`,
      ]) + body,
    ]);
    expectOpenAIError(r, 400, 'invalid_request');
    expect(r.headers['x-request-id']).toBe('trace-123');
    expect(upstream.requests.length).toBe(before);
  });

  it('HTTP/1.0, where Host is optional, is still served', async () => {
    const r = await rawRequest(gw.apiURL, [head(['GET /v1/models HTTP/1.0', `Authorization: Bearer ${ALICE_KEY}`])]);
    expect(r.status).toBe(200);
  });
});
