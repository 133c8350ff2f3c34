// The gateway reads answers (to seal ids, count tokens, mask credentials), so it asks upstreams for identity. An
// upstream that compresses anyway is decoded (gzip, deflate, br, zstd), and one in a coding the gateway cannot
// decode is refused with a 502 wherever ids or credentials must be checked, never relayed raw.
import type { IncomingMessage, ServerResponse } from 'node:http';
import zlib from 'node:zlib';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startRecordingUpstream, type RecordingUpstream } from '../fakes/recording-upstream.js';
import { ALICE_KEY, extraRoute, standardManifests, startGateway, UPSTREAM_KEY, type TestGateway } from '../helpers/gateway.js';
import { expectOpenAIError } from './support.js';

const ENCODE: Record<string, (b: Buffer) => Buffer> = {
  gzip: (b) => zlib.gzipSync(b),
  deflate: (b) => zlib.deflateSync(b),
  br: (b) => zlib.brotliCompressSync(b),
  zstd: (b) => zlib.zstdCompressSync(b),
};

let upstream: RecordingUpstream;
let gw: TestGateway;
beforeAll(async () => {
  upstream = await startRecordingUpstream();
  // A backend without a key, for the one case where a body the gateway cannot decode may still pass.
  gw = await startGateway(standardManifests(upstream.baseURL, extraRoute('extra-keyless', [{ name: 'plain', baseURL: upstream.baseURL }])));
});
afterAll(async () => {
  await gw?.close();
  await upstream?.close();
});
afterEach(() => {
  for (const p of ['/v1/responses', '/v1/responses/resp_1', '/v1/chat/completions', '/v1/audio/speech']) upstream.override(p, undefined);
});

/** Answers with `body` compressed as `coding` (applied in the order listed). */
function compressed(coding: string, status: number, contentType: string, body: string | ((req: IncomingMessage) => string)) {
  return (req: IncomingMessage, res: ServerResponse) => {
    let bytes: Buffer = Buffer.from(typeof body === 'string' ? body : body(req));
    for (const c of coding.split(',').map((s) => s.trim())) bytes = ENCODE[c]!(bytes);
    res.writeHead(status, { 'content-type': contentType, 'content-encoding': coding, 'content-length': bytes.length });
    res.end(bytes);
  };
}

async function inputTokens(): Promise<number> {
  const m = /gen_ai_client_token_usage_sum\{family="chat.completions",model="gpt-4o-mini",group="team-a",type="input"\} (\d+)/.exec(
    await gw.metrics.registry.metrics(),
  );
  return Number(m?.[1] ?? 0);
}

const RESPONSE = JSON.stringify({
  id: 'resp_1',
  object: 'response',
  status: 'completed',
  model: 'upstream-chat',
  output: [],
  usage: { input_tokens: 5, output_tokens: 3, total_tokens: 8 },
});

