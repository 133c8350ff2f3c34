// Videos through two gateway replicas that share the sealing key, as a client behind a load balancer meets them:
// a video made through one is polled, downloaded (every variant), remixed and deleted through the other, with the
// node SDK and with openai-python's create_and_poll. A key of another group, whose group serves the same model, gets
// the same 404 as for an id that does not exist, from either replica, and nothing reaches the upstream. The list
// stays refused, an `after` cursor included (the shared upstream account's list cannot be filtered per owner).
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error: a plain .mjs helper shared with scripts/run-tests.mjs
import { ensurePythonClients, PYTHON } from '../../scripts/py-clients.mjs';
import { IdSealer } from '../../src/features/sealed-ids/sealed-id.js';
import { contentBytes, FakeVideoResponsesUpstream } from '../fakes/video-responses-upstream.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { ALICE, newKey, sealedManifests } from '../helpers/sealed-setup.js';
import { REPO_ROOT } from '../support/spawn-cli.js';

const CAROL = 'sk-sealed-carol-0123456789'; // group `studio`, which also serves sora-2
const DAVE = 'sk-sealed-dave-0123456789'; // group `text-only`, without sora-2
const VIDEO_BYTES = 512 * 1024;
const key = newKey();
const sealer = new IdSealer([key]);
let up: FakeVideoResponsesUpstream;
let g1: TestGateway;
let g2: TestGateway;

const otherGroups = `
---
apiVersion: v1
kind: Secret
metadata: {name: other-keys}
stringData: {carol: ${CAROL}, dave: ${DAVE}}
---
apiVersion: modelgateway.io/v1alpha1
kind: Group
metadata: {name: studio}
spec: {models: [sora-2, gpt-r]}
---
apiVersion: modelgateway.io/v1alpha1
kind: Group
metadata: {name: text-only}
spec: {models: [gpt-r]}
---
apiVersion: modelgateway.io/v1alpha1
kind: GatewayToken
metadata: {name: carol}
spec: {group: studio, secretRef: {name: other-keys, key: carol}}
---
apiVersion: modelgateway.io/v1alpha1
kind: GatewayToken
metadata: {name: dave}
spec: {group: text-only, secretRef: {name: other-keys, key: dave}}
`;

beforeAll(async () => {
  up = await FakeVideoResponsesUpstream.start({ videoBytes: VIDEO_BYTES });
  const manifests = sealedManifests({ video: [up.baseURL], responses: up.baseURL }) + otherGroups;
  g1 = await startGateway(manifests, { idKeys: [key] });
  g2 = await startGateway(manifests, { idKeys: [key] });
});
afterAll(async () => {
  await g1?.close();
  await g2?.close();
  await up?.close();
});

/** Polls through `c` until the video is done, as createAndPoll would (the node SDK has no such helper). */
async function poll(c: OpenAI, id: string): Promise<OpenAI.Videos.Video> {
  for (;;) {
    const v = await c.videos.retrieve(id);
    if (v.status === 'completed' || v.status === 'failed') return v;
  }
}

/** Every call a client can make on a video id. */
function calls(c: OpenAI, id: string): [string, () => Promise<unknown>][] {
  return [
    ['retrieve', () => c.videos.retrieve(id)],
    ['downloadContent', () => c.videos.downloadContent(id)],
    ['downloadContent thumbnail', () => c.videos.downloadContent(id, { variant: 'thumbnail' })],
    ['remix', () => c.videos.remix(id, { prompt: 'mine now' })],
    ['delete', () => c.videos.delete(id)],
  ];
}

