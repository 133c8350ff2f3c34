// The model the gateway authorizes must be the model the upstream serves. Parsers disagree on duplicate keys
// (JSON.parse and starlette keep the last, busboy and others the first), so a body naming the model twice
// must never reach an upstream as the client wrote it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readJsonBody } from '../../src/dataplane/request/json-body.js';
import { WantedKeys } from '../../src/dataplane/request/json-scan.js';
import { startRecordingUpstream, type RecordingUpstream } from '../fakes/recording-upstream.js';
import { ALICE_KEY, extraRoute, standardManifests, startGateway, type TestGateway } from '../helpers/gateway.js';
import { expectOpenAIError } from './support.js';

let upstream: RecordingUpstream;
let gw: TestGateway;

beforeAll(async () => {
  upstream = await startRecordingUpstream();
  // Upstream name = public name: the only case where the client's bytes are forwarded untouched.
  const same = extraRoute('extra-same', [{ name: 'same', baseURL: upstream.baseURL, model: 'extra-same' }]);
  gw = await startGateway(standardManifests(upstream.baseURL, same));
});
afterAll(async () => {
  await gw?.close();
  await upstream?.close();
});

async function post(path: string, body: string, contentType = 'application/json') {
  const res = await fetch(`${gw.baseURL}${path}`, { method: 'POST', headers: { authorization: `Bearer ${ALICE_KEY}`, 'content-type': contentType }, body });
  return { status: res.status, headers: res.headers, json: (await res.json()) as any };
}

/** Every `"model": "…"` value in the body the upstream received, in order (what a first-wins parser would take first). */
function modelsSeenUpstream(): string[] {
  const body = upstream.requests.at(-1)!.body.toString('utf8');
  return [...body.matchAll(/"(?:model|mod\\u0065l)"\s*:\s*"([^"]*)"/g)].map((m) => m[1]!);
}

describe('JSON with an ambiguous model', () => {
  it.each([
    ['a duplicate key', '{"model":"forbidden-model","model":"extra-same","messages":[]}'],
    ['a key spelled with escapes', '{"mod\\u0065l":"forbidden-model","model":"extra-same","messages":[]}'],
  ])('%s: the upstream sees only the authorized model', async (_name, body) => {
    // Regression: the raw bytes were forwarded, so a first-wins upstream would read forbidden-model, a model
    // this token may not use, on the gateway's upstream credentials.
    const r = await post('/chat/completions', body);
    expect(r.status).toBe(200);
    expect(modelsSeenUpstream()).toEqual(['extra-same']);
  });

  it('an unambiguous body is still forwarded byte for byte', async () => {
    const body = '{"model":"extra-same",  "messages":[],"seed":12345678901234567890}';
    expect((await post('/chat/completions', body)).status).toBe(200);
    expect(upstream.requests.at(-1)!.body.toString('utf8')).toBe(body);
  });

  it('any other member the gateway reads goes upstream as the gateway read it (here previous_response_id)', async () => {
    // A first-wins upstream would otherwise read an id the gateway never checked.
    const r = await post('/chat/completions', '{"model":"extra-same","messages":[],"previous_response_id":"resp_foreign","previous_response_id":null}');
    expect(r.status).toBe(200);
    const seen = upstream.requests.at(-1)!.body.toString('utf8');
    expect(JSON.parse(seen)).toEqual({ model: 'extra-same', messages: [], previous_response_id: null });
    expect(seen).not.toContain('resp_foreign');
  });

  it('a nested "model" key (a tool schema) is not the top-level one: the bytes still go as they came', async () => {
    // (Re-serialised, the spacing and the seed JSON.parse rounds would change.)
    const body =
      '{"model":"extra-same", "seed":12345678901234567890, "tools":[{"type":"function","function":{"name":"f","parameters":{"properties":{"model":{"type":"string"}}}}}]}';
    expect((await post('/chat/completions', body)).status).toBe(200);
    expect(upstream.requests.at(-1)!.body.toString('utf8')).toBe(body);
  });

  it('a renamed model is spliced in: every other byte is the client’s', async () => {
    // Regression: the body was re-serialised from JSON.parse's tree, so a seed above 2^53 reached the upstream rounded.
    const body = '{"model":"gpt-4o-mini" , "seed":12345678901234567890,\n"messages":[]}';
    expect((await post('/chat/completions', body)).status).toBe(200);
    expect(upstream.requests.at(-1)!.body.toString('utf8')).toBe('{"model":"upstream-chat" , "seed":12345678901234567890,\n"messages":[]}');
  });

  it('the check is exact: only top-level keys count, escapes decoded', async () => {
    const plain = async (text: string) => (await readJsonBody(Buffer.from(text), new WantedKeys(['model']))).isPlain('model');
    expect(await plain('{"model":"a","messages":[{"content":"caf\\u00e9 \\"model\\""}]}')).toBe(true);
    expect(await plain('{"model":"a","model":"b"}')).toBe(false);
    expect(await plain('{"\\u006dodel":"a","model":"b"}')).toBe(false);
    expect(await plain('{"\\u006dodel":"a"}')).toBe(false);
    expect(await plain('{"model":"a","tools":[{"parameters":{"properties":{"model":{}}}}]}')).toBe(true);
  });
});

describe('multipart with the model field twice', () => {
  const form = (first: string, second: string) =>
    `--xyz\r\nContent-Disposition: form-data; name="model"\r\n\r\n${first}\r\n--xyz\r\nContent-Disposition: form-data; name="file"; filename="a.wav"\r\n\r\nRIFF\r\n--xyz\r\nContent-Disposition: form-data; name="model"\r\n\r\n${second}\r\n--xyz--\r\n`;

  it('→ 400, nothing forwarded (busboy keeps the first, starlette/FastAPI upstreams the last)', async () => {
    const before = upstream.requests.length;
    for (const model of ['whisper-1', 'extra-same']) {
      const r = await post('/audio/transcriptions', form(model, 'forbidden-model'), 'multipart/form-data; boundary=xyz');
      expectOpenAIError(r, 400, 'invalid_request');
      expect(r.json.error.param).toBe('model');
    }
    expect(upstream.requests.length).toBe(before);
  });
});
