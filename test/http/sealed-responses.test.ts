// Stored responses through the gateway with the official SDK: ids sealed in JSON and inside event streams
// (create with stream, responses.stream(), retrieve ?stream=true), unsealed in paths and previous_response_id
// (also of compact and input_tokens), input_items cursors passed through unchanged.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IdSealer } from '../../src/features/sealed-ids/sealed-id.js';
import { FakeVideoResponsesUpstream } from '../fakes/video-responses-upstream.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { ALICE, BOB, newKey, sealedManifests } from '../helpers/sealed-setup.js';

const key = newKey();
const sealer = new IdSealer([key]);
let up: FakeVideoResponsesUpstream;
let gw: TestGateway;
let alice: OpenAI;
const upstreamId = (id: string) => sealer.unseal('response', id)!.upstreamId;

beforeAll(async () => {
  up = await FakeVideoResponsesUpstream.start({ eventDelayMs: 2 });
  gw = await startGateway(sealedManifests({ video: [up.baseURL], responses: up.baseURL }), { idKeys: [key] });
  alice = gw.client(ALICE);
});
afterAll(async () => {
  await gw.close();
  await up.close();
});

describe('responses through sealed ids', () => {
  it('create → retrieve → continue with previous_response_id → delete', async () => {
    const r1 = await alice.responses.create({ model: 'gpt-r', input: 'hello' });
    expect(r1.output_text).toBe('echo: hello');
    expect(sealer.unseal('response', r1.id)).toMatchObject({ model: 'gpt-r', backend: 'store', owner: 'default/alice' });
    expect(up.responses.items.has(upstreamId(r1.id))).toBe(true);
    expect(r1.id).not.toBe(upstreamId(r1.id));

    const got = await alice.responses.retrieve(r1.id);
    expect(got.id).toBe(r1.id);
    expect(up.requests.at(-1)!.path).toBe(`/v1/responses/${upstreamId(r1.id)}`);

    const r2 = await alice.responses.create({ model: 'gpt-r', input: 'again', previous_response_id: r1.id });
    // The upstream saw its own id; the client sees only sealed ones.
    expect((up.received('/v1/responses').at(-1)!.json as { previous_response_id: string }).previous_response_id).toBe(upstreamId(r1.id));
    expect(r2.previous_response_id).toBe(r1.id);
    expect(r2.output_text).toContain('continuing');

    expect(await alice.responses.delete(r1.id)).toMatchObject({ id: r1.id, deleted: true });
    expect(up.responses.items.has(upstreamId(r1.id))).toBe(false);
    const err = await alice.responses.retrieve(r1.id).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.NotFoundError);
    expect(String((err as Error).message)).not.toContain(upstreamId(r1.id));
  });

  it('streaming create: every lifecycle event carries the sealed id, deltas pass through', async () => {
    const stream = await alice.responses.create({ model: 'gpt-r', input: 'one two three', stream: true });
    const ids = new Set<string>();
    let text = '';
    for await (const e of stream) {
      if ('response' in e) ids.add(e.response.id);
      if (e.type === 'response.output_text.delta') text += e.delta;
    }
    expect(text).toBe('echo: one two three');
    expect(ids.size).toBe(1);
    const [id] = [...ids];
    expect(upstreamId(id!)).toMatch(/^resp_[0-9a-f]+$/);
  });

  it('responses.stream() accepts the rewritten sequence and its final id works for follow-ups', async () => {
    const stream = alice.responses.stream({ model: 'gpt-r', input: 'stream helper' });
    const final = await stream.finalResponse();
    expect(final.output_text).toBe('echo: stream helper');
    expect(sealer.unseal('response', final.id)).toBeDefined();
    expect((await alice.responses.retrieve(final.id)).output_text).toBe('echo: stream helper');
  });

  it('retrieve with ?stream=true replays the events with sealed ids (starting_after passes through)', async () => {
    const r = await alice.responses.create({ model: 'gpt-r', input: 'replay me' });
    const replay = await alice.responses.retrieve(r.id, { stream: true });
    const types: string[] = [];
    for await (const e of replay) {
      types.push(e.type);
      if ('response' in e) expect(e.response.id).toBe(r.id);
    }
    expect(types[0]).toBe('response.created');
    expect(types.at(-1)).toBe('response.completed');
    const partial = await alice.responses.retrieve(r.id, { stream: true, starting_after: 3 });
    const seqs: number[] = [];
    for await (const e of partial) seqs.push(e.sequence_number);
    expect(seqs[0]).toBe(4);
    expect(up.requests.at(-1)!.query.get('starting_after')).toBe('3');
    // responses.stream() can also resume an existing response by its (sealed) id.
    const resumed = await alice.responses.stream({ response_id: r.id }).finalResponse();
    expect(resumed.id).toBe(r.id);
  });

  it('input_items: pagination cursors are item ids and pass through unchanged', async () => {
    const r = await alice.responses.create({
      model: 'gpt-r',
      input: [1, 2, 3, 4, 5].map((n) => ({ role: 'user' as const, content: `m${n}` })),
    });
    const texts: string[] = [];
    const ids: string[] = [];
    for await (const item of alice.responses.inputItems.list(r.id, { limit: 2, order: 'asc' })) {
      ids.push(item.id!);
      texts.push((item as { content: { text: string }[] }).content[0]!.text);
    }
    expect(texts).toEqual(['m1', 'm2', 'm3', 'm4', 'm5']);
    const afters = up.received(`/v1/responses/${upstreamId(r.id)}/input_items`).map((q) => q.query.get('after'));
    expect(afters).toEqual([null, ids[1], ids[3]]);
    expect(ids.every((i) => i.startsWith('msg_'))).toBe(true);
  });

  it('cancel a background response', async () => {
    const bg = await alice.responses.create({ model: 'gpt-r', input: 'slow', background: true });
    const cancelled = await alice.responses.cancel(bg.id);
    expect(cancelled).toMatchObject({ id: bg.id, status: 'cancelled' });
    expect(up.requests.at(-1)!.path).toBe(`/v1/responses/${upstreamId(bg.id)}/cancel`);
  });

  it('compact and input_tokens: served on the route of their model, a sealed previous_response_id unsealed for its backend', async () => {
    const r = await alice.responses.create({ model: 'gpt-r', input: 'remember this' });
    const compacted = await alice.responses.compact({ model: 'gpt-r', previous_response_id: r.id, input: 'and this' });
    expect(compacted.object).toBe('response.compaction');
    expect(compacted.output[0]!.type).toBe('compaction');
    const sent = up.received('/v1/responses/compact').at(-1)!.json as { model: string; previous_response_id: string };
    expect(sent).toMatchObject({ model: 'gpt-r-up', previous_response_id: upstreamId(r.id) });
    const counted = await alice.responses.inputTokens.count({ model: 'gpt-r', previous_response_id: r.id, input: 'x' });
    expect(counted).toEqual({ object: 'response.input_tokens', input_tokens: 7 });
    expect((up.received('/v1/responses/input_tokens').at(-1)!.json as { previous_response_id: string }).previous_response_id).toBe(upstreamId(r.id));
    // Another token's id, a made-up one: refused like every sealed id, nothing forwarded.
    const before = up.requests.length;
    const foreign = await gw
      .client(BOB)
      .responses.compact({ model: 'gpt-r', previous_response_id: r.id })
      .catch((e: unknown) => e);
    expect(foreign).toBeInstanceOf(OpenAI.NotFoundError);
    expect((foreign as InstanceType<typeof OpenAI.NotFoundError>).param).toBe('previous_response_id');
    const madeUp = await alice.responses.inputTokens.count({ model: 'gpt-r', previous_response_id: 'resp_abc' }).catch((e: unknown) => e);
    expect(madeUp).toBeInstanceOf(OpenAI.NotFoundError);
    expect(up.requests.length).toBe(before);
    // An upstream error quotes the client's id, not the upstream's.
    await alice.responses.delete(r.id);
    const gone = await alice.responses.compact({ model: 'gpt-r', previous_response_id: r.id }).catch((e: unknown) => e);
    expect(gone).toBeInstanceOf(OpenAI.BadRequestError);
    expect((gone as Error).message).toContain(r.id);
    expect((gone as Error).message).not.toContain(upstreamId(r.id));
  });

  it('continuing on another model: allowed on a backend sharing the store, refused otherwise', async () => {
    const r1 = await alice.responses.create({ model: 'gpt-r', input: 'first' });
    const r2 = await alice.responses.create({ model: 'gpt-r-same-store', input: 'second', previous_response_id: r1.id });
    expect(r2.output_text).toContain('continuing');
    expect(sealer.unseal('response', r2.id)).toMatchObject({ model: 'gpt-r-same-store', backend: 'shared' });
    const before = up.requests.length;
    const err = await alice.responses.create({ model: 'gpt-r-other-store', input: 'x', previous_response_id: r1.id }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('previous_response_id');
    expect(up.requests.length).toBe(before);
  });
});
