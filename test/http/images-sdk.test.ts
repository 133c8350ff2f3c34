// Images as the official SDK asks for them beyond families.test.ts and media-sdk.test.ts, and what each costs: a
// gpt-image-1 answer of two images in b64_json with its token usage (priced by tokens), dall-e-3 images by URL
// (priced per image at the size and quality asked), and a streamed edit of several images with partial images
// (previews are not images made; the completed event's usage is the bill). The fake answers in OpenAI's shapes.
import { createServer, type ServerResponse } from 'node:http';
import { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listenOnLoopback } from '../fakes/loopback.js';
import { standardManifests, startGateway, type TestGateway } from '../helpers/gateway.js';

type Answer = (res: ServerResponse, body: Buffer, contentType: string) => void;
let answer: Answer;
let gw: TestGateway;
let closeUpstream: () => Promise<void>;

const route = (name: string, upstreamModel: string, baseURL: string, pricing: string) => `---
apiVersion: modelgateway.io/v1alpha1
kind: ModelRoute
metadata: {name: ${name}}
spec:
  model: ${name}
  endpoints: [images.generations, images.edits]
  backends:
  - name: openai
    baseURL: ${baseURL}
    apiKeySecretRef: {name: upstream-credentials, key: apiKey}
    model: ${upstreamModel}
    pricing: ${pricing}
`;

beforeAll(async () => {
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    answer(res, Buffer.concat(chunks), String(req.headers['content-type']));
  });
  const upstream = await listenOnLoopback(server);
  closeUpstream = upstream.close;
  const base = `${upstream.origin}/v1`;
  gw = await startGateway(
    standardManifests(
      base,
      route('extra-gpt-image', 'gpt-image-1', base, '{inputPerMTok: "5.00", imageInputPerMTok: "10.00", imageOutputPerMTok: "40.00"}') +
        route('extra-dalle', 'dall-e-3', base, '{imagePer: [{size: "1024x1792", quality: "hd", price: "0.12"}, {size: "1024x1024", price: "0.04"}]}') +
        route(
          'extra-gpt-image-per',
          'gpt-image-1',
          base,
          '{imagePer: [{size: "1024x1024", quality: "high", price: "0.167"}, {size: "1024x1024", quality: "medium", price: "0.042"}, {price: "0.011"}]}',
        ) +
        route(
          'extra-dalle-2',
          'dall-e-2',
          base,
          '{imagePer: [{size: "256x256", price: "0.016"}, {size: "512x512", price: "0.018"}, {size: "1024x1024", price: "0.02"}]}',
        ),
    ),
  );
});
afterAll(async () => {
  await gw?.close();
  await closeUpstream?.();
});

