// Image and audio tokens priced at their own prices, through the real HTTP stack with the openai SDK: a loopback
// upstream answers gpt-image-1, an audio chat model and gpt-4o-transcribe with the usage shapes of OpenAI's API
// reference, plain and streamed, and gpt-4o-mini-tts's speech stream (its `speech.audio.done` event's usage), its
// audio output tokens at audioOutputPerMTok unless the backend prices speech per character. Every expected cost is written out beside its request (tokens × price per million).
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Loopback, listenOnLoopback } from '../fakes/loopback.js';
import { ALICE_KEY, startGateway, type TestGateway } from '../helpers/gateway.js';
import { waitUntil } from '../support/wait.js';

const IMAGE_USAGE = { input_tokens: 50, input_tokens_details: { text_tokens: 10, image_tokens: 40 }, output_tokens: 4160, total_tokens: 4210 };
const CHAT_USAGE = {
  prompt_tokens: 30,
  completion_tokens: 120,
  total_tokens: 150,
  prompt_tokens_details: { cached_tokens: 0, audio_tokens: 12 },
  completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 100 },
};
const CHAT_STREAM_USAGE = {
  prompt_tokens: 1000,
  completion_tokens: 500,
  total_tokens: 1500,
  prompt_tokens_details: { cached_tokens: 200, audio_tokens: 300 },
  completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 400 },
};
const TRANSCRIBE_USAGE = { type: 'tokens', input_tokens: 14, input_token_details: { text_tokens: 0, audio_tokens: 14 }, output_tokens: 45, total_tokens: 59 };
const TRANSCRIBE_STREAM_USAGE = {
  type: 'tokens',
  input_tokens: 200,
  input_token_details: { text_tokens: 20, audio_tokens: 180 },
  output_tokens: 60,
  total_tokens: 260,
};

const SPEECH_USAGE = { input_tokens: 14, output_tokens: 1000, total_tokens: 1014 };

let leave!: () => void;
const clientLeft = new Promise<void>((r) => (leave = r));

const sse = (res: ServerResponse, events: unknown[], named = true) => {
  if (!res.headersSent) res.writeHead(200, { 'content-type': 'text/event-stream' });
  for (const e of events) res.write(`${named ? `event: ${(e as { type: string }).type}\n` : ''}data: ${JSON.stringify(e)}\n\n`);
  res.end(named ? '' : 'data: [DONE]\n\n');
};
const json = (res: ServerResponse, body: unknown): void => {
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
};

async function answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const text = Buffer.concat(chunks).toString();
  const streamed = /"stream"\s*:\s*true/.test(text) || /name="stream"\r\n\r\ntrue/.test(text);
  const created = 1_700_000_000;
  if (req.url === '/v1/images/generations') {
    const image = { b64_json: Buffer.from('png').toString('base64') };
    if (!streamed) return json(res, { created, data: [image], size: '1024x1024', quality: 'high', usage: IMAGE_USAGE });
    return sse(res, [
      {
        type: 'image_generation.completed',
        ...image,
        created_at: created,
        size: '1024x1024',
        quality: 'high',
        background: 'opaque',
        output_format: 'png',
        usage: IMAGE_USAGE,
      },
    ]);
  }
  if (req.url === '/v1/chat/completions') {
    const base = { id: 'chatcmpl-a', created, model: 'gpt-4o-audio-preview' };
    if (!streamed) {
      const message = { role: 'assistant', content: null, audio: { id: 'audio_1', data: 'UklGRg==', expires_at: created + 3600, transcript: 'Hi' } };
      return json(res, { ...base, object: 'chat.completion', choices: [{ index: 0, message, finish_reason: 'stop', logprobs: null }], usage: CHAT_USAGE });
    }
    const chunk = (choices: unknown[], usage: unknown = null) => ({ ...base, object: 'chat.completion.chunk', choices, usage });
    return sse(
      res,
      [
        chunk([{ index: 0, delta: { role: 'assistant', audio: { id: 'audio_1', transcript: 'Hi' } }, finish_reason: null }]),
        chunk([{ index: 0, delta: {}, finish_reason: 'stop' }]),
        chunk([], CHAT_STREAM_USAGE),
      ],
      false,
    );
  }
  if (req.url === '/v1/audio/transcriptions') {
    if (!streamed) return json(res, { text: 'hello there', usage: TRANSCRIBE_USAGE });
    return sse(
      res,
      [
        { type: 'transcript.text.delta', delta: 'hello there', logprobs: [] },
        { type: 'transcript.text.done', text: 'hello there', logprobs: [], usage: TRANSCRIBE_STREAM_USAGE },
      ],
      false,
    );
  }
  if (req.url === '/v1/audio/speech') {
    const audio = Buffer.alloc(4096, 7);
    if (!/"stream_format"\s*:\s*"sse"/.test(text)) return void res.writeHead(200, { 'content-type': 'audio/mpeg' }).end(audio);
    const delta = { type: 'speech.audio.delta', audio: audio.toString('base64') };
    if (text.includes('left before the end')) {
      // The rest is sent once the test's client has left.
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`event: speech.audio.delta\ndata: ${JSON.stringify(delta)}\n\n`);
      await clientLeft;
      return sse(res, [delta, { type: 'speech.audio.done', usage: SPEECH_USAGE }]);
    }
    return sse(res, [delta, delta, { type: 'speech.audio.done', usage: SPEECH_USAGE }]);
  }
  res.writeHead(404).end();
}

