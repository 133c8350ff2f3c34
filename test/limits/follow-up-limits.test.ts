// Limits on the follow-up calls of sealed ids (a video's retrieve, content, remix and delete; a stored response's
// retrieve, input_items, cancel and delete), through the real HTTP stack with the openai SDK: every one counts as a
// request, a remix also like a create, and none of them is refused for tokens, which they do not consume.
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { FakeVideoResponsesUpstream } from '../fakes/video-responses-upstream.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { ALICE, newKey, sealedManifests } from '../helpers/sealed-setup.js';
import { waitUntil } from '../support/wait.js';
import { insideOneMinute } from './minute.js';

let upstream: FakeVideoResponsesUpstream | undefined;
let gw: TestGateway | undefined;

afterEach(async () => {
  await gw?.close();
  await upstream?.close();
  gw = undefined;
  upstream = undefined;
});

async function setup(groupLimits: string): Promise<OpenAI> {
  upstream = await FakeVideoResponsesUpstream.start({ videoBytes: 512 * 1024 });
  gw = await startGateway(sealedManifests({ video: [upstream.baseURL], responses: upstream.baseURL, groupLimits }), { idKeys: [newKey()] });
  return gw.client(ALICE);
}

/** The HTTP status a call ended with (200 for a success). */
async function statusOf(p: Promise<unknown>): Promise<number> {
  return p.then(
    () => 200,
    (e: unknown) => (e instanceof OpenAI.APIError ? (e.status ?? 0) : Promise.reject(e)),
  );
}

const create = (c: OpenAI) => c.videos.create({ model: 'sora-2', prompt: 'a wave', seconds: '8' });

