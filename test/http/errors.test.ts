// Every error the gateway answers itself: status, OpenAI error shape (type/code), JSON content type and an
// x-request-id; and no key ever appears in a body or a log line.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { waitUntil } from '../support/wait.js';
import { startRecordingUpstream, type RecordingUpstream } from '../fakes/recording-upstream.js';
import { ALICE_KEY, deadBaseURL, extraRoute, standardManifests, startGateway, UPSTREAM_KEY, type TestGateway } from '../helpers/gateway.js';

let upstream: RecordingUpstream;
let gw: TestGateway;
const bodies: string[] = [];

beforeAll(async () => {
  upstream = await startRecordingUpstream();
  const dead = await deadBaseURL();
  upstream.override('/v1/hang/chat/completions', () => new Promise(() => {})); // never answers
  upstream.override('/v1/limited/chat/completions', (_req, res) => {
    res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '7' });
    res.end('{"error":{"message":"slow down","type":"requests","param":null,"code":"rate_limit_exceeded"}}');
  });
  upstream.override('/v1/broken/chat/completions', (_req, res) => {
    res.writeHead(500, { 'content-type': 'text/plain' });
    res.end('upstream exploded');
  });
  const extra = [
    extraRoute('extra-dead', [{ name: 'dead', baseURL: dead }]),
    extraRoute('extra-failover', [
      { name: 'dead', baseURL: dead, priority: 0 },
      { name: 'live', baseURL: upstream.baseURL, priority: 1 },
    ]),
    extraRoute('extra-slow', [{ name: 'slow', baseURL: `${upstream.origin}/v1/hang` }], { firstByte: '300ms' }),
    extraRoute('extra-limited', [{ name: 'limited', baseURL: `${upstream.origin}/v1/limited` }]),
    extraRoute('extra-broken', [{ name: 'broken', baseURL: `${upstream.origin}/v1/broken` }]),
  ].join('\n');
  gw = await startGateway(standardManifests(upstream.baseURL, extra), { bodyLimits: { jsonBytes: 4096, multipartBytes: 16_384 } });
});
afterAll(async () => {
  await gw?.close();
  await upstream?.close();
});

interface Call {
  method?: string;
  path: string;
  key?: string | null;
  body?: string | FormData;
  headers?: Record<string, string>;
}

async function call(c: Call): Promise<{ status: number; headers: Headers; json: any; text: string }> {
  const headers: Record<string, string> = { ...c.headers };
  if (c.key !== null) headers['authorization'] = `Bearer ${c.key ?? ALICE_KEY}`;
  if (typeof c.body === 'string') headers['content-type'] ??= 'application/json';
  const res = await fetch(`${gw.origin}${c.path}`, { method: c.method ?? (c.body ? 'POST' : 'GET'), headers, body: c.body ?? null });
  const text = await res.text();
  bodies.push(text);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, json, text };
}

function expectError(r: Awaited<ReturnType<typeof call>>, status: number, type: string, code: string | null): void {
  expect(r.status, r.text).toBe(status);
  expect(r.headers.get('content-type')).toMatch(/^application\/json/);
  expect(r.headers.get('x-request-id')).toBeTruthy();
  expect(r.json.error).toMatchObject({ message: expect.any(String), type, code });
  expect(r.json.error.param === null || typeof r.json.error.param === 'string').toBe(true);
  expect(Object.keys(r.json.error).sort()).toEqual(['code', 'message', 'param', 'type']);
}

const chat = (model: string, extra: Record<string, unknown> = {}) => JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }], ...extra });

describe('authentication', () => {
  const cases: [string, string | null][] = [
    ['missing', null],
    ['unknown', 'sk-not-a-real-key'],
    ['expired', 'sk-expired-key'],
    ['disabled', 'sk-disabled-key'],
  ];
  for (const [name, key] of cases) {
    it(`${name} key → 401 invalid_api_key`, async () => {
      expectError(await call({ path: '/v1/chat/completions', key, body: chat('gpt-4o-mini') }), 401, 'invalid_request_error', 'invalid_api_key');
      expectError(await call({ path: '/v1/models', key }), 401, 'invalid_request_error', 'invalid_api_key');
    });
  }

  it('a malformed Authorization header → 401', async () => {
    expectError(
      await call({ path: '/v1/models', key: null, headers: { authorization: `Basic ${ALICE_KEY}` } }),
      401,
      'invalid_request_error',
      'invalid_api_key',
    );
  });

  it('the SDK sees an AuthenticationError', async () => {
    await expect(gw.client('sk-wrong').models.list()).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
  });

  it('no table loaded yet → 503', async () => {
    const empty = await startGateway('', { empty: true });
    try {
      const res = await fetch(`${empty.baseURL}/models`, { headers: { authorization: `Bearer ${ALICE_KEY}` } });
      expect(res.status).toBe(503);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(((await res.json()) as { error: unknown }).error).toMatchObject({ type: 'server_error', code: 'service_unavailable' });
    } finally {
      await empty.close();
    }
  });
});

