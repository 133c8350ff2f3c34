// Every POST family through the real stack with the official SDK: the upstream receives the rewritten model,
// the backend's key (never the client's), and upload files byte for byte.
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toFile } from 'openai';
import { SPEECH_BYTES, startRecordingUpstream, type RecordedRequest, type RecordingUpstream } from '../fakes/recording-upstream.js';
import { ALICE_KEY, standardManifests, startGateway, UPSTREAM_KEY, type TestGateway } from '../helpers/gateway.js';

let upstream: RecordingUpstream;
let gw: TestGateway;

beforeAll(async () => {
  upstream = await startRecordingUpstream();
  gw = await startGateway(standardManifests(upstream.baseURL));
});
afterAll(async () => {
  await gw?.close();
  await upstream?.close();
});

function last(path: string): RecordedRequest {
  const r = [...upstream.requests].reverse().find((x) => x.path === path);
  if (!r) throw new Error(`upstream saw no request on ${path}`);
  return r;
}

function expectCredentialSwap(r: RecordedRequest): void {
  expect(r.headers.authorization).toBe(`Bearer ${UPSTREAM_KEY}`);
  const raw = JSON.stringify(r.headers) + r.body.toString('latin1');
  expect(raw).not.toContain(ALICE_KEY);
}

async function formOf(r: RecordedRequest): Promise<FormData> {
  return new Response(new Uint8Array(r.body), { headers: { 'content-type': String(r.headers['content-type']) } }).formData();
}

/** Deterministic pseudo-random bytes, every value 0-255 included, so encoding slips would show. */
function binary(size: number): Buffer {
  const b = Buffer.alloc(size);
  let x = 7;
  for (let i = 0; i < size; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    b[i] = (x >>> 16) & 0xff;
  }
  return b;
}

