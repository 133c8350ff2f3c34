// Streams asked for in a form: an image edit and a transcription with `stream=true` are multipart uploads, and the
// gateway must treat them as the streams they are. On a route with `streaming.keepAliveInterval`, a streamed edit
// waiting for its first partial image (gpt-image-1 takes tens of seconds) gets `: keep-alive` comments like any JSON
// stream, so an ingress with an idle timeout keeps the connection; the SDK then reads every event.
import { createServer, type ServerResponse } from 'node:http';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listenOnLoopback } from '../fakes/loopback.js';
import { ALICE_KEY, keepAliveRoute, standardManifests, startGateway, type TestGateway } from '../helpers/gateway.js';

let gw: TestGateway;
let closeUpstream: () => Promise<void>;
/** Resolved by the client once it has seen a keep-alive: the upstream holds its first byte until then. */
let firstByteHeld: Promise<void>;

beforeAll(async () => {
  const server = createServer(async (req, res) => {
    for await (const _ of req);
    // Held until the client saw a keep-alive; without one it never would, so a deadline ends the wait (and the test fails).
    await Promise.race([firstByteHeld, new Promise((r) => setTimeout(r, 3_000))]);
    if (req.url === '/v1/images/edits') {
      sse(res, [
        { type: 'image_edit.partial_image', b64_json: 'AA==', partial_image_index: 0 },
        { type: 'image_edit.completed', b64_json: 'AA==', usage: { input_tokens: 5, output_tokens: 100, total_tokens: 105 } },
      ]);
    } else {
      sse(res, [
        { type: 'transcript.text.delta', delta: 'hel' },
        { type: 'transcript.text.done', text: 'hel', usage: { type: 'tokens', input_tokens: 14, output_tokens: 2, total_tokens: 16 } },
      ]);
    }
  });
  const upstream = await listenOnLoopback(server);
  closeUpstream = upstream.close;
  const base = `${upstream.origin}/v1`;
  gw = await startGateway(standardManifests(base, keepAliveRoute(base)));
});
afterAll(async () => {
  await gw?.close();
  await closeUpstream?.();
});

function sse(res: ServerResponse, events: readonly object[]): void {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  for (const e of events) res.write(`event: ${(e as { type: string }).type}\ndata: ${JSON.stringify(e)}\n\n`);
  res.end();
}

/** An SDK client whose fetch records the raw event-stream text and releases the upstream at the first keep-alive. */
function keepAliveClient(): { client: OpenAI; seen: { text: string } } {
  let release!: () => void;
  firstByteHeld = new Promise<void>((r) => (release = r));
  const seen = { text: '' };
  const decoder = new TextDecoder();
  const recording = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const res = await fetch(input, init);
    const tap = new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        seen.text += decoder.decode(chunk, { stream: true });
        if (seen.text.includes(': keep-alive')) release();
        controller.enqueue(chunk);
      },
    });
    return new Response(res.body!.pipeThrough(tap), { status: res.status, statusText: res.statusText, headers: res.headers });
  };
  return { client: new OpenAI({ apiKey: ALICE_KEY, baseURL: gw.baseURL, maxRetries: 0, fetch: recording as typeof fetch }), seen };
}

describe('streams asked for in a form', () => {
  it('a streamed image edit waiting for its first partial image gets keep-alives, then every event', async () => {
    const { client, seen } = keepAliveClient();
    const image = await toFile(Buffer.from('\x89PNG\r\n\x1a\n', 'binary'), 'a.png', { type: 'image/png' });
    const { data, response } = await client.images.edit({ model: 'extra-keepalive', prompt: 'p', image, stream: true, partial_images: 1 }).withResponse();
    const types: string[] = [];
    for await (const e of data) types.push(e.type);
    expect(types).toEqual(['image_edit.partial_image', 'image_edit.completed']);
    expect(seen.text.startsWith(': keep-alive')).toBe(true);
    expect(await gw.record(response.headers.get('x-request-id'))).toMatchObject({ images: 1, inputTokens: 5, outputTokens: 100 });
  });

  it('a streamed transcription the same', async () => {
    const { client, seen } = keepAliveClient();
    const file = await toFile(Buffer.alloc(64), 'a.wav', { type: 'audio/wav' });
    const stream = await client.audio.transcriptions.create({ model: 'extra-keepalive', file, stream: true });
    const types: string[] = [];
    for await (const e of stream) types.push(e.type);
    expect(types).toEqual(['transcript.text.delta', 'transcript.text.done']);
    expect(seen.text.startsWith(': keep-alive')).toBe(true);
  });
});
