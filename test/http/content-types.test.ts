// Which endpoints take forms. As in the OpenAI API (and what its SDKs send), multipart/form-data is for uploads
// only: images/edits, audio transcriptions and translations, and videos create (which also takes JSON). A form
// sent to a JSON-only endpoint is refused with 415 before its body is read, so it cannot borrow the larger upload
// limit there; the upload endpoints keep working with the official SDK.
import { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRecordingUpstream, type RecordingUpstream } from '../fakes/recording-upstream.js';
import { FakeVideoResponsesUpstream } from '../fakes/video-responses-upstream.js';
import { expectOpenAIError, httpRequest, rawRequest } from '../hardening/support.js';
import { ALICE_KEY, standardManifests, startGateway, type TestGateway } from '../helpers/gateway.js';
import { ALICE, sealedManifests } from '../helpers/sealed-setup.js';

let upstream: RecordingUpstream;
let gw: TestGateway;
beforeAll(async () => {
  upstream = await startRecordingUpstream();
  gw = await startGateway(standardManifests(upstream.baseURL), { bodyLimits: { jsonBytes: 1 << 20, multipartBytes: 64 << 20 } });
});
afterAll(async () => {
  await gw?.close();
  await upstream?.close();
});

const FORM = 'multipart/form-data; boundary=xyz';
const formBody = (model: string) => `--xyz\r\nContent-Disposition: form-data; name="model"\r\n\r\n${model}\r\n--xyz--\r\n`;

const JSON_ONLY: [string, string][] = [
  ['/chat/completions', 'gpt-4o-mini'],
  ['/responses', 'gpt-4o-mini'],
  ['/embeddings', 'text-embedding-3-small'],
  ['/images/generations', 'org/image-model'],
  ['/audio/speech', 'tts-1'],
];

describe('forms on JSON-only endpoints', () => {
  it.each(JSON_ONLY)('POST %s with a form (model %s) → 415 unsupported_content_type, nothing forwarded', async (path, model) => {
    const before = upstream.requests.length;
    const res = await fetch(`${gw.baseURL}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ALICE_KEY}`, 'content-type': FORM },
      body: formBody(model),
    });
    const r = { status: res.status, headers: res.headers, json: (await res.json()) as any };
    expectOpenAIError(r, 415, 'unsupported_content_type');
    expect(r.json.error.type).toBe('invalid_request_error');
    expect(r.json.error.message).toContain(`/v1${path}`);
    expect(r.json.error.message).toContain('multipart/form-data');
    expect(r.json.error.message).not.toContain('boundary');
    expect(upstream.requests.length).toBe(before);
  });

  it('is refused before the body is read: a 50 MB form declared, only its head sent, answered at once', async () => {
    // Under the old behaviour this waited for 50 MB that never came (the upload limit applied); now the status
    // line comes back without a byte of the body, and the connection is closed.
    const head = httpRequest('POST', '/v1/chat/completions', {
      Authorization: `Bearer ${ALICE_KEY}`,
      'Content-Type': FORM,
      'Content-Length': String(50 << 20),
    });
    const reply = await rawRequest(gw.origin, [head], { waitMs: 2_000 });
    expect(reply.status).toBe(415);
    expect(reply.json.error.code).toBe('unsupported_content_type');
    expect(reply.headers['connection']).toBe('close');
    expect(reply.closed).toBe(true);
  });

  it('other multipart types are refused too; JSON with a charset, text/plain and no type are still read as JSON', async () => {
    const post = (type: string | undefined, body: string) =>
      fetch(`${gw.baseURL}/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ALICE_KEY}`, ...(type ? { 'content-type': type } : {}) },
        body: new Blob([body]),
      });
    const json = JSON.stringify({ model: 'gpt-4o-mini', messages: [] });
    expect((await post('multipart/mixed; boundary=xyz', formBody('gpt-4o-mini'))).status).toBe(415);
    expect((await post('application/json; charset=utf-8', json)).status).toBe(200);
    expect((await post('text/plain', json)).status).toBe(200);
    expect((await post(undefined, json)).status).toBe(200);
  });
});

describe('upload endpoints keep taking forms (official SDK)', () => {
  it('images.edit, audio transcriptions and translations, videos create (form and JSON)', async () => {
    const client = gw.client();
    const file = () => toFile(Buffer.from('RIFF....WAVEfmt '), 'a.wav', { type: 'audio/wav' });
    expect((await client.audio.transcriptions.create({ model: 'whisper-1', file: await file() })).text).toBe('transcribed by upstream-whisper');
    expect((await client.audio.translations.create({ model: 'whisper-1', file: await file() })).text).toBe('transcribed by upstream-whisper');
    const png = await toFile(Buffer.from('\x89PNG\r\n\x1a\n....', 'binary'), 'a.png', { type: 'image/png' });
    expect((await client.images.edit({ model: 'org/image-model', image: png, prompt: 'a hat' })).data?.length).toBe(1);
    const before = upstream.requests.length;
    const ref = await toFile(Buffer.from('\x89PNG\r\n\x1a\n....', 'binary'), 'ref.png', { type: 'image/png' });
    expect((await client.videos.create({ model: 'sora-2', prompt: 'a wave', input_reference: ref })).status).toBe('queued');
    expect(String(upstream.requests[before]!.headers['content-type'])).toMatch(/^multipart\/form-data/);
    // The SDK always sends a form here; OpenAI's API also takes the create call as JSON.
    const json = await fetch(`${gw.baseURL}/videos`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ALICE_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'sora-2', prompt: 'a wave' }),
    });
    expect(json.status).toBe(200);
    expect(String(upstream.requests[before + 1]!.headers['content-type'])).toMatch(/^application\/json/);
  });
});

describe('sealed follow-ups take JSON only', () => {
  it('a remix sent as a form → 415, nothing forwarded; as JSON (the SDK) it works', async () => {
    const video = await FakeVideoResponsesUpstream.start({ videoBytes: 1024 });
    const sgw = await startGateway(sealedManifests({ video: [video.baseURL], responses: video.baseURL }));
    try {
      const alice = sgw.client(ALICE);
      const v = await alice.videos.create({ model: 'sora-2', prompt: 'a wave' });
      const before = video.requests.length;
      const res = await fetch(`${sgw.baseURL}/videos/${encodeURIComponent(v.id)}/remix`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ALICE}`, 'content-type': FORM },
        body: `--xyz\r\nContent-Disposition: form-data; name="prompt"\r\n\r\nbigger\r\n--xyz--\r\n`,
      });
      expectOpenAIError({ status: res.status, headers: res.headers, json: await res.json() }, 415, 'unsupported_content_type');
      expect(video.requests.length).toBe(before);
      expect((await alice.videos.remix(v.id, { prompt: 'bigger' })).remixed_from_video_id).toBe(v.id);
    } finally {
      await sgw.close();
      await video.close();
    }
  });
});