describe('POST families through the SDK', () => {
  it('chat completions: model rewritten, key swapped, gateway headers set', async () => {
    const { data, response } = await gw
      .client()
      .chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] })
      .withResponse();
    expect(data.choices[0]?.message.content).toBe('Hello from upstream');
    expect(data.model).toBe('upstream-chat');
    const r = last('/v1/chat/completions');
    expect(JSON.parse(r.body.toString()).model).toBe('upstream-chat');
    expect(JSON.parse(r.body.toString()).messages).toEqual([{ role: 'user', content: 'hi' }]);
    expectCredentialSwap(r);
    expect(response.headers.get('x-model-gateway-backend')).toBe('primary');
    expect(response.headers.get('x-model-gateway-attempts')).toBe('1');
    expect(response.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(response.headers.get('x-upstream-request-id')).toBe('upstream-req-1');
    expect(response.headers.get('server-timing')).toMatch(/^gateway;dur=[\d.]+, upstream;dur=[\d.]+$/);
    // The upstream got the gateway's request id, not whatever else.
    expect(r.headers['x-request-id']).toBe(response.headers.get('x-request-id'));
  });

  it('responses create', async () => {
    const resp = await gw.client().responses.create({ model: 'gpt-4o-mini', input: 'hello' });
    expect(resp.output_text).toBe('Hi there');
    const r = last('/v1/responses');
    expect(JSON.parse(r.body.toString())).toMatchObject({ model: 'upstream-chat', input: 'hello' });
    expectCredentialSwap(r);
  });

  it('embeddings', async () => {
    const e = await gw.client().embeddings.create({ model: 'text-embedding-3-small', input: 'abc', encoding_format: 'float' });
    expect(e.data[0]?.embedding).toEqual([0.1, 0.2, 0.3]);
    const r = last('/v1/embeddings');
    expect(JSON.parse(r.body.toString()).model).toBe('upstream-embed');
    expectCredentialSwap(r);
  });

  it('images.generate on a model id containing "/"', async () => {
    const img = await gw.client().images.generate({ model: 'org/image-model', prompt: 'a cat' });
    expect(Buffer.from(img.data?.[0]?.b64_json ?? '', 'base64').toString()).toBe('image by upstream-image');
    expect(JSON.parse(last('/v1/images/generations').body.toString()).model).toBe('upstream-image');
  });

  it('images.edit: multipart re-encoded, file byte-identical, model field rewritten', async () => {
    const png = binary(70_000);
    const img = await gw.client().images.edit({
      model: 'org/image-model',
      image: await toFile(png, 'input "image".png', { type: 'image/png' }),
      prompt: 'add a hat',
    });
    expect(img.data?.[0]?.b64_json).toBeTruthy();
    const r = last('/v1/images/edits');
    expectCredentialSwap(r);
    const form = await formOf(r);
    expect(form.get('model')).toBe('upstream-image');
    expect(form.get('prompt')).toBe('add a hat');
    const file = form.get('image') as File;
    expect(file.name).toBe('input "image".png');
    expect(file.type).toBe('image/png');
    expect(Buffer.from(await file.arrayBuffer()).equals(png)).toBe(true);
  });

  for (const kind of ['transcriptions', 'translations'] as const) {
    it(`audio.${kind}: file byte-identical, model rewritten in the multipart field`, async () => {
      const audio = binary(123_457);
      const client = gw.client();
      const file = await toFile(audio, 'speech.wav', { type: 'audio/wav' });
      const out =
        kind === 'transcriptions'
          ? await client.audio.transcriptions.create({ model: 'whisper-1', file, language: 'en' })
          : await client.audio.translations.create({ model: 'whisper-1', file });
      expect(out.text).toBe('transcribed by upstream-whisper');
      const r = last(`/v1/audio/${kind}`);
      expectCredentialSwap(r);
      const form = await formOf(r);
      expect(form.get('model')).toBe('upstream-whisper');
      expect(form.getAll('model')).toHaveLength(1);
      const sent = form.get('file') as File;
      expect(sent.name).toBe('speech.wav');
      expect(Buffer.from(await sent.arrayBuffer()).equals(audio)).toBe(true);
      if (kind === 'transcriptions') expect(form.get('language')).toBe('en');
    });
  }

  it('audio.speech: binary bytes and the upstream content type', async () => {
    const res = await gw.client().audio.speech.create({ model: 'tts-1', voice: 'alloy', input: 'hello' });
    expect(res.headers.get('content-type')).toBe('audio/mpeg');
    expect(Buffer.from(await res.arrayBuffer()).equals(SPEECH_BYTES)).toBe(true);
    const r = last('/v1/audio/speech');
    expect(JSON.parse(r.body.toString())).toMatchObject({ model: 'upstream-tts', voice: 'alloy', input: 'hello' });
    expectCredentialSwap(r);
  });

  it('videos.create', async () => {
    const v = await gw.client().videos.create({ model: 'sora-2', prompt: 'a wave' });
    expect(v).toMatchObject({ object: 'video', model: 'upstream-sora', status: 'queued' });
    // The upstream id comes back sealed (see test/http/sealed-ids.test.ts).
    expect(v.id).toMatch(/^video_[A-Za-z0-9_-]{40,}$/);
    expect(v.id).not.toBe('video_abc');
    const r = last('/v1/videos');
    expectCredentialSwap(r);
    const type = String(r.headers['content-type']);
    const model = type.startsWith('multipart/') ? (await formOf(r)).get('model') : JSON.parse(r.body.toString()).model;
    expect(model).toBe('upstream-sora');
  });

  it('forwards the client bytes untouched when the upstream model name is the public one', async () => {
    const yaml = standardManifests(upstream.baseURL).replace('model: upstream-chat', 'model: gpt-4o-mini');
    gw.load(yaml);
    try {
      const body = '{"model":"gpt-4o-mini",  "messages":[{"role":"user","content":"raw"}]}';
      const res = await fetch(`${gw.baseURL}/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ALICE_KEY}`, 'content-type': 'application/json' },
        body,
      });
      expect(res.status).toBe(200);
      expect(last('/v1/chat/completions').body.toString()).toBe(body);
    } finally {
      gw.load(standardManifests(upstream.baseURL));
    }
  });

  it('strips hop-by-hop and client credential headers on the way up', async () => {
    // node:http rather than fetch: fetch itself refuses to send a Connection header.
    const body = JSON.stringify({ model: 'text-embedding-3-small', input: 'x' });
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(
        `${gw.baseURL}/embeddings`,
        {
          method: 'POST',
          headers: {
            authorization: `Bearer ${ALICE_KEY}`,
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(body),
            'x-api-key': ALICE_KEY,
            'openai-organization': 'org-client',
            'x-custom': 'kept',
            connection: 'keep-alive, x-hop',
            'x-hop': 'dropped',
          },
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        },
      );
      req.on('error', reject);
      req.end(body);
    });
    expect(status).toBe(200);
    const r = last('/v1/embeddings');
    expect(r.headers['x-custom']).toBe('kept');
    expect(r.headers['x-hop']).toBeUndefined();
    expect(r.headers['x-api-key']).toBeUndefined();
    expect(r.headers['openai-organization']).toBeUndefined();
    expectCredentialSwap(r);
  });
});