describe('model resolution', () => {
  it('unknown model → 404 model_not_found', async () => {
    expectError(await call({ path: '/v1/chat/completions', body: chat('no-such-model') }), 404, 'invalid_request_error', 'model_not_found');
    await expect(gw.client().chat.completions.create({ model: 'nope', messages: [] })).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  });

  it('model outside the token group → 403 model_not_allowed', async () => {
    expectError(await call({ path: '/v1/chat/completions', body: chat('forbidden-model') }), 403, 'invalid_request_error', 'model_not_allowed');
    await expect(gw.client().chat.completions.create({ model: 'forbidden-model', messages: [] })).rejects.toBeInstanceOf(OpenAI.PermissionDeniedError);
  });

  it("model outside the token's own narrowed list → 403", async () => {
    const r = await call({ path: '/v1/embeddings', key: 'sk-narrow-key', body: JSON.stringify({ model: 'text-embedding-3-small', input: 'x' }) });
    expectError(r, 403, 'invalid_request_error', 'model_not_allowed');
  });

  it('route not serving the family → 404 that says so', async () => {
    const r = await call({ path: '/v1/embeddings', body: JSON.stringify({ model: 'gpt-4o-mini', input: 'x' }) });
    expectError(r, 404, 'invalid_request_error', 'unsupported_endpoint');
    expect(r.json.error.message).toContain('/v1/embeddings');
  });
});

