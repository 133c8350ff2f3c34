// An upstream that quotes the credentials it received (an error page repeating the Authorization header, a debug
// header, an SSE event) must never show a tenant the backend's key: the gateway knows the exact bytes it sent
// and masks them, byte for byte with '*', in every header, body and event it relays or retells.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { InternalServerError, PermissionDeniedError } from 'openai';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startRecordingUpstream, type RecordingUpstream } from '../fakes/recording-upstream.js';
import { ALICE_KEY, keepAliveRoute, standardManifests, startGateway, UPSTREAM_KEY, type TestGateway } from '../helpers/gateway.js';

const STARS = '*'.repeat(UPSTREAM_KEY.length);

let upstream: RecordingUpstream;
let gw: TestGateway;
beforeAll(async () => {
  upstream = await startRecordingUpstream();
  gw = await startGateway(standardManifests(upstream.baseURL, keepAliveRoute(upstream.baseURL)));
});
afterAll(async () => {
  await gw?.close();
  await upstream?.close();
});
afterEach(() => {
  upstream.override('/v1/chat/completions', undefined);
  upstream.override('/v1/responses', undefined);
  expect(gw.logText()).not.toContain(UPSTREAM_KEY);
});

/** A 403 that repeats the Authorization it received in its body and in two headers (401 is never relayed, below). */
function echo403(req: IncomingMessage, res: ServerResponse): void {
  const auth = String(req.headers.authorization);
  const body = JSON.stringify({
    error: {
      message: `Incorrect API key provided: ${auth}. You sent "${auth.slice(7)}".`,
      type: 'invalid_request_error',
      param: null,
      code: 'invalid_api_key',
    },
  });
  res.writeHead(403, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
    'www-authenticate': `Bearer realm="upstream", error="invalid_token", token="${auth.slice(7)}"`,
    'x-echo-authorization': auth,
  });
  res.end(body);
}

async function post(path: string, body: Record<string, unknown>) {
  const res = await fetch(`${gw.baseURL}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ALICE_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const bytes = Buffer.from(await res.arrayBuffer());
  return { status: res.status, headers: res.headers, bytes, text: bytes.toString('utf8') };
}

const headerText = (h: Headers) => [...h.entries()].map(([k, v]) => `${k}: ${v}`).join('\n');

describe('the backend key never reaches a client', () => {
  it('a 403 quoting it in its body and headers: masked, with a Content-Length that still fits', async () => {
    upstream.override('/v1/chat/completions', echo403);
    const r = await post('/chat/completions', { model: 'gpt-4o-mini', messages: [] });
    expect(r.status).toBe(403);
    expect(r.text + headerText(r.headers)).not.toContain(UPSTREAM_KEY);
    expect(Number(r.headers.get('content-length'))).toBe(r.bytes.length);
    const error = JSON.parse(r.text).error;
    expect(error.message).toBe(`Incorrect API key provided: Bearer ${STARS}. You sent "${STARS}".`);
    expect(error.code).toBe('invalid_api_key');
    expect(r.headers.get('x-echo-authorization')).toBe(`Bearer ${STARS}`);
    expect(r.headers.get('www-authenticate')).toContain(`token="${STARS}"`);
  });

  it('the SDK sees the upstream’s 403 with the key masked', async () => {
    upstream.override('/v1/chat/completions', echo403);
    const err = await gw
      .client()
      .chat.completions.create({ model: 'gpt-4o-mini', messages: [] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PermissionDeniedError);
    const e = err as PermissionDeniedError;
    expect(e.message).toContain(STARS);
    expect(JSON.stringify(e.error) + e.message + headerText(e.headers as Headers)).not.toContain(UPSTREAM_KEY);
  });

  it("a 401 refuses the gateway's key, not the client's: 502 upstream_credentials naming the backend, nothing of its body", async () => {
    upstream.override('/v1/chat/completions', (req, res) => {
      const auth = String(req.headers.authorization);
      res.writeHead(401, { 'content-type': 'application/json', 'www-authenticate': `Bearer token="${auth.slice(7)}"` });
      res.end(JSON.stringify({ error: { message: `Incorrect API key provided: ${auth}.`, type: 'invalid_request_error', code: 'invalid_api_key' } }));
    });
    const err = await gw
      .client()
      .chat.completions.create({ model: 'gpt-4o-mini', messages: [] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InternalServerError);
    const e = err as InternalServerError;
    expect(e.status).toBe(502);
    expect(e.code).toBe('upstream_credentials');
    expect(e.message).toContain("refused the gateway's own credential");
    expect(e.headers?.get('x-should-retry')).toBe('false');
    expect(e.headers?.get('x-model-gateway-backend')).toBeTruthy();
    expect(JSON.stringify(e.error) + e.message + headerText(e.headers as Headers)).not.toMatch(/Incorrect API key|token=/);
  });

  it('an SSE event quoting it, split across two upstream writes, without delaying the events before it', async () => {
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    upstream.override('/v1/chat/completions', async (req, res) => {
      const key = String(req.headers.authorization).slice(7);
      const cut = Math.floor(key.length / 2);
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: {"choices":[{"index":0,"delta":{"content":"first"}}]}\n\n');
      res.write(`data: {"choices":[{"index":0,"delta":{"content":"your key is ${key.slice(0, cut)}`);
      await released; // the client has the first event: the gateway did not wait for the rest
      res.write(`${key.slice(cut)}"}}]}\n\ndata: [DONE]\n\n`);
      res.end();
    });
    const stream = await gw.client().chat.completions.create({ model: 'gpt-4o-mini', messages: [], stream: true });
    const texts: string[] = [];
    for await (const chunk of stream) {
      texts.push(chunk.choices[0]?.delta.content ?? '');
      if (texts.length === 1) release();
    }
    expect(texts).toEqual(['first', `your key is ${STARS}`]);
  });

  it('a rewritten body (a Response whose id is sealed) quoting it', async () => {
    upstream.override('/v1/responses', (req, res) => {
      const body = JSON.stringify({ id: 'resp_echo', object: 'response', status: 'completed', instructions: String(req.headers.authorization), output: [] });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    });
    const r = await post('/responses', { model: 'gpt-4o-mini', input: 'hi' });
    expect(r.status).toBe(200);
    expect(r.text).not.toContain(UPSTREAM_KEY);
    const json = JSON.parse(r.text);
    expect(json.instructions).toBe(`Bearer ${STARS}`);
    expect(json.id).not.toBe('resp_echo');
  });

  it('an error retold as an SSE event after keep-alives committed the stream', async () => {
    let answer!: () => void;
    const answered = new Promise<void>((r) => (answer = r));
    upstream.override('/v1/chat/completions', async (req, res) => {
      await answered;
      echo403(req, res);
    });
    const res = await fetch(`${gw.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ALICE_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'extra-keepalive', messages: [], stream: true }),
    });
    expect(res.status).toBe(200);
    const decoder = new TextDecoder();
    let text = '';
    for await (const chunk of res.body!) {
      text += decoder.decode(chunk, { stream: true });
      if (text.includes(': keep-alive')) answer();
    }
    expect(text).not.toContain(UPSTREAM_KEY);
    expect(text).toMatch(/event: error\ndata: /);
    const event = JSON.parse(text.slice(text.indexOf('data: ') + 6));
    expect(event.error.message).toBe(`Incorrect API key provided: Bearer ${STARS}. You sent "${STARS}".`);
  });
});
