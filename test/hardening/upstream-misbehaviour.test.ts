// Upstreams that misbehave (wrong lengths, resets, oversized or odd headers, absurd usage numbers) must
// never take the gateway down: the client gets the upstream's answer, a clean 502, or a cut connection.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startRecordingUpstream, type RecordingUpstream } from '../fakes/recording-upstream.js';
import { ALICE_KEY, extraRoute, standardManifests, startGateway, type TestGateway } from '../helpers/gateway.js';
import { waitUntil } from '../support/wait.js';
import { startRawUpstream, response, type Behaviour, type RawUpstream } from './raw-upstream.js';
import { expectOpenAIError, processTripwire } from './support.js';

const JSON_CT = { 'Content-Type': 'application/json' };
const behaviours: Record<string, Behaviour> = {
  'huge-usage': (s) => s.end(response('200 OK', JSON_CT, `{"usage":{"prompt_tokens":${'9'.repeat(400)},"completion_tokens":2}}`)),
  'huge-usage-sse': (s) =>
    s.end(
      response(
        '200 OK',
        { 'Content-Type': 'text/event-stream' },
        `data: {"usage":{"prompt_tokens":1,"completion_tokens":${'7'.repeat(330)}}}\n\ndata: [DONE]\n\n`,
      ),
    ),
  'invalid-json': (s) => s.end(response('200 OK', JSON_CT, '{"usage": {"prompt_tokens": 12, "completion_tokens": oops')),
  'giant-headers': (s) => s.end(response('200 OK', { 'X-Big': 'a'.repeat(70_000) }, '{}')),
  'chunked-then-reset': (s) => {
    s.write('HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n10\r\ndata: {"a":1}\n\n\r\n');
    setTimeout(() => s.resetAndDestroy(), 50);
  },
  'short-body': (s) => {
    s.write('HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"a":1');
    setTimeout(() => s.destroy(), 50);
  },
  redirect: (s) => s.end(response('307 Temporary Redirect', { Location: 'http://127.0.0.1:9/elsewhere' })),
  'early-hints': (s) => s.end(`HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n${response('200 OK', JSON_CT, '{"ok":true}')}`),
  'no-content': (s) => s.end('HTTP/1.1 204 No Content\r\n\r\n'),
  'not-modified': (s) => s.end('HTTP/1.1 304 Not Modified\r\n\r\n'),
  'sse-without-done': (s) => s.end('HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\ndata: {"a":1}\n\n'),
  'switching-protocols': (s) => s.end('HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n'),
  'not-http': (s) => s.end('SSH-2.0-OpenSSH_9.6\r\n\r\n'),
  'control-char-header': (s) => s.end(response('200 OK', { 'X-A': 'a\x01b' }, '{}')),
  trailers: (s) =>
    s.end('HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nTrailer: X-T\r\n\r\n2\r\n{}\r\n0\r\nX-T: 1\r\n\r\n'),
  'close-at-once': (s) => s.destroy(),
};

let raw: RawUpstream;
let upstream: RecordingUpstream;
let gw: TestGateway;
let tripwire: ReturnType<typeof processTripwire>;

beforeAll(async () => {
  raw = await startRawUpstream(behaviours);
  upstream = await startRecordingUpstream();
  const extra = Object.keys(behaviours)
    .map((name) => extraRoute(`extra-${name}`, [{ name, baseURL: raw.baseURL(name) }], { firstByte: '2s', streamIdle: '2s' }))
    .join('\n');
  gw = await startGateway(standardManifests(upstream.baseURL, extra));
  tripwire = processTripwire();
});
afterAll(async () => {
  tripwire?.remove();
  await gw?.close();
  await raw?.close();
  await upstream?.close();
});
/** Requests this file has sent: each is over, its 'end' handlers run, once the gateway wrote its access line. */
let asked = 0;
afterEach(async () => {
  const over = () => gw.logs.filter((l) => l.msg === 'request' && l.path === '/v1/chat/completions').length;
  // An exception escaping an 'end' handler can keep its request from settling: stop waiting as soon as one escapes.
  await waitUntil(() => tripwire.escaped.length > 0 || over() === asked, 5_000, "every request's access log line");
  expect(tripwire.escaped.splice(0)).toEqual([]);
  expect((await fetch(`${gw.origin}/healthz`)).status).toBe(200);
});