const route = (name: string, model: string, endpoints: string, pricing: string, baseURL: string) => `
apiVersion: modelgateway.io/v1alpha1
kind: ModelRoute
metadata: {name: ${name}}
spec:
  model: ${model}
  endpoints: [${endpoints}]
  backends:
  - {name: openai, baseURL: "${baseURL}", apiKeySecretRef: {name: upstream, key: apiKey}, pricing: ${pricing}}
---`;

const manifests = (baseURL: string) => `
apiVersion: v1
kind: Secret
metadata: {name: upstream}
stringData: {apiKey: sk-upstream-secret-abcdef}
---
apiVersion: v1
kind: Secret
metadata: {name: alice-key}
stringData: {token: ${ALICE_KEY}}
---
${route('image', 'gpt-image-1', 'images.generations', '{inputPerMTok: "5.00", imageInputPerMTok: "10.00", imageOutputPerMTok: "40.00"}', baseURL)}
${route('audio', 'gpt-4o-audio-preview', 'chat.completions', '{inputPerMTok: "2.50", audioInputPerMTok: "40.00", outputPerMTok: "10.00", audioOutputPerMTok: "80.00"}', baseURL)}
${route('audio-text-prices', 'audio-text-prices', 'chat.completions', '{inputPerMTok: "2.50", outputPerMTok: "10.00"}', baseURL)}
${route('transcribe', 'gpt-4o-transcribe', 'audio.transcriptions', '{inputPerMTok: "2.50", audioInputPerMTok: "6.00", outputPerMTok: "10.00"}', baseURL)}
${route('tts', 'gpt-4o-mini-tts', 'audio.speech', '{inputPerMTok: "0.60", audioOutputPerMTok: "12.00"}', baseURL)}
${route('tts-chars', 'tts-per-char', 'audio.speech', '{inputPerMTok: "0.60", audioOutputPerMTok: "12.00", speechPerMChars: "15.00"}', baseURL)}
apiVersion: modelgateway.io/v1alpha1
kind: Group
metadata: {name: team-a}
spec: {models: ["*"]}
---
apiVersion: modelgateway.io/v1alpha1
kind: GatewayToken
metadata: {name: alice}
spec: {group: team-a, secretRef: {name: alice-key, key: token}}
`;

let upstream: Loopback;
let gateway: TestGateway;

beforeAll(async () => {
  const server = createServer((req, res) => void answer(req, res));
  upstream = await listenOnLoopback(server);
  gateway = await startGateway(manifests(`${upstream.origin}/v1`));
});
afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

const idOf = (r: { response: Response }) => r.response.headers.get('x-request-id');
const audioFile = () => toFile(Buffer.alloc(64, 1), 'a.mp3');