function json(res: ServerResponse, body: object): void {
  const text = JSON.stringify(body);
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

const png = (n: number) => Buffer.concat([Buffer.from('\x89PNG\r\n\x1a\n', 'binary'), Buffer.alloc(n, 7)]).toString('base64');

describe('images and what they cost', () => {
  it('gpt-image-1, n: 2, b64_json: both images relayed, two images and the token usage recorded, priced by tokens', async () => {
    answer = (res, body) => {
      const req = JSON.parse(body.toString()) as { n: number };
      json(res, {
        created: 1,
        background: 'opaque',
        data: Array.from({ length: req.n }, () => ({ b64_json: png(200_000) })),
        output_format: 'png',
        quality: 'medium',
        size: '1024x1024',
        usage: { input_tokens: 50, input_tokens_details: { text_tokens: 50, image_tokens: 0 }, output_tokens: 2112, total_tokens: 2162 },
      });
    };
    const { data, response } = await gw.client().images.generate({ model: 'extra-gpt-image', prompt: 'two cats', n: 2 }).withResponse();
    expect(data.data).toHaveLength(2);
    expect(data.usage?.output_tokens).toBe(2112);
    const r = await gw.record(response.headers.get('x-request-id'));
    // 50 × 5.00 + 2,112 image output tokens × 40.00 per million = 84,730 micro-units.
    expect(r).toMatchObject({ images: 2, inputTokens: 50, outputTokens: 2112, estimated: false, cost: '0.08473' });
  });

  it('dall-e-3 by URL: the urls relayed, priced per image at the size and quality asked', async () => {
    answer = (res, body) => {
      const req = JSON.parse(body.toString()) as { response_format: string; size: string };
      expect(req.response_format).toBe('url');
      json(res, { created: 1, data: [{ url: `https://files.example/img-1.png?size=${req.size}`, revised_prompt: 'a "url" in a prompt' }] });
    };
    const hd = await gw
      .client()
      .images.generate({ model: 'extra-dalle', prompt: 'tall', response_format: 'url', size: '1024x1792', quality: 'hd' })
      .withResponse();
    expect(hd.data.data?.[0]?.url).toBe('https://files.example/img-1.png?size=1024x1792');
    expect(await gw.record(hd.response.headers.get('x-request-id'))).toMatchObject({ images: 1, imageSize: '1024x1792', imageQuality: 'hd', cost: '0.12' });
    const square = await gw.client().images.generate({ model: 'extra-dalle', prompt: 'square', response_format: 'url', size: '1024x1024' }).withResponse();
    expect(await gw.record(square.response.headers.get('x-request-id'))).toMatchObject({ images: 1, imageSize: '1024x1024', cost: '0.04' });
  });

  it('a streamed edit of several images with partial images: every event relayed, one image recorded, priced by its usage', async () => {
    let form: FormData | undefined;
    answer = async (res, body, contentType) => {
      form = await new Response(new Uint8Array(body), { headers: { 'content-type': contentType } }).formData();
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const event = (e: object) => res.write(`event: ${(e as { type: string }).type}\ndata: ${JSON.stringify(e)}\n\n`);
      const common = { background: 'opaque', created_at: 1, output_format: 'png', quality: 'high', size: '1024x1024' };
      for (const i of [0, 1]) event({ type: 'image_edit.partial_image', b64_json: png(1000), partial_image_index: i, ...common });
      event({
        type: 'image_edit.completed',
        b64_json: png(5000),
        ...common,
        usage: { input_tokens: 1300, input_tokens_details: { text_tokens: 20, image_tokens: 1280 }, output_tokens: 4360, total_tokens: 5660 },
      });
      res.end();
    };
    const images = [
      await toFile(Buffer.from(png(10), 'base64'), 'a.png', { type: 'image/png' }),
      await toFile(Buffer.from(png(20), 'base64'), 'b.png', { type: 'image/png' }),
    ];
    const { data, response } = await gw
      .client()
      .images.edit({ model: 'extra-gpt-image', prompt: 'merge', image: images, stream: true, partial_images: 2 })
      .withResponse();
    const types: string[] = [];
    for await (const e of data) types.push(e.type);
    expect(types).toEqual(['image_edit.partial_image', 'image_edit.partial_image', 'image_edit.completed']);
    expect(form?.get('model')).toBe('gpt-image-1');
    expect(form?.get('partial_images')).toBe('2');
    expect(form?.getAll('image[]')).toHaveLength(2);
    const r = await gw.record(response.headers.get('x-request-id'));
    // 20 × 5.00 + 1,280 image input tokens × 10.00 + 4,360 image output tokens × 40.00 per million = 187,300
    // micro-units: the image input tokens at their own price (OpenAI bills gpt-image-1's at twice its text input).
    expect(r).toMatchObject({ images: 1, inputTokens: 1300, imageInputTokens: 1280, outputTokens: 4360, estimated: false, cost: '0.1873' });
  });

  it('a dall-e-2 edit of two images at 512x512: priced per image at the size its form asked for', async () => {
    let form: FormData | undefined;
    answer = async (res, body, contentType) => {
      form = await new Response(new Uint8Array(body), { headers: { 'content-type': contentType } }).formData();
      json(res, { created: 1, data: [{ url: 'https://files.example/a.png' }, { url: 'https://files.example/b.png' }] });
    };
    const image = await toFile(Buffer.from(png(10), 'base64'), 'a.png', { type: 'image/png' });
    const { response } = await gw
      .client()
      .images.edit({ model: 'extra-dalle-2', prompt: 'a hat', image, n: 2, size: '512x512', response_format: 'url' })
      .withResponse();
    expect(form?.get('size')).toBe('512x512');
    expect(await gw.record(response.headers.get('x-request-id'))).toMatchObject({ images: 2, imageSize: '512x512', cost: '0.036' });
  });

  it('gpt-image-1 asked for no size or quality (auto): priced per image at the size and quality its answer states', async () => {
    const stated = { background: 'opaque', output_format: 'png', quality: 'high', size: '1024x1024' };
    answer = (res) =>
      json(res, {
        created: 1,
        data: [{ b64_json: png(100_000), revised_prompt: 'a "quality": "low" fox' }],
        ...stated,
        usage: { input_tokens: 9, input_tokens_details: { text_tokens: 9, image_tokens: 0 }, output_tokens: 4160, total_tokens: 4169 },
      });
    const plain = await gw.client().images.generate({ model: 'extra-gpt-image-per', prompt: 'a fox' }).withResponse();
    expect(await gw.record(plain.response.headers.get('x-request-id'))).toMatchObject({
      images: 1,
      imageSize: '1024x1024',
      imageQuality: 'high',
      cost: '0.167',
    });
    answer = (res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const event = (e: object) => res.write(`event: ${(e as { type: string }).type}\ndata: ${JSON.stringify(e)}\n\n`);
      event({ type: 'image_generation.partial_image', b64_json: png(1000), partial_image_index: 0, created_at: 1, ...stated, quality: 'medium' });
      event({
        type: 'image_generation.completed',
        b64_json: png(100_000),
        created_at: 1,
        ...stated,
        usage: { input_tokens: 9, output_tokens: 4160, total_tokens: 4169 },
      });
      res.end();
    };
    const streamed = await gw
      .client()
      .images.generate({ model: 'extra-gpt-image-per', prompt: 'a fox', quality: 'auto', stream: true, partial_images: 1 })
      .withResponse();
    for await (const _ of streamed.data);
    expect(await gw.record(streamed.response.headers.get('x-request-id'))).toMatchObject({
      images: 1,
      imageSize: '1024x1024',
      imageQuality: 'high',
      cost: '0.167',
    });
  });

  it('an OpenAI-compatible backend that writes every field of an image, nulls included: each image counted once', async () => {
    // As a server that serializes openai-python's Image model whole: {"b64_json": …, "url": null, "revised_prompt": null}.
    answer = (res) => json(res, { created: 1, data: [0, 1].map(() => ({ b64_json: png(5000), url: null, revised_prompt: null })) });
    const { data, response } = await gw.client().images.generate({ model: 'extra-dalle-2', prompt: 'two', n: 2, size: '256x256' }).withResponse();
    expect(data.data).toHaveLength(2);
    expect(await gw.record(response.headers.get('x-request-id'))).toMatchObject({ images: 2, imageSize: '256x256', cost: '0.032' });
  });
});
