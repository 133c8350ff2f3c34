// The upload and media families as the official SDK uses them beyond the basics of families.test.ts: several
// images and a mask in one edit, transcriptions answered in text, srt or vtt, the event streams of transcriptions,
// speech and images, and the SDK's own retry of an upload. A fake upstream on loopback answers as each test says.
import { createHash } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listenOnLoopback } from '../fakes/loopback.js';
import { ALICE_KEY, standardManifests, startGateway, type TestGateway } from '../helpers/gateway.js';

type Answer = (res: ServerResponse, body: Buffer) => void;
interface Seen {
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
}

let answer: Answer;
const seen: Seen[] = [];
let gw: TestGateway;
let closeUpstream: () => Promise<void>;

beforeAll(async () => {
  const server = createServer(async (req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks);
    seen.push({ path: req.url ?? '', headers: req.headers, body });
    answer(res, body);
  });
  const upstream = await listenOnLoopback(server);
  closeUpstream = upstream.close;
  gw = await startGateway(standardManifests(`${upstream.origin}/v1`));
});
afterAll(async () => {
  await gw?.close();
  await closeUpstream?.();
});

const record = (id: string | null) => gw.record(id);

const formOf = (r: Seen) => new Response(new Uint8Array(r.body), { headers: { 'content-type': String(r.headers['content-type']) } }).formData();

const bytesOf = async (f: File | string | null) => Buffer.from(await (f as File).arrayBuffer());

function sse(res: ServerResponse, events: readonly object[]): void {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  for (const e of events) res.write(`event: ${(e as { type: string }).type}\ndata: ${JSON.stringify(e)}\n\n`);
  res.end();
}

function json(res: ServerResponse, status: number, body: object): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

describe('uploads through the SDK', () => {
  it('an edit of several images with a mask: every `image[]` part and the mask reach the upstream byte for byte, in order', async () => {
    answer = (res) => json(res, 200, { created: 1, data: [{ b64_json: 'AA==' }] });
    const first = Buffer.from([0x00, 0xff, 0x80, 0x0d, 0x0a, 0x2d, 0x2d]);
    const second = Buffer.from([0xc3, 0x28, 0x00, 0x01]);
    const mask = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0xff]);
    const images = [await toFile(first, 'café.png', { type: 'image/png' }), await toFile(second)];
    await gw.client().images.edit({ model: 'org/image-model', prompt: 'merge', image: images, mask: await toFile(mask, 'mask.png') });
    const form = await formOf(seen.at(-1)!);
    expect(form.get('model')).toBe('upstream-image');
    const sent = form.getAll('image[]') as File[];
    expect(sent.map((f) => f.name)).toEqual(['café.png', 'unknown_file']);
    expect(sent[0]?.type).toBe('image/png');
    expect(await bytesOf(sent[0]!)).toEqual(first);
    expect(await bytesOf(sent[1]!)).toEqual(second);
    expect(await bytesOf(form.get('mask'))).toEqual(mask);
  });

  it('a form whose model comes after a large file is routed; one with no model is refused naming `model`', async () => {
    answer = (res) => json(res, 200, { text: 'ok' });
    const form = new FormData();
    form.append('file', new Blob([Buffer.alloc(2 * 1024 * 1024, 3)]), 'long.wav');
    const post = () => fetch(`${gw.baseURL}/audio/transcriptions`, { method: 'POST', headers: { authorization: `Bearer ${ALICE_KEY}` }, body: form });
    const refused = await post();
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error: unknown }).error).toMatchObject({ type: 'invalid_request_error', param: 'model' });
    form.append('model', 'whisper-1');
    const routed = await post();
    expect(await routed.json()).toEqual({ text: 'ok' });
    expect((await formOf(seen.at(-1)!)).get('model')).toBe('upstream-whisper');
  });

  it("the upstream's error on an upload reaches the SDK as the upstream told it", async () => {
    answer = (res) => json(res, 400, { error: { message: 'Invalid file format.', type: 'invalid_request_error', param: 'file', code: 'invalid_value' } });
    const err = await gw
      .client()
      .audio.transcriptions.create({ model: 'whisper-1', file: await toFile(Buffer.alloc(10), 'a.wav') })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err).toMatchObject({ status: 400, message: '400 Invalid file format.', param: 'file', code: 'invalid_value' });
  });

  it("the SDK's retry of an upload after a 503 carries the same file, and succeeds", async () => {
    const audio = createHash('sha512').update('audio').digest();
    let calls = 0;
    answer = (res) => {
      if (calls++ === 0) json(res, 503, { error: { message: 'overloaded', type: 'server_error' } });
      else json(res, 200, { text: 'second time' });
    };
    const before = seen.length;
    const client = new OpenAI({ apiKey: ALICE_KEY, baseURL: gw.baseURL, maxRetries: 1, timeout: 10_000 });
    const out = await client.audio.transcriptions.create({ model: 'whisper-1', file: await toFile(audio, 'a.wav') });
    expect(out.text).toBe('second time');
    const attempts = seen.slice(before);
    expect(attempts).toHaveLength(2);
    for (const a of attempts) expect(await bytesOf((await formOf(a)).get('file'))).toEqual(audio);
  });
});