describe('compressed upstream answers', () => {
  it('the gateway asks for identity, whatever the client accepts', async () => {
    const res = await fetch(`${gw.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ALICE_KEY}`, 'content-type': 'application/json', 'accept-encoding': 'gzip, br, zstd' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [] }),
    });
    expect(res.status).toBe(200);
    expect(upstream.requests.at(-1)!.headers['accept-encoding']).toBe('identity');
  });

  it.each(['gzip', 'deflate', 'br', 'zstd', 'gzip, br'])('%s: a Response’s id is sealed and its follow-up reaches the upstream id', async (coding) => {
    upstream.override('/v1/responses', compressed(coding, 200, 'application/json', RESPONSE));
    const { data: created, response } = await gw.client().responses.create({ model: 'gpt-4o-mini', input: 'hi' }).withResponse();
    expect(created.id).toMatch(/^resp_/);
    expect(created.id).not.toBe('resp_1');
    expect(response.headers.get('content-encoding')).toBeNull();
    upstream.override('/v1/responses/resp_1', compressed(coding, 200, 'application/json', RESPONSE));
    const again = await gw.client().responses.retrieve(created.id);
    expect(upstream.requests.at(-1)!.path).toBe('/v1/responses/resp_1');
    expect(again.id).toBe(created.id);
  });

  it('a compressed Responses event stream has its ids sealed', async () => {
    const events = [
      { type: 'response.created', sequence_number: 0, response: { id: 'resp_1', object: 'response', status: 'in_progress', output: [] } },
      { type: 'response.completed', sequence_number: 1, response: { id: 'resp_1', object: 'response', status: 'completed', output: [] } },
    ];
    const sse = events.map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join('');
    upstream.override('/v1/responses', compressed('gzip', 200, 'text/event-stream', sse));
    const ids: string[] = [];
    for await (const e of await gw.client().responses.create({ model: 'gpt-4o-mini', input: 'hi', stream: true })) {
      if (e.type === 'response.created' || e.type === 'response.completed') ids.push(e.response.id);
    }
    expect(ids).toHaveLength(2);
    expect(ids[0]).toMatch(/^resp_/);
    expect(ids[0]).not.toBe('resp_1');
    expect(ids[1]).toBe(ids[0]);
  });

  it('token usage is read from a compressed answer', async () => {
    upstream.override(
      '/v1/chat/completions',
      compressed(
        'deflate',
        200,
        'application/json',
        JSON.stringify({
          id: 'c',
          object: 'chat.completion',
          created: 1,
          model: 'm',
          choices: [],
          usage: { prompt_tokens: 1234, completion_tokens: 56, total_tokens: 1290 },
        }),
      ),
    );
    const before = await inputTokens();
    const completion = await gw.client().chat.completions.create({ model: 'gpt-4o-mini', messages: [] });
    expect(completion.usage?.prompt_tokens).toBe(1234);
    expect((await inputTokens()) - before).toBe(1234);
  });

  it('a compressed 403 quoting the backend key is decoded and masked', async () => {
    upstream.override(
      '/v1/chat/completions',
      compressed('br', 403, 'application/json', (req) =>
        JSON.stringify({
          error: { message: `bad key ${String(req.headers.authorization)}`, type: 'invalid_request_error', param: null, code: 'invalid_api_key' },
        }),
      ),
    );
    const res = await fetch(`${gw.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ALICE_KEY}`, 'content-type': 'application/json', 'accept-encoding': 'identity' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [] }),
    });
    expect(res.status).toBe(403);
    expect(res.headers.get('content-encoding')).toBeNull();
    expect(((await res.json()) as any).error.message).toBe(`bad key Bearer ${'*'.repeat(UPSTREAM_KEY.length)}`);
  });

  it('a coding the gateway cannot decode is refused where ids or credentials must be checked', async () => {
    upstream.override('/v1/responses', (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'compress' });
      res.end(Buffer.from([0x1f, 0x9d, 0x90, 0x7b]));
    });
    const res = await fetch(`${gw.baseURL}/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ALICE_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', input: 'hi' }),
    });
    const r = { status: res.status, headers: res.headers, json: (await res.json()) as any };
    expectOpenAIError(r, 502, 'upstream_error');
    expect(r.json.error.message).toContain('Content-Encoding');
  });

  it('… and passes as it came where the gateway has nothing to check (no key, no ids)', async () => {
    const bytes = Buffer.from([0x1f, 0x9d, 0x90, 0x01, 0x02]);
    upstream.override('/v1/audio/speech', (_req, res) => {
      res.writeHead(200, { 'content-type': 'audio/mpeg', 'content-encoding': 'x-custom', 'content-length': bytes.length });
      res.end(bytes);
    });
    const res = await fetch(`${gw.baseURL}/audio/speech`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ALICE_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'extra-keyless', input: 'hi', voice: 'alloy' }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-encoding')).toBe('x-custom');
    expect(Buffer.from(await res.arrayBuffer())).toEqual(bytes);
  });
});