describe('follow-up calls under limits', () => {
  it('requestsPerMinute 1: after a video create, a second create and every remix of the first get 429; nothing reaches the upstream', async () => {
    await insideOneMinute(15_000);
    const alice = await setup('{requestsPerMinute: 1}');
    const v = await create(alice);
    expect(await statusOf(create(alice))).toBe(429);
    const err = await alice.videos.remix(v.id, { prompt: 'a bigger wave' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    expect((err as InstanceType<typeof OpenAI.RateLimitError>).code).toBe('rate_limit_exceeded');
    expect((err as InstanceType<typeof OpenAI.RateLimitError>).message).toContain('group default/team');
    expect(await statusOf(alice.videos.remix(v.id, { prompt: 'again' }))).toBe(429);
    expect(upstream!.received('/v1/videos').filter((r) => r.path.endsWith('/remix'))).toHaveLength(0);
    const remixes = await waitUntil(
      () => {
        const lines = gw!.logs.filter((l) => l['msg'] === 'request' && String(l['path']).endsWith('/remix'));
        return lines.length === 2 ? lines : undefined;
      },
      5_000,
      'the access lines of both remixes',
    );
    expect(remixes.map((l) => [l['status'], l['seconds']])).toEqual([
      [429, undefined],
      [429, undefined],
    ]);
  });

  it('a remix is counted like a create: a request, and the seconds of the new video in its usage record', async () => {
    await insideOneMinute(15_000);
    const alice = await setup('{requestsPerMinute: 2}');
    const v = await create(alice);
    const remix = await alice.videos.remix(v.id, { prompt: 'a bigger wave' });
    expect(remix.remixed_from_video_id).toBe(v.id);
    expect(await statusOf(alice.videos.remix(v.id, { prompt: 'again' }))).toBe(429);
    const record = await waitUntil(() => gw!.logs.find((l) => l['msg'] === 'request' && String(l['path']).endsWith('/remix') && l['status'] === 200));
    expect(record).toMatchObject({ family: 'videos', seconds: 8, tokenRef: 'default/alice', group: 'team' });
  });

  it('every follow-up counts against requestsPerMinute: once the minute is spent, each gets 429 and none reaches the upstream', async () => {
    await insideOneMinute(15_000);
    const alice = await setup('{requestsPerMinute: 4}');
    const v = await create(alice);
    const r = await alice.responses.create({ model: 'gpt-r', input: 'hello', background: true });
    expect(await statusOf(alice.videos.retrieve(v.id))).toBe(200);
    expect(await statusOf(alice.responses.retrieve(r.id))).toBe(200);
    const sent = upstream!.requests.length;
    const followUps: [string, () => Promise<unknown>][] = [
      ['videos.retrieve', () => alice.videos.retrieve(v.id)],
      ['videos.downloadContent', () => alice.videos.downloadContent(v.id)],
      ['videos.remix', () => alice.videos.remix(v.id, { prompt: 'x' })],
      ['videos.delete', () => alice.videos.delete(v.id)],
      ['responses.retrieve', () => alice.responses.retrieve(r.id)],
      ['responses.inputItems.list', () => alice.responses.inputItems.list(r.id)],
      ['responses.cancel', () => alice.responses.cancel(r.id)],
      ['responses.delete', () => alice.responses.delete(r.id)],
    ];
    const statuses: Record<string, number> = {};
    for (const [name, call] of followUps) statuses[name] = await statusOf(call());
    expect(statuses).toEqual(Object.fromEntries(followUps.map(([name]) => [name, 429])));
    expect(upstream!.requests.length).toBe(sent);
  });

  it('a background Responses create is recorded when it is answered (queued): its input estimated, nothing generated; retrieving it records nothing', async () => {
    const alice = await setup('{requestsPerMinute: 100}');
    const { data: r, response } = await alice.responses.create({ model: 'gpt-r', input: 'hello there', background: true }).withResponse();
    expect(r.status).toBe('queued');
    const reqId = response.headers.get('x-request-id');
    const created = await gw!.record(reqId);
    expect(created).toMatchObject({ family: 'responses', estimated: true, outputTokens: 0 });
    expect(created['inputTokens']).toBeGreaterThan(0);
    const got = await alice.responses.retrieve(r.id).withResponse();
    const retrieved = await gw!.record(got.response.headers.get('x-request-id'));
    expect(retrieved['inputTokens']).toBeUndefined();
  });

  it('concurrentRequests counts a follow-up in flight: a held download takes the slot until it ends', async () => {
    const alice = await setup('{concurrentRequests: 1}');
    const v = await create(alice);
    await waitUntil(async () => (await alice.videos.retrieve(v.id)).status === 'completed', 5000, 'the video to complete');
    const release = upstream!.holdContent();
    const download = await alice.videos.downloadContent(v.id);
    const reader = download.body!.getReader();
    try {
      expect((await reader.read()).done).toBe(false); // the first chunk came; the rest is held
      expect(await statusOf(alice.videos.retrieve(v.id))).toBe(429);
    } finally {
      release();
    }
    while (!(await reader.read()).done);
    await waitUntil(async () => (await statusOf(alice.videos.retrieve(v.id))) === 200, 5000, 'the slot to come back');
  });

  it('token limits never refuse a follow-up: it reserves and consumes no tokens', async () => {
    const alice = await setup('{tokensPerMinute: 100000}');
    const v = await create(alice);
    const r = await alice.responses.create({ model: 'gpt-r', input: 'hello' });
    // A limit below any create's reservation: creates can never fit, the follow-ups still pass.
    gw!.load(sealedManifests({ video: [upstream!.baseURL], responses: upstream!.baseURL, groupLimits: '{tokensPerMinute: 1, tokensPerMonth: 1}' }));
    expect(await statusOf(alice.responses.create({ model: 'gpt-r', input: 'hello' }))).toBe(429);
    expect(await statusOf(alice.responses.retrieve(r.id))).toBe(200);
    expect(await statusOf(alice.responses.inputItems.list(r.id))).toBe(200);
    expect(await statusOf(alice.videos.retrieve(v.id))).toBe(200);
    expect(await statusOf(alice.videos.remix(v.id, { prompt: 'x' }))).toBe(200);
  });
});
