// Failover through the real stack with the openai SDK (maxRetries 0) against fault-injecting upstreams: which
// outcomes move on to the next backend, which pass through, that a failed backend is never tried twice in one
// request, and that the body is replayed exactly (model rewritten per backend, multipart files intact).
import { randomBytes } from 'node:crypto';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { BackendHealth } from '../../src/dataplane/policy/health.js';
import { refusingBaseURL, startFaultyUpstream, type Fault, type FaultyUpstream } from '../fakes/faulty-upstream.js';
import type { TestGateway } from '../helpers/gateway.js';
import { caught, chat, gatewayWith, route } from './harness.js';

let p: FaultyUpstream, s: FaultyUpstream, t: FaultyUpstream;
let gw: TestGateway;
let client: OpenAI;

beforeAll(async () => {
  [p, s, t] = await Promise.all([startFaultyUpstream('p'), startFaultyUpstream('s'), startFaultyUpstream('t')]);
  const refused = await refusingBaseURL();
  const tiers = (...ups: FaultyUpstream[]) => ups.map((u, i) => ({ name: u.name, baseURL: u.baseURL, priority: i }));
  gw = await gatewayWith(
    [
      route('extra-pair', tiers(p, s), { timeouts: { firstByte: '500ms' } }),
      route('extra-trio', tiers(p, s, t), { retry: { attempts: 5 } }),
      route('extra-refused', [
        { name: 'gone', baseURL: refused },
        { name: 's', baseURL: s.baseURL, priority: 1 },
      ]),
      route('extra-all-refused', [
        { name: 'gone1', baseURL: refused },
        { name: 'gone2', baseURL: await refusingBaseURL(), priority: 1 },
      ]),
      route('extra-narrow', tiers(p, s), { retry: { retryOn: ['connect-failure'] } }),
    ],
    // Health would eject p after a few of these tests; here every request must see the plan as configured.
    { health: new BackendHealth({ consecutiveFailures: 1_000_000, maxRetryAfterMs: 0 }) },
  );
  client = gw.client();
});
afterAll(async () => {
  await gw?.close();
  await Promise.all([p?.close(), s?.close(), t?.close()]);
});
beforeEach(() => {
  for (const u of [p, s, t]) {
    u.requests.length = 0;
    u.setFault({ kind: 'ok' });
  }
});

describe('failover outcomes', () => {
  const cases: [string, Fault][] = [
    ['connection reset before any response', { kind: 'reset' }],
    ['connection reset in the middle of the headers', { kind: 'reset-mid-headers' }],
    ['429 with retry-after', { kind: 'status', status: 429, retryAfter: '1' }],
    ['500', { kind: 'status', status: 500 }],
    ['502', { kind: 'status', status: 502 }],
    ['503', { kind: 'status', status: 503 }],
    ['504', { kind: 'status', status: 504 }],
    ['no headers within firstByte', { kind: 'hang' }],
  ];
  for (const [name, fault] of cases)
    it(`${name} → served by the next backend`, async () => {
      p.setFault(fault);
      const { data, response } = await chat(client, 'extra-pair');
      expect(data.choices[0]?.message.content).toBe('from s');
      expect(response.headers.get('x-model-gateway-backend')).toBe('s');
      expect(response.headers.get('x-model-gateway-attempts')).toBe('2');
      expect(p.requests).toHaveLength(1);
      expect(s.requests).toHaveLength(1);
    });

  it('connection refused → served by the next backend', async () => {
    const { data, response } = await chat(client, 'extra-refused');
    expect(data.choices[0]?.message.content).toBe('from s');
    expect(response.headers.get('x-model-gateway-backend')).toBe('s');
    expect(response.headers.get('x-model-gateway-attempts')).toBe('2');
  });

  it("401 (the backend refused the gateway's credential) is told as 502 upstream_credentials, without failover", async () => {
    p.setFault({
      kind: 'status',
      status: 401,
      body: { error: { message: 'Incorrect API key provided', type: 'invalid_request_error', code: 'invalid_api_key' } },
    });
    const e = await caught(chat(client, 'extra-pair'));
    expect(e.status).toBe(502);
    expect(e.code).toBe('upstream_credentials');
    expect(e.message).toContain('Backend "p" of model "extra-pair"');
    expect(e.headers?.get('x-model-gateway-backend')).toBe('p');
    expect(e.headers?.get('x-model-gateway-attempts')).toBe('1');
    expect(s.requests).toHaveLength(0);
  });

  for (const status of [400, 403, 404, 422])
    it(`${status} passes through unchanged, without failover`, async () => {
      const body = { error: { message: `upstream refused it (${status})`, type: 'invalid_request_error', param: 'messages', code: 'custom_code' } };
      p.setFault({ kind: 'status', status, body });
      const e = await caught(chat(client, 'extra-pair'));
      expect(e.status).toBe(status);
      expect(e.error).toEqual(body.error);
      expect(e.headers?.get('x-model-gateway-backend')).toBe('p');
      expect(e.headers?.get('x-model-gateway-attempts')).toBe('1');
      expect(s.requests).toHaveLength(0);
    });

  it("a status outside the route's retryOn passes through", async () => {
    p.setFault({ kind: 'status', status: 503 });
    const e = await caught(chat(client, 'extra-narrow'));
    expect(e.status).toBe(503);
    expect(s.requests).toHaveLength(0);
  });
});

