// An OpenAI-compatible API never redirects its client, and an upstream's Location (or its "Redirecting to …" body)
// would show the client internal URLs. A 3xx from an upstream is answered 502 upstream_error naming no URL, is
// not followed and does not fail over (a redirect is a misconfigured baseURL, not a passing fault), and counts as
// a failed attempt for passive health. A 304, the answer to the client's own conditional request, is relayed.
import type { ServerResponse } from 'node:http';
import { APIError } from 'openai';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BackendHealth } from '../../src/dataplane/policy/health.js';
import { startRecordingUpstream, type RecordingUpstream } from '../fakes/recording-upstream.js';
import { expectOpenAIError } from '../hardening/support.js';
import { ALICE_KEY, extraRoute, keepAliveRoute, standardManifests, startGateway, type TestGateway } from '../helpers/gateway.js';

const INTERNAL = 'http://10.23.0.7:8000/internal/v1/chat/completions';

let upstream: RecordingUpstream;
let second: RecordingUpstream;
let gw: TestGateway;
let health: BackendHealth;
beforeAll(async () => {
  upstream = await startRecordingUpstream();
  second = await startRecordingUpstream();
  health = new BackendHealth({ consecutiveFailures: 1 });
  const extra = extraRoute('extra-two', [
    { name: 'redirecting', baseURL: upstream.baseURL, priority: 0 },
    { name: 'fine', baseURL: second.baseURL, priority: 1 },
  ]);
  gw = await startGateway(standardManifests(upstream.baseURL, extra + keepAliveRoute(upstream.baseURL, '50ms')), { health });
});
afterAll(async () => {
  await gw?.close();
  await upstream?.close();
  await second?.close();
});
afterEach(() => {
  upstream.override('/v1/chat/completions', undefined);
  upstream.override('/v1/videos', undefined);
});

function redirect(status: number) {
  return (_req: unknown, res: ServerResponse) => {
    res.writeHead(status, { location: INTERNAL, 'content-type': 'text/plain' });
    res.end(`Redirecting to ${INTERNAL}`);
  };
}

async function chat(body: Record<string, unknown>, headers: Record<string, string> = {}) {
  const res = await fetch(`${gw.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ALICE_KEY}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  const json = res.headers.get('content-type')?.startsWith('application/json') ? (JSON.parse(text) as any) : undefined;
  return { status: res.status, headers: res.headers, text, json };
}

describe('upstream redirects', () => {
  it.each([301, 302, 303, 307, 308])('%d → 502 upstream_error, no Location, no URL anywhere', async (status) => {
    upstream.override('/v1/chat/completions', redirect(status));
    const r = await chat({ model: 'gpt-4o-mini', messages: [] });
    expectOpenAIError(r, 502, 'upstream_error');
    expect(r.json.error.type).toBe('server_error');
    expect(r.json.error.message).toContain('gpt-4o-mini');
    expect(r.headers.get('location')).toBeNull();
    expect(r.text).not.toContain('10.23.0.7');
    expect(r.text).not.toContain('http');
  });

  it('the SDK sees an APIError 502 (streaming too)', async () => {
    upstream.override('/v1/chat/completions', redirect(307));
    const client = gw.client();
    for (const stream of [false, true]) {
      const err = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [], stream }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(APIError);
      expect((err as APIError).status).toBe(502);
      expect((err as APIError).code).toBe('upstream_error');
      expect(String((err as APIError).message)).not.toContain('10.23.0.7');
    }
  });

  it('after SSE keep-alives committed a 200, the redirect ends the stream with an error event naming no URL', async () => {
    upstream.override('/v1/chat/completions', async (req, res) => {
      await new Promise((r) => setTimeout(r, 200));
      redirect(302)(req, res);
    });
    const r = await chat({ model: 'extra-keepalive', messages: [], stream: true });
    expect(r.status).toBe(200);
    expect(r.text).toContain(': keep-alive');
    expect(r.text).toContain('upstream_error');
    expect(r.text).not.toContain('10.23.0.7');
  });

  it('is not failed over, is counted as a 3xx attempt and as a failure for passive health', async () => {
    upstream.override('/v1/chat/completions', redirect(302));
    const before = second.requests.length;
    const r = await chat({ model: 'extra-two', messages: [] });
    expectOpenAIError(r, 502, 'upstream_error');
    expect(r.headers.get('x-model-gateway-attempts')).toBe('1');
    expect(second.requests.length).toBe(before);
    const attempts = await gw.metrics.registry.getSingleMetric('model_gateway_upstream_attempts_total')!.get();
    expect(attempts.values.find((v) => v.labels['outcome'] === '3xx' && String(v.labels['backend']).endsWith('/redirecting'))?.value).toBe(1);
    // One failure ejects with this health's threshold: the next request is served by the other backend first.
    expect(health.state('default/extra-two/redirecting')).toBe('ejected');
    const next = await chat({ model: 'extra-two', messages: [] });
    expect(next.status).toBe(200);
    expect(next.headers.get('x-model-gateway-backend')).toBe('fine');
  });

  it("a 304 answering the client's own conditional request is relayed (its If-None-Match was forwarded)", async () => {
    upstream.override('/v1/chat/completions', (_req, res) => {
      res.writeHead(304, { etag: '"v1"' });
      res.end();
    });
    const r = await chat({ model: 'gpt-4o-mini', messages: [] }, { 'if-none-match': '"v1"' });
    expect(r.status).toBe(304);
    expect(r.headers.get('etag')).toBe('"v1"');
    expect(upstream.requests.at(-1)!.headers['if-none-match']).toBe('"v1"');
  });

  it('a Location on a successful answer (e.g. 201 Created naming the upstream object) is dropped', async () => {
    upstream.override('/v1/videos', (_req, res) => {
      const body = JSON.stringify({
        id: 'video_1',
        object: 'video',
        model: 'upstream-sora',
        status: 'queued',
        progress: 0,
        created_at: 1,
        seconds: '4',
        size: '720x1280',
      });
      res.writeHead(201, { 'content-type': 'application/json', location: 'http://10.23.0.7:8000/v1/videos/video_1', 'content-location': '/v1/videos/video_1' });
      res.end(body);
    });
    const res = await fetch(`${gw.baseURL}/videos`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ALICE_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'sora-2', prompt: 'a wave' }),
    });
    expect(res.status).toBe(201);
    expect(res.headers.get('location')).toBeNull();
    expect(res.headers.get('content-location')).toBeNull();
    await res.text();
  });
});
