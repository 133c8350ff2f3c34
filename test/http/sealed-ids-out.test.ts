// Every place an object id leaves the gateway, beyond sealed-responses.test.ts and sealed-videos.test.ts: the
// previous_response_id of each event of a continued stream and of a later retrieve, a compaction's id, and the upstream's error texts
// that quote its own id (a deleted response's input_items, a continued stream whose previous response is gone, a video
// downloaded before it is ready), which the client sees quoting the sealed id instead. The Conversations API is not
// served (404 unknown_url, never forwarded); a `conversation` in a Responses request passes as it came.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IdSealer } from '../../src/features/sealed-ids/sealed-id.js';
import { FakeVideoResponsesUpstream } from '../fakes/video-responses-upstream.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { ALICE, newKey, sealedManifests } from '../helpers/sealed-setup.js';

const key = newKey();
const sealer = new IdSealer([key]);
let up: FakeVideoResponsesUpstream;
let gw: TestGateway;
let alice: OpenAI;
const rawResponse = (id: string) => sealer.unseal('response', id)!.upstreamId;

beforeAll(async () => {
  up = await FakeVideoResponsesUpstream.start({ videoBytes: 64 * 1024 });
  gw = await startGateway(sealedManifests({ video: [up.baseURL], responses: up.baseURL }), { idKeys: [key] });
  alice = gw.client(ALICE);
});
afterAll(async () => {
  await gw?.close();
  await up?.close();
});

/** The error a call raised, or fails the test. */
async function raised(call: Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
  const err = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(OpenAI.APIError);
  return err as InstanceType<typeof OpenAI.APIError>;
}

describe('previous_response_id as it comes back', () => {
  it('a continued stream: every lifecycle event names the previous response by the id the client sent', async () => {
    const r1 = await alice.responses.create({ model: 'gpt-r', input: 'first' });
    const stream = await alice.responses.create({ model: 'gpt-r', input: 'second', previous_response_id: r1.id, stream: true });
    const seen: (string | null | undefined)[] = [];
    let id: string | undefined;
    for await (const e of stream) {
      if ('response' in e) {
        seen.push(e.response.previous_response_id);
        id = e.response.id;
      }
    }
    expect(seen.length).toBeGreaterThanOrEqual(3);
    expect(new Set(seen)).toEqual(new Set([r1.id]));
    // Retrieved later, the continuation still names its previous response by the same id.
    expect((await alice.responses.retrieve(id!)).previous_response_id).toBe(r1.id);
  });
});

describe('a compaction', () => {
  it('its id is sealed like a response id, and goes back upstream as the id the upstream gave', async () => {
    const r = await alice.responses.create({ model: 'gpt-r', input: 'long history' });
    const compacted = await alice.responses.compact({ model: 'gpt-r', previous_response_id: r.id });
    const ref = sealer.unseal('response', compacted.id);
    expect(ref).toMatchObject({ model: 'gpt-r', backend: 'store', owner: 'default/alice' });
    expect(compacted.id).not.toBe(ref!.upstreamId);
    // Chained on: the gateway takes its own id back (it refused the raw one as a made-up id).
    await alice.responses.create({ model: 'gpt-r', input: 'go on', previous_response_id: compacted.id }).catch(() => undefined);
    expect((up.received('/v1/responses').at(-1)!.json as { previous_response_id: string }).previous_response_id).toBe(ref!.upstreamId);
  });
});

describe('upstream errors that quote the upstream id', () => {
  it("a deleted response's input_items: the 404 quotes the sealed id", async () => {
    const r = await alice.responses.create({ model: 'gpt-r', input: 'gone soon' });
    await alice.responses.delete(r.id);
    const err = await raised(alice.responses.inputItems.list(r.id));
    expect(err).toBeInstanceOf(OpenAI.NotFoundError);
    expect(err.message).toContain(r.id);
    expect(err.message).not.toContain(rawResponse(r.id));
  });

  it('a stream continuing a response the upstream no longer has: the 400 quotes the sealed id', async () => {
    const r = await alice.responses.create({ model: 'gpt-r', input: 'gone soon' });
    // Deleted behind the gateway's back (another client of the upstream account, or its retention).
    up.responses.items.delete(rawResponse(r.id));
    const err = await raised(alice.responses.create({ model: 'gpt-r', input: 'x', previous_response_id: r.id, stream: true }));
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err).toMatchObject({ param: 'previous_response_id', code: 'previous_response_not_found' });
    expect(err.message).toContain(r.id);
    expect(err.message).not.toContain(rawResponse(r.id));
  });

  it('a video downloaded before it is ready: the 400 quotes the sealed id', async () => {
    const v = await alice.videos.create({ model: 'sora-2', prompt: 'not yet' });
    const err = await raised(alice.videos.downloadContent(v.id));
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err.message).toContain(v.id);
    expect(err.message).not.toContain(sealer.unseal('video', v.id)!.upstreamId);
  });
});

describe('conversations', () => {
  it('the Conversations API is not served: 404 unknown_url, nothing forwarded', async () => {
    const before = up.requests.length;
    const created = await raised(alice.conversations.create({ items: [{ type: 'message', role: 'user', content: 'hi' }] }));
    expect(created).toMatchObject({ status: 404, code: 'unknown_url' });
    const items = await raised(alice.conversations.items.list('conv_123'));
    expect(items).toMatchObject({ status: 404, code: 'unknown_url' });
    expect(up.requests.length).toBe(before);
  });

  it('a conversation id in a Responses request goes upstream as it came', async () => {
    await alice.responses.create({ model: 'gpt-r', input: 'in a conversation', conversation: 'conv_6802f2c4e2a08190' });
    expect(up.received('/v1/responses').at(-1)!.json).toMatchObject({ model: 'gpt-r-up', conversation: 'conv_6802f2c4e2a08190' });
  });
});