describe('text and streamed answers of the media families', () => {
  for (const format of ['text', 'srt', 'vtt'] as const) {
    it(`a transcription in ${format}: relayed as the upstream's text/plain, its usage an estimate with no seconds`, async () => {
      const text =
        format === 'vtt' ? 'WEBVTT\n\n00:00:00.000 --> 00:00:01.500\nhello\n' : format === 'srt' ? '1\n00:00:00,000 --> 00:00:01,500\nhello\n' : 'hello\n';
      answer = (res) => {
        res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
        res.end(text);
      };
      const file = await toFile(Buffer.alloc(16), 'a.wav');
      const { data, response } = await gw.client().audio.transcriptions.create({ model: 'whisper-1', file, response_format: format }).withResponse();
      expect(data).toBe(text);
      expect(response.headers.get('content-type')).toBe('text/plain; charset=utf-8');
      const r = await record(response.headers.get('x-request-id'));
      expect(r).toMatchObject({ family: 'audio.transcriptions', status: 200, estimated: true });
      expect(r['outputTokens']).toBeGreaterThan(0);
      expect(r['seconds']).toBeUndefined();
    });
  }

  it('a streamed transcription: its events relayed, the usage of transcript.text.done recorded exactly', async () => {
    answer = (res) =>
      sse(res, [
        { type: 'transcript.text.delta', delta: 'hel' },
        { type: 'transcript.text.delta', delta: 'lo' },
        { type: 'transcript.text.done', text: 'hello', usage: { type: 'tokens', input_tokens: 14, output_tokens: 45, total_tokens: 59 } },
      ]);
    const file = await toFile(Buffer.alloc(16), 'a.wav');
    const { data, response } = await gw.client().audio.transcriptions.create({ model: 'whisper-1', file, stream: true }).withResponse();
    const events = [];
    for await (const e of data) events.push(e.type === 'transcript.text.delta' ? e.delta : e.type);
    expect(events).toEqual(['hel', 'lo', 'transcript.text.done']);
    expect((await formOf(seen.at(-1)!)).get('stream')).toBe('true');
    expect(await record(response.headers.get('x-request-id'))).toMatchObject({ inputTokens: 14, outputTokens: 45, estimated: false });
  });

  it('speech as events (stream_format "sse"): relayed as an event stream, its token usage and input characters recorded', async () => {
    answer = (res) =>
      sse(res, [
        { type: 'speech.audio.delta', audio: 'AAAA' },
        { type: 'speech.audio.done', usage: { input_tokens: 3, output_tokens: 10, total_tokens: 13 } },
      ]);
    const res = await gw.client().audio.speech.create({ model: 'tts-1', voice: 'alloy', input: 'héllo', stream_format: 'sse' });
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    expect(await res.text()).toContain('"speech.audio.done"');
    expect(await record(res.headers.get('x-request-id'))).toMatchObject({ inputTokens: 3, outputTokens: 10, characters: 5, estimated: false });
  });

  it('images streamed with partial_images: every event relayed, only the completed image counted', async () => {
    answer = (res) =>
      sse(res, [
        { type: 'image_generation.partial_image', b64_json: 'AA==', partial_image_index: 0 },
        { type: 'image_generation.partial_image', b64_json: 'AA==', partial_image_index: 1 },
        { type: 'image_generation.completed', b64_json: 'AA==', usage: { input_tokens: 5, output_tokens: 100, total_tokens: 105 } },
      ]);
    const { data, response } = await gw.client().images.generate({ model: 'org/image-model', prompt: 'p', stream: true, partial_images: 2 }).withResponse();
    const events = [];
    for await (const e of data) events.push(e.type);
    expect(events).toEqual(['image_generation.partial_image', 'image_generation.partial_image', 'image_generation.completed']);
    expect(await record(response.headers.get('x-request-id'))).toMatchObject({ images: 1, inputTokens: 5, outputTokens: 100, estimated: false });
  });
});

describe('binary downloads', () => {
  it("a video's content asked by Range: the range and the variant go upstream, the 206 and its Content-Range come back", async () => {
    const video = Buffer.from('0123456789');
    answer = (res, body) => {
      if (body.length > 0) return json(res, 200, { id: 'video_abc', object: 'video', model: 'upstream-sora', status: 'completed', seconds: '4' });
      const range = String(seen.at(-1)?.headers.range ?? '');
      if (range !== 'bytes=2-5') return void res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': video.length }).end(video);
      res.writeHead(206, { 'content-type': 'video/mp4', 'content-range': 'bytes 2-5/10', 'content-length': 4, 'accept-ranges': 'bytes' });
      res.end(video.subarray(2, 6));
    };
    const v = await gw.client().videos.create({ model: 'sora-2', prompt: 'a wave' });
    const res = await fetch(`${gw.baseURL}/videos/${v.id}/content?variant=video`, {
      headers: { authorization: `Bearer ${ALICE_KEY}`, range: 'bytes=2-5' },
    });
    expect(seen.at(-1)?.path).toBe('/v1/videos/video_abc/content?variant=video');
    expect(res.status).toBe(206);
    expect(res.headers.get('content-range')).toBe('bytes 2-5/10');
    expect(res.headers.get('content-length')).toBe('4');
    expect(await res.text()).toBe('2345');
  });
});
