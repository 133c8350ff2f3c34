// A video that failed is not billed by the upstream: its create was charged by its seconds, and the first retrieve
// that shows it failed credits the creator once (a negative record on that retrieve's access line), which money
// limits count. Through the real HTTP stack with the openai SDK and a fake upstream whose video the test fails.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeVideoResponsesUpstream } from '../fakes/video-responses-upstream.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { ALICE, newKey, sealedManifests } from '../helpers/sealed-setup.js';

let upstream: FakeVideoResponsesUpstream;
let gw: TestGateway;
let alice: OpenAI;

beforeAll(async () => {
  upstream = await FakeVideoResponsesUpstream.start();
  // 8 seconds at 0.10 a second cost 0.80. A video reserves 0 (its seconds are charged at its create's answer): two
  // spend 1.60 of a day's 1.00, and the next is refused until a credit brings the spend back under it.
  const manifests = sealedManifests({
    video: [upstream.baseURL],
    responses: upstream.baseURL,
    videoPricing: '{videoPerSecond: "0.10"}',
    groupLimits: '{costPerDay: "1.00"}',
  });
  gw = await startGateway(manifests, { idKeys: [newKey()] });
  alice = gw.client(ALICE);
});
afterAll(async () => {
  await gw?.close();
  await upstream?.close();
});

const create = () => alice.videos.create({ model: 'sora-2', prompt: 'waves', seconds: '8' }).withResponse();
/** Sets the upstream's (only new) video to a status, as its generation would. */
const setStatus = (before: Set<string>, status: 'failed' | 'completed') => {
  const v = [...upstream.videos.values()].find((x) => !before.has(x.id))!;
  v.status = status;
  before.add(v.id);
};

describe('a video that failed credits its create', () => {
  it('once, on the retrieve that shows it failed, with the negative of its cost; the day budget gets it back', async () => {
    const seen = new Set<string>();
    const first = await create();
    expect(await gw.record(first.response.headers.get('x-request-id'))).toMatchObject({ seconds: 8, cost: '0.80' });
    setStatus(seen, 'failed');
    const other = await create();
    expect(await gw.record(other.response.headers.get('x-request-id'))).toMatchObject({ seconds: 8, cost: '0.80' });
    setStatus(seen, 'completed');
    const refused = await create().catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(OpenAI.RateLimitError);
    expect((refused as InstanceType<typeof OpenAI.RateLimitError>).code).toBe('insufficient_quota');

    const got = await alice.videos.retrieve(first.data.id).withResponse();
    expect(got.data.status).toBe('failed');
    expect(await gw.record(got.response.headers.get('x-request-id'))).toMatchObject({
      credit: true,
      videoId: first.data.id,
      createReqId: first.response.headers.get('x-request-id'),
      seconds: 8,
      cost: '-0.80',
      currency: 'USD',
    });
    // Retrieved again: no second credit.
    const again = await alice.videos.retrieve(first.data.id).withResponse();
    const line = await gw.record(again.response.headers.get('x-request-id'));
    expect(line['credit']).toBeUndefined();
    expect(line['cost']).toBeUndefined();

    // The cost counter holds both charges; the credit is counted apart.
    const metric = async (name: string) => (await gw.metrics.registry.getSingleMetric(name)!.get()).values.find((v) => v.labels['model'] === 'sora-2')?.value;
    expect(await metric('model_gateway_cost_total')).toBe(1.6);
    expect(await metric('model_gateway_cost_credited_total')).toBe(0.8);

    // Credited (1.60 - 0.80 spent of 1.00), the day has room for a video again; a completed one's retrieve credits nothing.
    await create();
    const done = await alice.videos.retrieve(other.data.id).withResponse();
    expect(done.data.status).toBe('completed');
    expect((await gw.record(done.response.headers.get('x-request-id')))['credit']).toBeUndefined();
  });
});
