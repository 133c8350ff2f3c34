// Abuse at the HTTP protocol level, against the real server from startGateway (the one `serve` runs): what
// node refuses before express sees it must still be answered in OpenAI's shape, slow clients are cut by the
// header and request timeouts, and none of it disturbs the requests around it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRecordingUpstream, type RecordingUpstream } from '../fakes/recording-upstream.js';
import { ALICE_KEY, standardManifests } from '../helpers/gateway.js';
import { startServedGateway } from './served-gateway.js';
import { waitUntil } from '../support/wait.js';
import { expectOpenAIError, httpRequest, rawRequest } from './support.js';

let upstream: RecordingUpstream;
let gw: Awaited<ReturnType<typeof startServedGateway>>;
const chat = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
const auth = { Authorization: `Bearer ${ALICE_KEY}`, 'Content-Type': 'application/json' };
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

beforeAll(async () => {
  upstream = await startRecordingUpstream();
  gw = await startServedGateway(standardManifests(upstream.baseURL), { headersTimeoutMs: 400, requestTimeoutMs: 800 });
});
afterAll(async () => {
  await gw?.close({ timeoutMs: 0 });
  await upstream?.close();
});

function expectClosedWith(r: Awaited<ReturnType<typeof rawRequest>>, status: number, code: string): void {
  expectOpenAIError(r, status, code);
  expect(r.headers['x-request-id']).toMatch(UUID);
  expect(r.closed).toBe(true);
}

describe('requests node refuses before routing (regression: a bare status line, no JSON body, no request id)', () => {
  it('headers over the size limit → 431', async () => {
    const r = await rawRequest(gw.apiURL, [httpRequest('POST', '/v1/chat/completions', { ...auth, 'X-Big': 'a'.repeat(20_000) }, chat)]);
    expectClosedWith(r, 431, 'request_header_fields_too_large');
  });

  it('a URL over the size limit → 431', async () => {
    const r = await rawRequest(gw.apiURL, [httpRequest('GET', `/v1/models?${'q'.repeat(20_000)}`, auth)]);
    expectClosedWith(r, 431, 'request_header_fields_too_large');
  });

  it.each([
    ['a garbage request line', 'HELLO THERE\r\n\r\n'],
    ['a bare CR inside x-request-id', httpRequest('GET', '/v1/models', { ...auth, 'X-Request-Id': 'abc\rdef' })],
    ['a header without a colon', 'GET /v1/models HTTP/1.1\r\nHost: x\r\nno colon here\r\n\r\n'],
    [
      'both Content-Length and Transfer-Encoding',
      httpRequest('POST', '/v1/chat/completions', { ...auth, 'Transfer-Encoding': 'chunked', 'Content-Length': '5' }, '0\r\n\r\n'),
    ],
    ['a chunk size that is not hex', httpRequest('POST', '/v1/chat/completions', { ...auth, 'Transfer-Encoding': 'chunked' }, 'zz\r\nabc\r\n')],
    ['a control byte in the path', 'GET /v1/mo\x01dels HTTP/1.1\r\nHost: x\r\n\r\n'],
  ])('%s → 400', async (_name, bytes) => {
    expectClosedWith(await rawRequest(gw.apiURL, [bytes]), 400, 'invalid_request');
  });
});

describe('the access log of requests node refuses (regression: no line, so the x-request-id the client got was nowhere)', () => {
  it.each([
    ['a garbage request line', 'HELLO THERE\r\n\r\n', 400],
    ['headers over the size limit', httpRequest('GET', '/v1/models', { ...auth, 'X-Big': 'a'.repeat(20_000) }), 431],
    ['an HTTP/1.1 request without Host', 'GET /v1/models HTTP/1.1\r\nConnection: close\r\n\r\n', 400],
  ])('%s: one request line with its id and status, counted as family other', async (_name, bytes, status) => {
    const counted = async () =>
      (await gw.metrics.registry.getSingleMetric('model_gateway_requests_total')?.get())?.values.find(
        (v) => v.labels['family'] === 'other' && v.labels['model'] === 'unknown' && v.labels['status_class'] === '4xx',
      )?.value ?? 0;
    const before = await counted();
    const r = await rawRequest(gw.apiURL, [bytes]);
    expect(r.status).toBe(status);
    const id = r.headers['x-request-id'];
    const lines = gw.logLines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l['reqId'] === id);
    expect(lines).toEqual([expect.objectContaining({ msg: 'request', status, family: 'other', model: 'unknown', group: 'none' })]);
    expect(await counted()).toBe(before + 1);
  });
});

