// The fake upstream against the official SDK directly: proves the fake speaks the API shapes the SDK insists
// on (notably the strict responses.stream() event sequence), so gateway tests that use it test the gateway.
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contentBytes, FakeVideoResponsesUpstream } from './video-responses-upstream.js';

let up: FakeVideoResponsesUpstream;
let client: OpenAI;
beforeAll(async () => {
  up = await FakeVideoResponsesUpstream.start({ videoBytes: 3 * 1024 * 1024 });
  client = new OpenAI({ baseURL: up.baseURL, apiKey: 'upstream-key', maxRetries: 0 });
});
afterAll(() => up.close());

describe('fake video upstream', () => {
  it('runs the lifecycle, serves variants, remixes and deletes', async () => {
    const image = Buffer.from('\x89PNG fake image bytes \x00\x01\x02', 'binary');
    const v = await client.videos.create({ prompt: 'a cat', model: 'sora-2', input_reference: await toFile(image, 'ref.png', { type: 'image/png' }) });
    expect(v.status).toBe('queued');
    const created = up.received('/v1/videos').at(-1)!;
    expect(created.files?.[0]?.bytes).toEqual(image);
    expect(created.authorization).toBe('Bearer upstream-key');
    expect((await client.videos.retrieve(v.id)).status).toBe('in_progress');
    expect((await client.videos.retrieve(v.id)).status).toBe('completed');
    const content = await client.videos.downloadContent(v.id);
    expect(content.headers.get('content-type')).toBe('video/mp4');
    expect(content.headers.get('content-length')).toBe(String(3 * 1024 * 1024));
    expect(Buffer.from(await content.arrayBuffer()).equals(contentBytes('video', 3 * 1024 * 1024))).toBe(true);
    const thumb = await client.videos.downloadContent(v.id, { variant: 'thumbnail' });
    expect(thumb.headers.get('content-type')).toBe('image/webp');
    const remix = await client.videos.remix(v.id, { prompt: 'a dog' });
    expect(remix.remixed_from_video_id).toBe(v.id);
    expect((await client.videos.delete(v.id)).deleted).toBe(true);
    await expect(client.videos.retrieve(v.id)).rejects.toMatchObject({ status: 404 });
  });
});

describe('fake responses upstream', () => {
  it('creates, chains, lists input items with cursors, cancels and deletes', async () => {
    const r1 = await client.responses.create({ model: 'm', input: 'hello' });
    expect(r1.output_text).toBe('echo: hello');
    const r2 = await client.responses.create({
      model: 'm',
      previous_response_id: r1.id,
      input: [1, 2, 3, 4, 5].map((n) => ({ role: 'user' as const, content: `m${n}` })),
    });
    expect(r2.output_text).toBe(`echo: m5 (continuing ${r1.id})`);
    const seen: string[] = [];
    for await (const item of client.responses.inputItems.list(r2.id, { limit: 2, order: 'asc' })) {
      seen.push((item as { content: { text: string }[] }).content[0]!.text);
    }
    expect(seen).toEqual(['m1', 'm2', 'm3', 'm4', 'm5']);
    expect(up.received(`/v1/responses/${r2.id}/input_items`).map((r) => r.query.get('after'))).toEqual([
      null,
      expect.stringMatching(/^msg_/),
      expect.stringMatching(/^msg_/),
    ]);
    await expect(client.responses.cancel(r2.id)).rejects.toMatchObject({ status: 400 });
    const bg = await client.responses.create({ model: 'm', input: 'slow', background: true });
    expect((await client.responses.cancel(bg.id)).status).toBe('cancelled');
    await client.responses.delete(r1.id);
    await expect(client.responses.retrieve(r1.id)).rejects.toMatchObject({ status: 404 });
  });

  it('streams an event sequence that responses.stream() accepts, and replays it on retrieve', async () => {
    const stream = client.responses.stream({ model: 'm', input: 'one two three' });
    const deltas: string[] = [];
    stream.on('response.output_text.delta', (e) => deltas.push(e.delta));
    const final = await stream.finalResponse();
    expect(final.output_text).toBe('echo: one two three');
    expect(deltas.join('')).toBe('echo: one two three');
    const replay = await client.responses.retrieve(final.id, { stream: true });
    const types: string[] = [];
    for await (const e of replay) types.push(e.type);
    expect(types[0]).toBe('response.created');
    expect(types.at(-1)).toBe('response.completed');
  });
});