describe('bad input', () => {
  it('malformed JSON → 400', async () => {
    expectError(await call({ path: '/v1/chat/completions', body: '{"model": "gpt-4o-mini",' }), 400, 'invalid_request_error', 'invalid_json');
  });

  it('JSON that is not an object → 400', async () => {
    expectError(await call({ path: '/v1/chat/completions', body: '[1,2]' }), 400, 'invalid_request_error', 'invalid_json');
  });

  it('missing model → 400 (JSON and multipart)', async () => {
    const r = await call({ path: '/v1/chat/completions', body: JSON.stringify({ messages: [] }) });
    expectError(r, 400, 'invalid_request_error', 'missing_required_parameter');
    expect(r.json.error.param).toBe('model');
    const form = new FormData();
    form.set('file', new Blob([new Uint8Array([1, 2, 3])]), 'a.wav');
    expectError(await call({ path: '/v1/audio/transcriptions', body: form }), 400, 'invalid_request_error', 'missing_required_parameter');
  });

  it('malformed multipart → 400', async () => {
    const r = await call({ path: '/v1/audio/transcriptions', body: 'garbage', headers: { 'content-type': 'multipart/form-data' } });
    expectError(r, 400, 'invalid_request_error', 'invalid_multipart');
  });

  it('JSON body over the limit → 413', async () => {
    const r = await call({ path: '/v1/chat/completions', body: JSON.stringify({ model: 'gpt-4o-mini', pad: 'x'.repeat(5000) }) });
    expectError(r, 413, 'invalid_request_error', 'request_too_large');
  });

  it('multipart body over the limit → 413, under it passes', async () => {
    const big = new FormData();
    big.set('model', 'whisper-1');
    big.set('file', new Blob([new Uint8Array(20_000)]), 'a.wav');
    expectError(await call({ path: '/v1/audio/transcriptions', body: big }), 413, 'invalid_request_error', 'request_too_large');
    const small = new FormData();
    small.set('model', 'whisper-1');
    small.set('file', new Blob([new Uint8Array(10_000)]), 'a.wav');
    expect((await call({ path: '/v1/audio/transcriptions', body: small })).status).toBe(200);
  });

  it('chunked body over the limit (no content-length) → 413', async () => {
    const { request } = await import('node:http');
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(
        `${gw.baseURL}/chat/completions`,
        {
          method: 'POST',
          headers: { authorization: `Bearer ${ALICE_KEY}`, 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      req.write('{"model":"gpt-4o-mini","pad":"');
      req.write('y'.repeat(5000));
      req.end('"}');
    });
    expect(status).toBe(413);
  });
});

describe('routing errors', () => {
  it('unknown /v1 route → 404 (and outside /v1 too)', async () => {
    expectError(await call({ path: '/v1/nothing/here', body: '{}' }), 404, 'invalid_request_error', 'unknown_url');
    expectError(await call({ path: '/nothing' }), 404, 'invalid_request_error', 'unknown_url');
  });

  it('a path that is not valid percent-encoding → 400, not 500', async () => {
    expectError(await call({ path: '/v1/models/%E0%A4%A' }), 400, 'invalid_request_error', 'invalid_request');
  });

  it('wrong method → 405 with Allow', async () => {
    const r = await call({ method: 'GET', path: '/v1/chat/completions' });
    expectError(r, 405, 'invalid_request_error', 'method_not_allowed');
    expect(r.headers.get('allow')).toBe('POST');
    const d = await call({ method: 'DELETE', path: '/v1/models/gpt-4o-mini' });
    expectError(d, 405, 'invalid_request_error', 'method_not_allowed');
    expect(d.headers.get('allow')).toBe('GET, HEAD');
  });
});

describe('upstream failures', () => {
  it('unreachable upstream → 502', async () => {
    const r = await call({ path: '/v1/chat/completions', body: chat('extra-dead') });
    expectError(r, 502, 'server_error', 'upstream_unreachable');
    expect(r.text).not.toContain('127.0.0.1');
  });

  it('fails over to the next backend on a refused connection', async () => {
    const { data, response } = await gw
      .client()
      .chat.completions.create({ model: 'extra-failover', messages: [{ role: 'user', content: 'x' }] })
      .withResponse();
    expect(data.choices[0]?.message.content).toBe('Hello from upstream');
    expect(response.headers.get('x-model-gateway-backend')).toBe('live');
    expect(response.headers.get('x-model-gateway-attempts')).toBe('2');
  });

  it('upstream not answering within firstByte → 504', async () => {
    const started = Date.now();
    expectError(await call({ path: '/v1/chat/completions', body: chat('extra-slow') }), 504, 'server_error', 'upstream_timeout');
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it('upstream 4xx passes through unchanged, status and body', async () => {
    const r = await call({ path: '/v1/chat/completions', body: chat('extra-limited') });
    expect(r.status).toBe(429);
    expect(r.text).toBe('{"error":{"message":"slow down","type":"requests","param":null,"code":"rate_limit_exceeded"}}');
    expect(r.headers.get('retry-after')).toBe('7');
    expect(r.headers.get('x-model-gateway-backend')).toBe('limited');
  });

  it('upstream 5xx passes through unchanged', async () => {
    const r = await call({ path: '/v1/chat/completions', body: chat('extra-broken') });
    expect(r.status).toBe(500);
    expect(r.text).toBe('upstream exploded');
  });
});

describe('request ids', () => {
  it('honours a sane incoming x-request-id, even on errors', async () => {
    const r = await call({ path: '/v1/nope', headers: { 'x-request-id': 'trace-123:abc.def_9' } });
    expect(r.headers.get('x-request-id')).toBe('trace-123:abc.def_9');
  });

  it('replaces an insane one', async () => {
    for (const bad of ['has space', 'x'.repeat(129), 'semi;colon']) {
      const r = await call({ path: '/v1/models', headers: { 'x-request-id': bad } });
      expect(r.status).toBe(200);
      expect(r.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    }
  });
});

describe('secrets', () => {
  it('no response body or log line contains a key', async () => {
    // Its own key-bearing requests first (whatever ran before it, in any order, is checked too): refused keys, a
    // success, streamed or not, failures upstream (unreachable, 429, 500) and a failover; every backend is sent the
    // upstream key.
    for (const key of ['sk-not-a-real-key', 'sk-expired-key']) await call({ path: '/v1/chat/completions', key, body: chat('gpt-4o-mini') });
    for (const model of ['gpt-4o-mini', 'extra-dead', 'extra-limited', 'extra-broken', 'extra-failover']) {
      await call({ path: '/v1/chat/completions', body: chat(model) });
    }
    const streamed = await call({ path: '/v1/chat/completions', body: chat('gpt-4o-mini', { stream: true }) });
    expect(streamed.text).toContain('data: [DONE]');
    // Requests ran one after another and a line is written before the client sees the end of its answer, so
    // once a last marked request is logged, every earlier line has landed.
    await call({ path: '/v1/models', headers: { 'x-request-id': 'secrets-marker' } });
    await waitUntil(() => gw.logs.some((l) => l['reqId'] === 'secrets-marker'), 5_000, 'the marker access-log line');
    for (const text of [...bodies, gw.logText()]) {
      expect(text).not.toContain(ALICE_KEY);
      expect(text).not.toContain(UPSTREAM_KEY);
      expect(text).not.toContain('sk-expired-key');
      expect(text).not.toContain('sk-not-a-real-key');
    }
    expect(gw.logs.length).toBeGreaterThan(10);
  });
});