describe('slow clients', () => {
  it('headers trickled in slower than the headers timeout → 408, connection closed', async () => {
    const started = Date.now();
    const trickle = ['GET /v1/models HTTP/1.1\r\n', 'Host: x\r\n', ...Array.from({ length: 20 }, (_, i) => `X-Slow-${i}: y\r\n`)];
    const r = await rawRequest(gw.apiURL, trickle, { gapMs: 100, waitMs: 5_000 });
    expectClosedWith(r, 408, 'request_timeout');
    expect(Date.now() - started).toBeLessThan(3_000);
    const logged = gw.logLines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l['reqId'] === r.headers['x-request-id']);
    expect(logged).toEqual([expect.objectContaining({ msg: 'request', status: 408 })]);
  });

  it('a body trickled in slower than the request timeout → 408, nothing reaches the upstream', async () => {
    const before = upstream.requests.length;
    const head = httpRequest('POST', '/v1/chat/completions', { ...auth, 'Content-Length': '1000' });
    const started = Date.now();
    const r = await rawRequest(gw.apiURL, [head, ...Array.from({ length: 40 }, () => ' ')], { gapMs: 100, waitMs: 5_000 });
    expectClosedWith(r, 408, 'request_timeout');
    expect(Date.now() - started).toBeLessThan(3_500);
    expect(upstream.requests.length).toBe(before);
    // Its access line (written by the handler, which had the request) carries the id the 408 was answered with.
    const id = r.headers['x-request-id'];
    await waitUntil(() => gw.logLines.some((l) => l.includes(`"reqId":"${id}"`)), 2_000, 'the access line of the 408');
  });

  it('a body completed right after the 408 is not forwarded', async () => {
    // Regression: the 408 went out, the client then sent the rest of its body on the still-open connection,
    // and the gateway forwarded the request: the upstream did (and billed) work nobody could receive.
    const before = upstream.requests.length;
    const { connect } = await import('node:net');
    const socket = connect(Number(new URL(gw.apiURL).port), '127.0.0.1');
    socket.on('error', () => undefined);
    let reply = '';
    const answered = new Promise<void>((resolve) => {
      socket.on('data', (d: Buffer) => {
        reply += d.toString('latin1');
        if (reply.includes('\r\n\r\n{')) {
          socket.write(chat.slice(5)); // the rest of the body, at once
          resolve();
        }
      });
    });
    socket.write(
      httpRequest('POST', '/v1/chat/completions', { ...auth, 'Content-Length': String(Buffer.byteLength(chat)) }).toString('latin1') + chat.slice(0, 5),
    );
    await answered;
    await new Promise((r) => setTimeout(r, 1_000));
    socket.destroy();
    expect(reply).toMatch(/^HTTP\/1\.1 408 /);
    expect(upstream.requests.length).toBe(before);
  });

  it('a request that arrives in time is not affected by the timeouts, however long the upstream takes', async () => {
    upstream.override('/v1/chat/completions', (_req, res, body) => {
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ echoed: body.length }));
      }, 1_200); // longer than the request timeout: waiting for the upstream does not count
    });
    try {
      const res = await fetch(`${gw.apiURL}/v1/chat/completions`, { method: 'POST', headers: auth, body: chat });
      expect(res.status).toBe(200);
    } finally {
      upstream.override('/v1/chat/completions', undefined);
    }
  });
});

describe('bursts and odd but valid input', () => {
  it('50 pipelined requests on one connection are answered in order', async () => {
    const burst = Array.from({ length: 50 }, (_, i) =>
      httpRequest('POST', '/v1/chat/completions', { ...auth, 'X-Request-Id': `pipe-${i}`, ...(i === 49 ? { Connection: 'close' } : {}) }, chat),
    );
    const r = await rawRequest(gw.apiURL, [Buffer.concat(burst)], { waitMs: 8_000 });
    const ids = [...r.text.matchAll(/x-request-id: (pipe-\d+)/g)].map((m) => m[1]);
    expect(ids).toEqual(Array.from({ length: 50 }, (_, i) => `pipe-${i}`));
    expect(r.text.match(/HTTP\/1\.1 200 /g)).toHaveLength(50);
  });

  it.each([
    ['lowercase scheme', `bearer ${ALICE_KEY}`, 200],
    ['extra spaces', `Bearer    ${ALICE_KEY}  `, 200],
    ['non-ASCII bytes', 'Bearer \xe9\xff\xfe', 401],
    ['a scheme alone', 'Bearer', 401],
    ['a key with a space inside', `Bearer ${ALICE_KEY} extra`, 401],
  ])('Authorization with %s → %s', async (_name, value, status) => {
    const r = await rawRequest(gw.apiURL, [httpRequest('GET', '/v1/models', { Authorization: value, Connection: 'close' })]);
    expect(r.status).toBe(status);
    if (status !== 200) expectOpenAIError(r, status, 'invalid_api_key');
  });

  it('a second Authorization header does not replace the first', async () => {
    const r = await rawRequest(gw.apiURL, [
      `GET /v1/models HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${ALICE_KEY}\r\nAuthorization: Bearer nope\r\nConnection: close\r\n\r\n`,
    ]);
    expect(r.status).toBe(200);
  });

  it.each([
    ['unicode', 'h\xe9llo'],
    ['huge', 'a'.repeat(8_000)],
    ['header-injection attempt', 'abc%0d%0aSet-Cookie:%20x=1'],
  ])('a %s x-request-id is replaced by a minted one', async (_name, id) => {
    const r = await rawRequest(gw.apiURL, [
      httpRequest('GET', '/v1/models', { Authorization: `Bearer ${ALICE_KEY}`, 'X-Request-Id': id, Connection: 'close' }),
    ]);
    expect(r.status).toBe(200);
    expect(r.headers['x-request-id']).toMatch(UUID);
    expect(r.headers['set-cookie']).toBeUndefined();
  });

  it('paths with %00 or broken percent-encoding → 4xx in OpenAI shape', async () => {
    for (const path of ['/v1/models/%00', '/v1/models/%E0%A4%A', '/v1/chat/%ZZcompletions', '/v1/models/a%2F..%2F..%2Fhealthz']) {
      const r = await rawRequest(gw.apiURL, [httpRequest('GET', path, { Authorization: `Bearer ${ALICE_KEY}`, Connection: 'close' })]);
      expect(r.status, path).toBeGreaterThanOrEqual(400);
      expect(r.status, path).toBeLessThan(500);
      expect(r.json?.error, path).toBeDefined();
    }
  });

  it('still healthy afterwards', async () => {
    expect((await fetch(`${gw.apiURL}/healthz`)).status).toBe(200);
  });
});
