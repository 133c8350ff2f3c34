// Malformed request bodies through the real HTTP stack: every one gets an OpenAI-shaped 4xx, none reaches
// the upstream, none crashes the process or hangs.
import { gzipSync } from 'node:zlib';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startRecordingUpstream, type RecordingUpstream } from '../fakes/recording-upstream.js';
import { ALICE_KEY, standardManifests, startGateway, type TestGateway } from '../helpers/gateway.js';
import { expectOpenAIError, processTripwire, readAnswer } from './support.js';

let upstream: RecordingUpstream;
let gw: TestGateway;
let tripwire: ReturnType<typeof processTripwire>;

beforeAll(async () => {
  upstream = await startRecordingUpstream();
  gw = await startGateway(standardManifests(upstream.baseURL), { bodyLimits: { jsonBytes: 4 << 20, multipartBytes: 1 << 20 } });
  tripwire = processTripwire();
});
afterAll(async () => {
  tripwire.remove();
  await gw?.close();
  await upstream?.close();
});
afterEach(() => {
  // An escaped error is a crashed process in production, whatever the HTTP answer was.
  expect(tripwire.escaped.splice(0)).toEqual([]);
});

async function post(path: string, body: string | Buffer, headers: Record<string, string> = {}) {
  const res = await fetch(`${gw.origin}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ALICE_KEY}`, 'content-type': 'application/json', ...headers },
    body: new Uint8Array(typeof body === 'string' ? Buffer.from(body) : body),
  });
  return readAnswer(res);
}

const upstreamCount = () => upstream.requests.length;
const MP = { 'content-type': 'multipart/form-data; boundary=xyz' };
const part = (name: string, value: string, filename?: string) =>
  `--xyz\r\nContent-Disposition: form-data; name="${name}"${filename ? `; filename="${filename}"` : ''}\r\n\r\n${value}\r\n`;

describe('multipart', () => {
  it('a body truncated inside a file part → 400, and the process survives', async () => {
    // Regression: busboy errors the open file stream too; with no listener on it that was an uncaught
    // 'error' event, i.e. one truncated upload crashed the gateway.
    const before = upstreamCount();
    const body = `${part('model', 'whisper-1')}--xyz\r\nContent-Disposition: form-data; name="file"; filename="a.wav"\r\n\r\nRIFF....`;
    const r = await post('/v1/audio/transcriptions', body, MP);
    expectOpenAIError(r, 400, 'invalid_multipart');
    await new Promise((resolve) => setImmediate(resolve)); // let a late 'error' event surface before afterEach looks
    expect(upstreamCount()).toBe(before);
  });

  it.each([
    ['no boundary parameter', 'multipart/form-data', part('model', 'whisper-1')],
    ['a boundary that never appears', 'multipart/form-data; boundary=other', `${part('model', 'whisper-1')}--xyz--\r\n`],
    ['no closing delimiter', MP['content-type'], part('model', 'whisper-1')],
    ['a part without headers', MP['content-type'], '--xyz\r\n\r\nvalue\r\n--xyz--\r\n'],
  ])('%s → 400 invalid_multipart', async (_name, contentType, body) => {
    expectOpenAIError(await post('/v1/audio/transcriptions', body, { 'content-type': contentType }), 400, 'invalid_multipart');
  });

  it('model only as a file part, or absent → 400 missing model', async () => {
    for (const body of [`${part('model', 'whisper-1', 'm.txt')}--xyz--\r\n`, `${part('file', 'abc', 'a.wav')}--xyz--\r\n`]) {
      const r = await post('/v1/audio/transcriptions', body, MP);
      expectOpenAIError(r, 400, 'missing_required_parameter');
    }
  });

  it('a model field after a large file still routes, with the file intact', async () => {
    const bytes = Buffer.alloc(600_000, 7);
    const form = new FormData();
    form.append('file', new Blob([bytes]), 'a.wav');
    form.append('model', 'whisper-1');
    const res = await fetch(`${gw.baseURL}/audio/transcriptions`, { method: 'POST', headers: { authorization: `Bearer ${ALICE_KEY}` }, body: form });
    expect(res.status).toBe(200);
    const seen = upstream.requests.at(-1)!;
    expect(seen.body.includes(bytes)).toBe(true);
  });

  it('a field name of 5,000 characters is forwarded whole', async () => {
    const name = 'n'.repeat(5000);
    const r = await post('/v1/audio/transcriptions', `${part(name, 'v') + part('model', 'whisper-1')}--xyz--\r\n`, MP);
    expect(r.status).toBe(200);
    expect(upstream.requests.at(-1)!.body.toString('latin1')).toContain(`name="${name}"`);
  });
});