describe('image and audio tokens at their own prices', () => {
  it('gpt-image-1, plain and streamed: 10 × 5.00 + 40 × 10.00 + 4,160 × 40.00 = 166,850 per million → 0.166850', async () => {
    const c = gateway.client();
    const plain = await c.images.generate({ model: 'gpt-image-1', prompt: 'a fox', size: '1024x1024', quality: 'high' }).withResponse();
    const { data, response } = await c.images.generate({ model: 'gpt-image-1', prompt: 'a fox', stream: true }).withResponse();
    for await (const _ of data);
    for (const id of [idOf(plain), response.headers.get('x-request-id')]) {
      const r = await gateway.record(id);
      expect(r).toMatchObject({ inputTokens: 50, imageInputTokens: 40, outputTokens: 4160, imageOutputTokens: 4160, cost: '0.16685', currency: 'USD' });
      expect(r['costKnown']).toBeUndefined();
    }
  });

  it('an audio chat model, plain: 18 × 2.50 + 12 × 40.00 + 20 × 10.00 + 100 × 80.00 = 8,725 per million → 0.008725', async () => {
    const c = gateway.client();
    const res = await c.chat.completions
      .create({
        model: 'gpt-4o-audio-preview',
        modalities: ['text', 'audio'],
        audio: { voice: 'alloy', format: 'wav' },
        messages: [{ role: 'user', content: 'hi' }],
      })
      .withResponse();
    const r = await gateway.record(idOf(res));
    expect(r).toMatchObject({ inputTokens: 30, audioInputTokens: 12, outputTokens: 120, audioOutputTokens: 100, cost: '0.008725' });
  });

  it('an audio chat model, streamed: 500 × 2.50 + 200 cached × 2.50 + 300 × 40.00 + 100 × 10.00 + 400 × 80.00 = 46,750 per million → 0.046750', async () => {
    // No cachedInputPerMTok: cache reads at inputPerMTok, as documented; the audio part is out of the uncached 800.
    const { data, response } = await gateway
      .client()
      .chat.completions.create({
        model: 'gpt-4o-audio-preview',
        modalities: ['text', 'audio'],
        audio: { voice: 'alloy', format: 'pcm16' },
        messages: [{ role: 'user', content: 'hi' }],
        stream: true,
      })
      .withResponse();
    for await (const _ of data);
    const r = await gateway.record(response.headers.get('x-request-id'));
    expect(r).toMatchObject({ inputTokens: 1000, cachedInputTokens: 200, audioInputTokens: 300, outputTokens: 500, audioOutputTokens: 400, cost: '0.04675' });
  });

  it('audio tokens on a backend with text prices alone: the cost is unknown, never the text price', async () => {
    const res = await gateway
      .client()
      .chat.completions.create({
        model: 'audio-text-prices',
        modalities: ['text', 'audio'],
        audio: { voice: 'alloy', format: 'wav' },
        messages: [{ role: 'user', content: 'hi' }],
      })
      .withResponse();
    const r = await gateway.record(idOf(res));
    expect(r).toMatchObject({ audioInputTokens: 12, audioOutputTokens: 100, costKnown: false });
    expect(r['cost']).toBeUndefined();
  });

  it('gpt-4o-transcribe, plain (14 × 6.00 + 45 × 10.00 = 534 → 0.000534) and streamed (20 × 2.50 + 180 × 6.00 + 60 × 10.00 = 1,730 → 0.001730)', async () => {
    const c = gateway.client();
    const plain = await c.audio.transcriptions.create({ model: 'gpt-4o-transcribe', file: await audioFile() }).withResponse();
    expect(await gateway.record(idOf(plain))).toMatchObject({ inputTokens: 14, audioInputTokens: 14, outputTokens: 45, cost: '0.000534' });
    const { data, response } = await c.audio.transcriptions.create({ model: 'gpt-4o-transcribe', file: await audioFile(), stream: true }).withResponse();
    for await (const _ of data);
    expect(await gateway.record(response.headers.get('x-request-id'))).toMatchObject({
      inputTokens: 200,
      audioInputTokens: 180,
      outputTokens: 60,
      cost: '0.00173',
    });
  });
});

describe('speech streams', () => {
  const INPUT = 'Hello from the gateway.'; // 23 characters
  /** The stream's events as the client got them, and the request's record. */
  async function speak(model: string, sse: boolean) {
    const { data, response } = await gateway
      .client()
      .audio.speech.create({ model, voice: 'alloy', input: INPUT, ...(sse ? { stream_format: 'sse' as const } : {}) })
      .withResponse();
    const body = Buffer.from(await data.arrayBuffer());
    return { body, record: await gateway.record(response.headers.get('x-request-id')) };
  }

  it("gpt-4o-mini-tts with stream_format sse: speech.audio.done's usage, 14 × 0.60 + 1,000 audio × 12.00 = 12,008.4 per million → 0.012008", async () => {
    const { body, record } = await speak('gpt-4o-mini-tts', true);
    expect(body.toString()).toContain('"type":"speech.audio.done"');
    expect(record).toMatchObject({ family: 'audio.speech', inputTokens: 14, outputTokens: 1000, audioOutputTokens: 1000, characters: 23, cost: '0.012008' });
    expect(record['costKnown']).toBeUndefined();
  });

  it("a client that leaves a speech stream mid-way: the stream is read on to speech.audio.done's usage", async () => {
    const controller = new AbortController();
    const { data, response } = await gateway
      .client()
      .audio.speech.create({ model: 'gpt-4o-mini-tts', voice: 'alloy', input: 'left before the end', stream_format: 'sse' }, { signal: controller.signal })
      .withResponse();
    await data.body!.getReader().read();
    controller.abort();
    // The gateway has seen the client leave once its connection is gone; only then does the upstream finish.
    await waitUntil(async () => (await gateway.connections()) === 0, 5_000, 'the client connection to close');
    leave();
    const record = await gateway.record(response.headers.get('x-request-id'));
    expect(record).toMatchObject({ aborted: true, inputTokens: 14, outputTokens: 1000, audioOutputTokens: 1000, cost: '0.012008', estimated: false });
  });

  it('a backend that prices speech per character: the characters alone, tokens reported or not (23 × 15.00 per million → 0.000345)', async () => {
    for (const sse of [true, false]) {
      const { record } = await speak('tts-per-char', sse);
      expect(record).toMatchObject({ family: 'audio.speech', characters: 23, cost: '0.000345' });
      expect(record['costKnown']).toBeUndefined();
    }
  });

  it('an answer without tokens on a backend without a per-character price: the cost is unknown', async () => {
    const { record } = await speak('gpt-4o-mini-tts', false);
    expect(record).toMatchObject({ family: 'audio.speech', characters: 23, inputTokens: 0, outputTokens: 0, costKnown: false });
  });
});
