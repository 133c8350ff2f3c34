// Audio as the official SDK sends it beyond media-sdk.test.ts: the array and object fields of a transcription form
// (`timestamp_granularities[]`, `include[]`, `chunking_strategy`) reaching the upstream as the SDK wrote them, the
// verbose and logprobs answers read for their usage, and speech as mp3 read slowly by its client: the upstream's
// writes stall (back-pressure through the gateway), then every byte arrives in order.
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listenOnLoopback } from '../fakes/loopback.js';
import { standardManifests, startGateway, type TestGateway } from '../helpers/gateway.js';
import { waitUntil } from '../support/wait.js';

const MiB = 1 << 20;
type Answer = (req: IncomingMessage, res: ServerResponse, body: Buffer) => void | Promise<void>;
let answer: Answer;
let lastForm: { headers: IncomingMessage['headers']; body: Buffer } | undefined;
let gw: TestGateway;
let closeUpstream: () => Promise<void>;

beforeAll(async () => {
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks);
    if (String(req.headers['content-type']).startsWith('multipart/')) lastForm = { headers: req.headers, body };
    await answer(req, res, body);
  });
  const upstream = await listenOnLoopback(server);
  closeUpstream = upstream.close;
  gw = await startGateway(standardManifests(`${upstream.origin}/v1`));
});
afterAll(async () => {
  await gw?.close();
  await closeUpstream?.();
});

/** The form the upstream received, parsed as a server would. */
async function upstreamForm(): Promise<FormData> {
  const f = lastForm!;
  return new Response(new Uint8Array(f.body), { headers: { 'content-type': String(f.headers['content-type']) } }).formData();
}

function json(res: ServerResponse, body: object): void {
  const text = JSON.stringify(body);
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

const wav = () => toFile(Buffer.alloc(320, 1), 'a.wav', { type: 'audio/wav' });

describe('transcription forms with array and object fields', () => {
  it('timestamp_granularities[] (both) reach the upstream as two fields; the verbose answer with words is relayed and its seconds recorded', async () => {
    const verbose = {
      task: 'transcribe',
      language: 'english',
      duration: 2.5,
      text: 'hello there',
      words: [
        { word: 'hello', start: 0, end: 0.9 },
        { word: 'there', start: 1, end: 2.4 },
      ],
      segments: [
        { id: 0, seek: 0, start: 0, end: 2.4, text: 'hello there', tokens: [1, 2], temperature: 0, avg_logprob: -0.2, compression_ratio: 1, no_speech_prob: 0 },
      ],
      usage: { type: 'duration', seconds: 3 },
    };
    answer = (_req, res) => json(res, verbose);
    const { data, response } = await gw
      .client()
      .audio.transcriptions.create({ model: 'whisper-1', file: await wav(), response_format: 'verbose_json', timestamp_granularities: ['word', 'segment'] })
      .withResponse();
    expect(data).toEqual(verbose);
    const form = await upstreamForm();
    expect(form.getAll('timestamp_granularities[]')).toEqual(['word', 'segment']);
    expect(form.get('response_format')).toBe('verbose_json');
    expect(await gw.record(response.headers.get('x-request-id'))).toMatchObject({ family: 'audio.transcriptions', seconds: 3, estimated: false });
  });

  it('include[]=logprobs and a server_vad chunking_strategy reach the upstream as the SDK encodes them; the token usage after the logprobs is recorded', async () => {
    const logprobs = Array.from({ length: 400 }, (_, i) => ({ token: ` w${i}`, logprob: -0.01 * i, bytes: [32, 119] }));
    answer = (_req, res) =>
      json(res, {
        text: logprobs.map((l) => l.token).join(''),
        logprobs,
        usage: { type: 'tokens', input_tokens: 120, input_token_details: { audio_tokens: 110, text_tokens: 10 }, output_tokens: 400, total_tokens: 520 },
      });
    const { data, response } = await gw
      .client()
      .audio.transcriptions.create({
        model: 'whisper-1',
        file: await wav(),
        response_format: 'json',
        include: ['logprobs'],
        chunking_strategy: { type: 'server_vad', prefix_padding_ms: 300, silence_duration_ms: 500, threshold: 0.5 },
      })
      .withResponse();
    expect(data.logprobs).toHaveLength(400);
    const form = await upstreamForm();
    expect(form.getAll('include[]')).toEqual(['logprobs']);
    expect(form.get('chunking_strategy[type]')).toBe('server_vad');
    expect(form.get('chunking_strategy[prefix_padding_ms]')).toBe('300');
    expect(form.get('chunking_strategy[silence_duration_ms]')).toBe('500');
    expect(form.get('chunking_strategy[threshold]')).toBe('0.5');
    expect(await gw.record(response.headers.get('x-request-id'))).toMatchObject({ inputTokens: 120, outputTokens: 400, estimated: false });
  });

  it('chunking_strategy "auto" is one plain field', async () => {
    answer = (_req, res) => json(res, { text: 'ok', usage: { type: 'tokens', input_tokens: 5, output_tokens: 1, total_tokens: 6 } });
    await gw.client().audio.transcriptions.create({ model: 'whisper-1', file: await wav(), chunking_strategy: 'auto' });
    const form = await upstreamForm();
    expect(form.getAll('chunking_strategy')).toEqual(['auto']);
    expect([...form.keys()].filter((k) => k.startsWith('chunking_strategy['))).toEqual([]);
  });
});

describe('speech as mp3, read slowly', () => {
  it('the upstream stalls while the client does not read; every byte then arrives in order, its characters recorded', async () => {
    const SIZE = 48 * MiB;
    const chunk = Buffer.alloc(64 * 1024);
    for (let i = 0; i < chunk.length; i++) chunk[i] = (i * 131 + 7) & 0xff;
    const progress = { written: 0, finished: false };
    const expected = createHash('sha256');
    for (let at = 0; at < SIZE; at += chunk.length) expected.update(chunk);
    answer = async (_req, res) => {
      res.writeHead(200, { 'content-type': 'audio/mpeg', 'transfer-encoding': 'chunked' });
      for (let at = 0; at < SIZE && !res.destroyed; at += chunk.length) {
        progress.written += chunk.length;
        if (!res.write(chunk)) await new Promise((r) => res.once('drain', r));
      }
      res.end();
      progress.finished = true;
    };
    const res = await gw.client().audio.speech.create({ model: 'tts-1', voice: 'alloy', input: 'a long read', response_format: 'mp3' });
    expect(res.headers.get('content-type')).toBe('audio/mpeg');
    const reader = res.body!.getReader();
    const first = await reader.read();
    // Not reading: the upstream's writes stop well short of the answer (socket and stream buffers only).
    let last = -1;
    await waitUntil(
      async () => {
        const now = progress.written;
        const quiet = now === last;
        last = now;
        await new Promise((r) => setTimeout(r, 150));
        return quiet && progress.written === now;
      },
      10_000,
      'the upstream writes to stall',
    );
    expect(progress.finished).toBe(false);
    expect(progress.written).toBeLessThan(SIZE / 2);
    const got = createHash('sha256').update(first.value!);
    let received = first.value!.length;
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      got.update(value);
      received += value.length;
    }
    expect(received).toBe(SIZE);
    expect(got.digest('hex')).toBe(expected.digest('hex'));
    expect(progress.finished).toBe(true);
    expect(await gw.record(res.headers.get('x-request-id'))).toMatchObject({ family: 'audio.speech', characters: 11, status: 200 });
  });
});
