// Ownership and key handling of sealed ids across tokens, replicas, restarts and key rotation. Every refusal is
// the same 404 not_found, and a refused id never reaches an upstream.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeVideoResponsesUpstream } from '../fakes/video-responses-upstream.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { ALICE, BOB, newKey, sealedManifests } from '../helpers/sealed-setup.js';

const k1 = newKey();
const k2 = newKey();
let up: FakeVideoResponsesUpstream;
let manifests: string;
const gateways: TestGateway[] = [];
let g1: TestGateway;
let videoId: string;
let respId: string;
let bgId: string;

async function gateway(idKeys: Uint8Array[]): Promise<TestGateway> {
  const gw = await startGateway(manifests, { idKeys });
  gateways.push(gw);
  return gw;
}

/** Every call that names an id, as one client would make it. */
function calls(c: OpenAI, ids: { video: string; resp: string; bg: string }): [string, () => Promise<unknown>][] {
  return [
    ['videos.retrieve', () => c.videos.retrieve(ids.video)],
    ['videos.downloadContent', () => c.videos.downloadContent(ids.video)],
    ['videos.remix', () => c.videos.remix(ids.video, { prompt: 'x' })],
    ['videos.delete', () => c.videos.delete(ids.video)],
    ['responses.retrieve', () => c.responses.retrieve(ids.resp)],
    ['responses.retrieve stream', () => c.responses.retrieve(ids.resp, { stream: true })],
    ['responses.inputItems.list', () => c.responses.inputItems.list(ids.resp)],
    ['responses.cancel', () => c.responses.cancel(ids.bg)],
    ['responses.delete', () => c.responses.delete(ids.resp)],
    ['previous_response_id', () => c.responses.create({ model: 'gpt-r', input: 'x', previous_response_id: ids.resp })],
  ];
}

async function expectAllNotFound(c: OpenAI, ids: { video: string; resp: string; bg: string }): Promise<void> {
  const before = up.requests.length;
  for (const [name, call] of calls(c, ids)) {
    const err = await call().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err, name).toBeInstanceOf(OpenAI.NotFoundError);
    expect((err as InstanceType<typeof OpenAI.NotFoundError>).code, name).toBe('not_found');
  }
  expect(up.requests.length, 'no refused call reaches the upstream').toBe(before);
}

const flip = (id: string, at: number) => id.slice(0, at) + (id[at] === 'A' ? 'B' : 'A') + id.slice(at + 1);

beforeAll(async () => {
  up = await FakeVideoResponsesUpstream.start({ videoBytes: 256 * 1024 });
  manifests = sealedManifests({ video: [up.baseURL], responses: up.baseURL });
  g1 = await gateway([k1]);
  const alice = g1.client(ALICE);
  const v = await alice.videos.create({ model: 'sora-2', prompt: 'mine' });
  await alice.videos.retrieve(v.id);
  await alice.videos.retrieve(v.id);
  videoId = v.id;
  respId = (await alice.responses.create({ model: 'gpt-r', input: 'mine' })).id;
  bgId = (await alice.responses.create({ model: 'gpt-r', input: 'mine', background: true })).id;
});
afterAll(async () => {
  for (const g of gateways) await g.close();
  await up.close();
});

describe('ownership', () => {
  it('another token gets 404 not_found on every route for the first token’s ids', async () => {
    await expectAllNotFound(g1.client(BOB), { video: videoId, resp: respId, bg: bgId });
  });

  it('a tampered id gets 404 and reaches no upstream', async () => {
    const alice = g1.client(ALICE);
    for (const at of [6, 20, videoId.length - 1]) {
      await expectAllNotFound(alice, { video: flip(videoId, at), resp: flip(respId, at), bg: flip(bgId, at) });
    }
    // Right MAC, wrong kind: a video id is no response id.
    await expectAllNotFound(alice, { video: respId, resp: videoId, bg: `resp_${videoId.slice(6)}` });
    // A raw upstream id is not accepted either.
    const raw = [...up.videos.keys()][0]!;
    await expectAllNotFound(alice, { video: raw, resp: [...up.responses.items.keys()][0]!, bg: raw });
  });

  it('refusals look the same whatever the reason (no existence oracle)', async () => {
    const body = async (key: string, id: string) => (await fetch(`${g1.baseURL}/videos/${id}`, { headers: { authorization: `Bearer ${key}` } })).json();
    const foreign = await body(BOB, videoId);
    expect(await body(ALICE, flip(videoId, 30))).toEqual(foreign);
    expect(await body(ALICE, 'video_doesnotexist')).toEqual(foreign);
    expect(foreign).toEqual({ error: { message: 'No video found with that id.', type: 'invalid_request_error', param: null, code: 'not_found' } });
  });

  it('a token whose group no longer includes the model loses access, and regains it', async () => {
    const alice = g1.client(ALICE);
    g1.load(sealedManifests({ video: [up.baseURL], responses: up.baseURL, groupModels: ['gpt-r'] }));
    try {
      await expect(alice.videos.retrieve(videoId)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
      expect((await alice.responses.retrieve(respId)).id).toBe(respId);
    } finally {
      g1.load(manifests);
    }
    expect((await alice.videos.retrieve(videoId)).id).toBe(videoId);
  });
});

describe('keys across replicas, restarts and rotation', () => {
  it('a second instance with the same key serves the first one’s ids, and the other way round', async () => {
    const g2 = await gateway([k1]);
    const alice2 = g2.client(ALICE);
    expect((await alice2.videos.retrieve(videoId)).id).toBe(videoId);
    expect((await alice2.responses.retrieve(respId)).id).toBe(respId);
    const r = await alice2.responses.create({ model: 'gpt-r', input: 'from g2' });
    expect((await g1.client(ALICE).responses.retrieve(r.id)).output_text).toBe('echo: from g2');
    await expectAllNotFound(g2.client(BOB), { video: videoId, resp: respId, bg: bgId });
  });

  it('a restarted instance still serves old ids', async () => {
    await g1.close();
    gateways.splice(gateways.indexOf(g1), 1);
    g1 = await gateway([k1]);
    const alice = g1.client(ALICE);
    expect((await alice.videos.retrieve(videoId)).status).toBe('completed');
    const content = await alice.videos.downloadContent(videoId);
    expect((await content.arrayBuffer()).byteLength).toBe(256 * 1024);
    expect((await alice.responses.inputItems.list(respId)).data.length).toBe(1);
  });

  it('an instance with another key refuses the ids', async () => {
    const other = await gateway([k2]);
    await expectAllNotFound(other.client(ALICE), { video: videoId, resp: respId, bg: bgId });
  });

  it('a rotated key list (new first, old kept) verifies old ids; new ids need the new key', async () => {
    const rotated = await gateway([k2, k1]);
    const alice = rotated.client(ALICE);
    expect((await alice.videos.retrieve(videoId)).id).toBe(videoId);
    expect((await alice.responses.retrieve(respId)).id).toBe(respId);
    const fresh = (await alice.responses.create({ model: 'gpt-r', input: 'new key' })).id;
    const newOnly = await gateway([k2]);
    expect((await newOnly.client(ALICE).responses.retrieve(fresh)).id).toBe(fresh);
    // An instance not yet given the new key cannot read ids signed with it (hence: add the key everywhere first).
    await expect(g1.client(ALICE).responses.retrieve(fresh)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  });
});