describe('a video across two replicas', () => {
  it('created through one (multipart with input_reference), polled, downloaded, remixed and deleted through the other', async () => {
    const image = Buffer.concat([Buffer.from('\x89PNG\r\n\x1a\n', 'binary'), Buffer.alloc(2000, 0xfe)]);
    const a1 = g1.client(ALICE);
    const a2 = g2.client(ALICE);
    const v = await a1.videos.create({ model: 'sora-2', prompt: 'a wave', input_reference: await toFile(image, 'ref.png', { type: 'image/png' }) });
    const upstreamId = sealer.unseal('video', v.id)!.upstreamId;
    expect(up.received('/v1/videos').at(-1)!.files![0]!.bytes.equals(image)).toBe(true);

    const done = await poll(a2, v.id);
    expect(done).toMatchObject({ id: v.id, status: 'completed' });
    const video = Buffer.from(await (await a2.videos.downloadContent(v.id)).arrayBuffer());
    expect(video.equals(contentBytes('video', VIDEO_BYTES))).toBe(true);
    for (const variant of ['thumbnail', 'spritesheet'] as const) {
      const bytes = Buffer.from(await (await a2.videos.downloadContent(v.id, { variant })).arrayBuffer());
      expect(bytes.equals(contentBytes(variant, up.sizeOf(variant))), variant).toBe(true);
    }
    const remix = await a2.videos.remix(v.id, { prompt: 'slower' });
    expect(remix.remixed_from_video_id).toBe(v.id);
    // The remix's id, minted by the second replica, is served by the first.
    expect((await a1.videos.retrieve(remix.id)).id).toBe(remix.id);

    expect(await a2.videos.delete(v.id)).toMatchObject({ id: v.id, deleted: true });
    const gone = await a1.videos.retrieve(v.id).catch((e: unknown) => e);
    expect(gone).toBeInstanceOf(OpenAI.NotFoundError);
    expect((gone as Error).message).toContain(v.id);
    expect((gone as Error).message).not.toContain(upstreamId);
  });

  it('created as JSON through the second, served by the first', async () => {
    const r = await fetch(`${g2.baseURL}/videos`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ALICE}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'sora-2', prompt: 'json', seconds: '8', size: '1280x720' }),
    });
    const v = (await r.json()) as OpenAI.Videos.Video;
    expect(v).toMatchObject({ seconds: '8', size: '1280x720', status: 'queued' });
    expect((await poll(g1.client(ALICE), v.id)).status).toBe('completed');
  });

  it('a key of another group: 404 not_found on every call through either replica, like an id that never was; nothing forwarded', async () => {
    const v = await g1.client(ALICE).videos.create({ model: 'sora-2', prompt: 'private' });
    await poll(g1.client(ALICE), v.id);
    const before = up.requests.length;
    const notFound = await (await fetch(`${g1.baseURL}/videos/video_never_was`, { headers: { authorization: `Bearer ${CAROL}` } })).json();
    for (const g of [g1, g2]) {
      for (const other of [CAROL, DAVE]) {
        for (const [name, call] of calls(g.client(other), v.id)) {
          const err = await call().then(
            () => undefined,
            (e: unknown) => e,
          );
          expect(err, name).toBeInstanceOf(OpenAI.NotFoundError);
          expect((err as InstanceType<typeof OpenAI.NotFoundError>).error, name).toEqual((notFound as { error: unknown }).error);
        }
      }
    }
    expect(up.requests.length).toBe(before);
    // Still the owner's, whole.
    expect((await g2.client(ALICE).videos.retrieve(v.id)).status).toBe('completed');
  });

  it('the list, with a sealed id as its `after` cursor: refused by both replicas and never forwarded', async () => {
    const v = await g1.client(ALICE).videos.create({ model: 'sora-2', prompt: 'cursor' });
    const before = up.requests.length;
    for (const g of [g1, g2]) {
      const err = await g
        .client(ALICE)
        .videos.list({ after: v.id, limit: 2 })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(OpenAI.BadRequestError);
      expect((err as InstanceType<typeof OpenAI.BadRequestError>).code).toBe('unsupported_endpoint');
    }
    expect(up.requests.length).toBe(before);
  });
});

describe('openai-python across the replicas', () => {
  it('create_and_poll through one; download, remix and delete through the other; another group gets 404', async () => {
    expect(ensurePythonClients(), 'the Python clients could not be installed').toBe(true);
    const script = join(REPO_ROOT, 'test/clients/openai_python_videos.py');
    // Asynchronously: both replicas and the fake live in this process and must answer meanwhile.
    const run = await promisify(execFile)(PYTHON, [script, g1.baseURL, g2.baseURL, ALICE, CAROL], { timeout: 30_000 });
    const seen = JSON.parse(run.stdout) as Record<string, { ok: boolean; value?: any; status?: number; code?: string; message?: string }>;
    for (const name of ['create_and_poll', 'download', 'remix', 'delete']) expect(seen[name], name).toMatchObject({ ok: true });
    const id = seen['create_and_poll']!.value.id as string;
    expect(sealer.unseal('video', id)).toMatchObject({ model: 'sora-2', owner: 'default/alice' });
    expect(seen['create_and_poll']!.value).toMatchObject({ status: 'completed', seconds: '8', progress: 100 });
    const created = up.received('/v1/videos').find((r) => r.method === 'POST' && r.fields?.['prompt'] === 'a wave' && r.files?.length);
    expect(created?.files?.[0]).toMatchObject({ field: 'input_reference', filename: 'ref.png', mimeType: 'image/png' });
    expect(seen['download']!.value).toEqual({ video: VIDEO_BYTES, type: 'video/mp4', thumbnail: up.sizeOf('thumbnail'), thumbnail_type: 'image/webp' });
    expect(seen['remix']!.value.remixed_from).toBe(id);
    expect(seen['other_group']).toMatchObject({ ok: false, error: 'NotFoundError', status: 404, code: 'not_found' });
    expect(seen['delete']!.value).toBe(true);
    expect(seen['retrieve_deleted']).toMatchObject({ ok: false, error: 'NotFoundError', status: 404 });
    expect(seen['retrieve_deleted']!.message).toContain(id);
    expect(seen['retrieve_deleted']!.message).not.toContain(sealer.unseal('video', id)!.upstreamId);
  }, 40_000);
});