describe('JSON', () => {
  it.each([
    ['empty body', '', 'invalid_json'],
    ['a byte-order mark before the object', '\uFEFF{"model":"gpt-4o-mini"}', 'invalid_json'],
    ['null', 'null', 'invalid_json'],
    ['an array', '[{"model":"gpt-4o-mini"}]', 'invalid_json'],
    ['a string', '"gpt-4o-mini"', 'invalid_json'],
    ['model a number', '{"model":4}', 'missing_required_parameter'],
    ['model an object', '{"model":{"id":"gpt-4o-mini"}}', 'missing_required_parameter'],
    ['model empty', '{"model":""}', 'missing_required_parameter'],
    ['truncated', '{"model":"gpt-4o-mini","messages":[', 'invalid_json'],
  ])('%s → 400', async (_name, body, code) => {
    const before = upstreamCount();
    expectOpenAIError(await post('/v1/chat/completions', body), 400, code);
    expect(upstreamCount()).toBe(before);
  });

  it('a huge model name → 404 with the name truncated in the message', async () => {
    const r = await post('/v1/chat/completions', JSON.stringify({ model: 'm'.repeat(100_000) }));
    expectOpenAIError(r, 404, 'model_not_found');
    expect(r.text.length).toBeLessThan(1_000);
  });

  it('nesting too deep to re-serialise → 400, not a 502 blamed on the upstream', async () => {
    // The route rewrites the model, so the gateway re-serialises the body; JSON.parse took the nesting,
    // JSON.stringify overflows the stack. Regression: that RangeError surfaced as 502 upstream_error.
    const depth = 200_000;
    const before = upstreamCount();
    const r = await post('/v1/chat/completions', `{"model":"gpt-4o-mini","x":${'['.repeat(depth)}${']'.repeat(depth)}}`);
    expectOpenAIError(r, 400, 'invalid_json');
    expect(r.json.error.message).toMatch(/nested too deeply/);
    expect(upstreamCount()).toBe(before);
  });

  it('bytes that are not UTF-8 inside a string are forwarded, not refused', async () => {
    const body = Buffer.concat([Buffer.from('{"model":"gpt-4o-mini","messages":[{"role":"user","content":"'), Buffer.from([0xff, 0xc3]), Buffer.from('"}]}')]);
    expect((await post('/v1/chat/completions', body)).status).toBe(200);
  });

  it('a missing or non-JSON content type is read as JSON', async () => {
    const body = JSON.stringify({ model: 'gpt-4o-mini', messages: [] });
    expect((await post('/v1/chat/completions', body, { 'content-type': 'text/plain' })).status).toBe(200);
    const res = await fetch(`${gw.baseURL}/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${ALICE_KEY}` }, body: new Blob([body]) });
    expect(res.status).toBe(200);
  });
});

describe('Content-Encoding', () => {
  const body = JSON.stringify({ model: 'gpt-4o-mini', messages: [] });

  it.each([
    ['gzip (JSON)', gzipSync(body), { 'content-encoding': 'gzip' }],
    ['gzip (multipart)', gzipSync(`${part('model', 'whisper-1')}--xyz--\r\n`), { 'content-encoding': 'gzip', ...MP }],
    ['br', Buffer.from(body), { 'content-encoding': 'br' }],
    ['an unknown coding on a plain body', Buffer.from(body), { 'content-encoding': 'bogus' }],
  ])('%s → 415 that says so, nothing forwarded', async (_name, bytes, headers: Record<string, string>) => {
    // Regression: gzip was reported as "not valid JSON", and a plain body with a bogus Content-Encoding
    // was forwarded upstream with that header on it.
    const before = upstreamCount();
    const path = headers['content-type'] ? '/v1/audio/transcriptions' : '/v1/chat/completions';
    const r = await post(path, bytes, headers);
    expectOpenAIError(r, 415, 'unsupported_content_encoding');
    expect(upstreamCount()).toBe(before);
  });

  it('identity is accepted', async () => {
    expect((await post('/v1/chat/completions', body, { 'content-encoding': 'identity' })).status).toBe(200);
  });
});