async function ask(name: string) {
  asked++;
  const res = await fetch(`${gw.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ALICE_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: `extra-${name}`, messages: [] }),
    redirect: 'manual',
  });
  let text: string | undefined;
  let bodyError: string | undefined;
  try {
    text = await res.text();
  } catch (err) {
    bodyError = (err as Error).message;
  }
  let json: any;
  try {
    json = JSON.parse(text ?? '');
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json, bodyError };
}

describe('usage numbers from the upstream', () => {
  it.each(['huge-usage', 'huge-usage-sse'])('%s: a 400-digit token count is relayed, not metered, and crashes nothing', async (name) => {
    // Regression: Number("999…") is Infinity and prom-client throws on it, from the body's 'end' handler:
    // an uncaught exception, i.e. any upstream could crash the gateway with one response.
    const r = await ask(name);
    expect(r.status).toBe(200);
    expect(r.text).toMatch(/\d{300}/);
    const metrics = await gw.metrics.registry.metrics();
    expect(metrics).not.toMatch(/gen_ai_client_token_usage_sum\{[^}]*\} (\+?Inf|NaN)/);
  });

  it('invalid JSON on a 200 is relayed untouched', async () => {
    const r = await ask('invalid-json');
    expect(r.status).toBe(200);
    expect(r.text).toBe('{"usage": {"prompt_tokens": 12, "completion_tokens": oops');
  });
});

describe('broken responses', () => {
  it.each([
    ['giant-headers', 'upstream_error'],
    ['switching-protocols', 'upstream_unreachable'],
    ['not-http', 'upstream_error'],
    ['control-char-header', 'upstream_error'],
    ['close-at-once', 'upstream_unreachable'],
  ])('%s → 502 in OpenAI shape', async (name, code) => {
    expectOpenAIError(await ask(name), 502, code);
  });

  it('an event stream reset mid-body ends with an SSE error event', async () => {
    const r = await ask('chunked-then-reset');
    expect(r.status).toBe(200);
    expect(r.text).toMatch(/^data: \{"a":1\}\n\n[\s\S]*event: error\n/);
  });

  it('a JSON body shorter than its Content-Length: the status is out, so the client connection is cut', async () => {
    const r = await ask('short-body');
    expect(r.status).toBe(200);
    expect(r.bodyError).toBeDefined();
  });
});

describe('unusual but valid responses pass through', () => {
  it('a redirect is not passed on: 502 upstream_error, no Location (see test/http/upstream-redirects.test.ts)', async () => {
    const r = await ask('redirect');
    expect(r.status).toBe(502);
    expect(r.json.error.code).toBe('upstream_error');
    expect(r.headers.get('location')).toBeNull();
    expect(r.text).not.toContain('127.0.0.1:9');
  });

  it('a 103 before the 200 is skipped', async () => {
    const r = await ask('early-hints');
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ ok: true });
  });

  it.each([
    ['no-content', 204],
    ['not-modified', 304],
  ])('%s → %s with no body', async (name, status) => {
    const r = await ask(name);
    expect(r.status).toBe(status);
    expect(r.text).toBe('');
  });

  it('an event stream that ends without [DONE] ends for the client too', async () => {
    const r = await ask('sse-without-done');
    expect(r.status).toBe(200);
    expect(r.text).toBe('data: {"a":1}\n\n');
  });

  it('a chunked body with trailers', async () => {
    const r = await ask('trailers');
    expect(r.status).toBe(200);
    expect(r.text).toBe('{}');
  });
});
