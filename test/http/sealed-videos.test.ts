// Videos through the gateway with the official SDK: sealed ids out, unsealed in, content streamed (not
// buffered), remix pinned to the original's backend, list refused.
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IdSealer } from '../../src/features/sealed-ids/sealed-id.js';
import { contentBytes, FakeVideoResponsesUpstream } from '../fakes/video-responses-upstream.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { ALICE, newKey, sealedManifests, UPSTREAM_KEY } from '../helpers/sealed-setup.js';

const VIDEO_BYTES = 8 * 1024 * 1024;
const key = newKey();
const sealer = new IdSealer([key]);
let a: FakeVideoResponsesUpstream;
let b: FakeVideoResponsesUpstream;
let gw: TestGateway;
let alice: OpenAI;
let flip = 0;

beforeAll(async () => {
  a = await FakeVideoResponsesUpstream.start({ videoBytes: VIDEO_BYTES });
  b = await FakeVideoResponsesUpstream.start({ videoBytes: VIDEO_BYTES });
  // Alternate between the two equal-weight backends, so pinning is exercised on both (a plan of two
  // backends draws two numbers).
  gw = await startGateway(sealedManifests({ video: [a.baseURL, b.baseURL], responses: a.baseURL }), {
    idKeys: [key],
    random: () => ((flip++ >> 1) % 2 === 0 ? 0.1 : 0.9),
  });
  alice = gw.client(ALICE);
});
afterAll(async () => {
  await gw.close();
  await a.close();
  await b.close();
});

const holder = (upstreamId: string) => (a.videos.has(upstreamId) ? a : b.videos.has(upstreamId) ? b : undefined);

describe('videos through sealed ids', () => {
  it('create (multipart, input_reference byte for byte) → retrieve lifecycle → content → remix → delete', async () => {
    const image = Buffer.concat([Buffer.from('\x89PNG\r\n\x1a\n', 'binary'), Buffer.from(Array.from({ length: 3000 }, (_, i) => i % 256))]);
    const v = await alice.videos.create({ model: 'sora-2', prompt: 'a wave', input_reference: await toFile(image, 'ref.png', { type: 'image/png' }) });
    const ref = sealer.unseal('video', v.id)!;
    expect(ref).toMatchObject({ model: 'sora-2', owner: 'default/alice' });
    expect(v.id).not.toBe(ref.upstreamId);
    const up = holder(ref.upstreamId)!;
    expect(ref.backend).toBe(up === a ? 'b0' : 'b1');
    const created = up.received('/v1/videos').at(-1)!;
    expect(created.files?.[0]).toMatchObject({ field: 'input_reference', filename: 'ref.png', mimeType: 'image/png' });
    expect(created.files![0]!.bytes.equals(image)).toBe(true);
    expect(created.fields?.['model']).toBe('sora-2-up');
    expect(created.authorization).toBe(`Bearer ${UPSTREAM_KEY}`);

    expect(await alice.videos.retrieve(v.id)).toMatchObject({ id: v.id, status: 'in_progress' });
    expect(await alice.videos.retrieve(v.id)).toMatchObject({ id: v.id, status: 'completed' });
    expect(up.received(`/v1/videos/${ref.upstreamId}`).length).toBe(2);

    const content = await alice.videos.downloadContent(v.id);
    expect(content.headers.get('content-type')).toBe('video/mp4');
    expect(content.headers.get('content-length')).toBe(String(VIDEO_BYTES));
    const bytes = Buffer.from(await content.arrayBuffer());
    expect(bytes.length).toBe(VIDEO_BYTES);
    expect(bytes.equals(contentBytes('video', VIDEO_BYTES))).toBe(true);
    for (const [variant, type] of [
      ['thumbnail', 'image/webp'],
      ['spritesheet', 'image/jpeg'],
    ] as const) {
      const r = await alice.videos.downloadContent(v.id, { variant });
      expect(r.headers.get('content-type')).toBe(type);
      expect(Buffer.from(await r.arrayBuffer()).length).toBe(up.sizeOf(variant));
    }
    expect(up.received(`/v1/videos/${ref.upstreamId}/content`).map((r) => r.query.get('variant'))).toEqual([null, 'thumbnail', 'spritesheet']);

    // Remix goes to the backend holding the original, whatever the weights would pick.
    const other = up === a ? b : a;
    const before = other.requests.length;
    const remix = await alice.videos.remix(v.id, { prompt: 'a bigger wave' });
    expect(remix.remixed_from_video_id).toBe(v.id); // sealing is deterministic
    const remixRef = sealer.unseal('video', remix.id)!;
    expect(remixRef.backend).toBe(ref.backend);
    expect(up.videos.has(remixRef.upstreamId)).toBe(true);
    expect(up.received(`/v1/videos/${ref.upstreamId}/remix`).at(-1)?.json).toEqual({ prompt: 'a bigger wave' });
    expect(other.requests.length).toBe(before);

    const deleted = await alice.videos.delete(v.id);
    expect(deleted).toMatchObject({ id: v.id, deleted: true });
    // The upstream's 404 passes through, quoting the client's id rather than the upstream's.
    const err = await alice.videos.retrieve(v.id).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.NotFoundError);
    expect((err as InstanceType<typeof OpenAI.NotFoundError>).message).toContain(v.id);
    expect((err as InstanceType<typeof OpenAI.NotFoundError>).message).not.toContain(ref.upstreamId);
  });

  it('create as JSON; every id of the other backend routes there too', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      const r = await fetch(`${gw.baseURL}/videos`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ALICE}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'sora-2', prompt: `p${i}`, seconds: '8' }),
      });
      expect(r.status).toBe(200);
      const v = (await r.json()) as { id: string; seconds: string };
      expect(v.seconds).toBe('8');
      ids.push(v.id);
    }
    const backends = new Set(ids.map((id) => sealer.unseal('video', id)!.backend));
    expect(backends).toEqual(new Set(['b0', 'b1']));
    for (const id of ids) expect((await alice.videos.retrieve(id)).id).toBe(id);
  });

  it('streams several MB of content: the client has the first bytes before the upstream has sent the rest', async () => {
    const v = await alice.videos.create({ model: 'sora-2', prompt: 'stream me' });
    await alice.videos.retrieve(v.id);
    await alice.videos.retrieve(v.id);
    const up = holder(sealer.unseal('video', v.id)!.upstreamId)!;
    const release = up.holdContent(); // the fake sends one 64 KiB chunk, then waits
    const finishedBefore = up.content.finished;
    const res = await alice.videos.downloadContent(v.id);
    const reader = res.body!.getReader();
    let received = 0;
    while (received === 0) {
      const { value, done } = await reader.read();
      if (done) break;
      received += value.length;
    }
    // First bytes arrived while the upstream is still holding the remaining ~8 MB.
    expect(received).toBeGreaterThan(0);
    expect(received).toBeLessThan(VIDEO_BYTES);
    expect(up.content.finished).toBe(finishedBefore);
    release();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      received += value.length;
    }
    expect(received).toBe(VIDEO_BYTES);
    expect(up.content.finished).toBe(finishedBefore + 1);
  });

  it('GET /v1/videos (list) is refused with a clear error and never forwarded', async () => {
    const before = a.requests.length + b.requests.length;
    const err = await alice.videos.list().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as InstanceType<typeof OpenAI.BadRequestError>).code).toBe('unsupported_endpoint');
    expect((err as Error).message).toMatch(/listing videos is not supported/i);
    expect(a.requests.length + b.requests.length).toBe(before);
    const anon = await fetch(`${gw.baseURL}/videos`);
    expect(anon.status).toBe(401);
  });
});