describe('one try per backend per request', () => {
  it('when every backend fails, each was tried exactly once and the last answer is passed on', async () => {
    for (const u of [p, s, t]) u.setFault({ kind: 'status', status: 503 });
    const e = await caught(chat(client, 'extra-trio'));
    expect(e.status).toBe(503);
    expect(e.message).toContain('t says 503');
    expect(e.headers?.get('x-model-gateway-attempts')).toBe('3');
    expect([p.requests.length, s.requests.length, t.requests.length]).toEqual([1, 1, 1]);
  });

  it('the last 429 reaches the client with its retry-after', async () => {
    p.setFault({ kind: 'status', status: 503 });
    s.setFault({ kind: 'status', status: 429, retryAfter: '3' });
    t.setFault({ kind: 'status', status: 429, retryAfter: '7' });
    const e = await caught(chat(client, 'extra-trio'));
    expect(e).toBeInstanceOf(OpenAI.RateLimitError);
    expect(e.headers?.get('retry-after')).toBe('7');
  });

  it('when nothing can be reached: 502 upstream_unreachable naming no address', async () => {
    const e = await caught(chat(client, 'extra-all-refused'));
    expect(e.status).toBe(502);
    expect(e.code).toBe('upstream_unreachable');
    expect(e.message).not.toContain('127.0.0.1');
    expect(e.headers?.get('x-model-gateway-attempts')).toBe('2');
  });
});

describe('the body is replayed exactly', () => {
  it("JSON: the same request on every attempt, with each backend's model name", async () => {
    p.setFault({ kind: 'status', status: 500 });
    s.setFault({ kind: 'reset' });
    const sent = {
      model: 'extra-trio',
      messages: [{ role: 'user' as const, content: 'héllo \u{1F600} "quoted"' }],
      temperature: 0.25,
      max_tokens: 17,
      metadata: { nested: 'yes' },
    };
    const { response } = await client.chat.completions.create(sent).withResponse();
    expect(response.headers.get('x-model-gateway-backend')).toBe('t');
    const seen = [p, s, t].map((u) => u.requests[0]!.json!);
    expect(seen.map((j) => j.model)).toEqual(['p-model', 's-model', 't-model']);
    for (const j of seen) expect({ ...j, model: sent.model }).toEqual(sent);
    const ids = new Set([p, s, t].map((u) => u.requests[0]!.headers['x-request-id']));
    expect(ids).toEqual(new Set([response.headers.get('x-request-id')]));
  });

  it('multipart: the file bytes reach every attempt intact, the model field rewritten', async () => {
    p.setFault({ kind: 'status', status: 503 });
    const audio = randomBytes(200 * 1024);
    const r = await client.audio.transcriptions.create({ model: 'extra-pair', file: await toFile(audio, 'clip.wav', { type: 'audio/wav' }) });
    expect(r.text).toBe('from s');
    for (const [u, model] of [
      [p, 'p-model'],
      [s, 's-model'],
    ] as const) {
      const body = u.requests[0]!.body;
      expect(body.indexOf(audio)).toBeGreaterThan(0);
      expect(body.toString('latin1')).toContain(`\r\n\r\n${model}\r\n`);
      expect(body.toString('latin1')).toContain('filename="clip.wav"');
    }
  });
});
