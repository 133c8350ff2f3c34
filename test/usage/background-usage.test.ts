// What a background Responses request generates, through the real HTTP stack with the openai SDK and a fake upstream
// that answers the create `queued` and completes the response over later retrieves: the first follow-up that shows it
// completed (a retrieve, or a streamed retrieve) records what it generated beyond the create's record, once; its cost
// is charged to the creator's money limits.
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { FakeVideoResponsesUpstream } from '../fakes/video-responses-upstream.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { ALICE, newKey, sealedManifests } from '../helpers/sealed-setup.js';

/** What the completed response reports: 1,200 input tokens (200 cached), 30,000 output tokens. */
const USAGE = { input_tokens: 1200, cached_tokens: 200, output_tokens: 30_000 };
const PRICING = '{inputPerMTok: "2.00", cachedInputPerMTok: "1.00", outputPerMTok: "8.00"}';
/** In micro-units: 1,000 uncached × 2 + 200 cached × 1 + 30,000 × 8. */
const EXACT_MICROS = 2_000 + 200 + 240_000;

let upstream: FakeVideoResponsesUpstream | undefined;
let gw: TestGateway | undefined;

afterEach(async () => {
  await gw?.close();
  await upstream?.close();
  gw = undefined;
  upstream = undefined;
});

async function setup(groupLimits?: string): Promise<OpenAI> {
  upstream = await FakeVideoResponsesUpstream.start({ backgroundSteps: 1, backgroundUsage: USAGE });
  const manifests = sealedManifests({
    video: [upstream.baseURL],
    responses: upstream.baseURL,
    responsesPricing: PRICING,
    ...(groupLimits ? { groupLimits } : {}),
  });
  gw = await startGateway(manifests, { idKeys: [newKey()] });
  return gw.client(ALICE);
}

const micros = (cost: unknown) => Math.round(Number(cost) * 1e6);

async function createBackground(c: OpenAI): Promise<{ id: string; reqId: string }> {
  const { data, response } = await c.responses.create({ model: 'gpt-r', input: 'write a long story', background: true, max_output_tokens: 100 }).withResponse();
  expect(data.status).toBe('queued');
  return { id: data.id, reqId: response.headers.get('x-request-id')! };
}

/** Retrieves until the response shows completed: the request id and status of each retrieve. */
async function retrieveUntilCompleted(c: OpenAI, id: string): Promise<{ reqId: string; status: string | undefined }[]> {
  const calls: { reqId: string; status: string | undefined }[] = [];
  while (calls.at(-1)?.status !== 'completed') {
    expect(calls.length).toBeLessThan(10);
    const { data, response } = await c.responses.retrieve(id).withResponse();
    calls.push({ reqId: response.headers.get('x-request-id')!, status: data.status });
  }
  return calls;
}

describe('background responses: what the model generated is recorded by the follow-up that sees it finished', () => {
  it('the first retrieve that shows it completed records the usage beyond the create, which adds up to the upstream count; later retrieves add nothing', async () => {
    const alice = await setup();
    const created = await createBackground(alice);
    const create = await gw!.record(created.reqId);
    expect(create).toMatchObject({ estimated: true, outputTokens: 0, tokenRef: 'default/alice', group: 'team' });
    expect(create['background']).toBeUndefined();
    const estimate = create['inputTokens'] as number;
    expect(estimate).toBeGreaterThan(0);

    const calls = await retrieveUntilCompleted(alice, created.id);
    expect(calls.map((c) => c.status)).toEqual(['in_progress', 'completed']);
    // Not finished: nothing to record.
    expect((await gw!.record(calls[0]!.reqId))['inputTokens']).toBeUndefined();
    const done = await gw!.record(calls[1]!.reqId);
    expect(done).toMatchObject({
      background: true,
      responseId: created.id,
      createReqId: created.reqId,
      tokenRef: 'default/alice',
      group: 'team',
      model: 'gpt-r',
      backend: 'store',
      family: 'responses',
      inputTokens: USAGE.input_tokens - estimate,
      cachedInputTokens: USAGE.cached_tokens,
      outputTokens: USAGE.output_tokens,
      estimated: false,
      currency: 'USD',
    });
    // The create's estimate and the completion's record add up to the upstream's counts and their exact cost.
    expect((create['inputTokens'] as number) + (done['inputTokens'] as number)).toBe(USAGE.input_tokens);
    expect(micros(create['cost']) + micros(done['cost'])).toBe(EXACT_MICROS);

    // Retrieved again, whole or streamed: nothing more.
    const again = await alice.responses.retrieve(created.id).withResponse();
    expect(again.data.status).toBe('completed');
    const streamed = await alice.responses.retrieve(created.id, { stream: true }).withResponse();
    const types: string[] = [];
    for await (const e of streamed.data) types.push(e.type);
    expect(types.at(-1)).toBe('response.completed');
    for (const r of [again.response, streamed.response]) {
      const line = await gw!.record(r.headers.get('x-request-id'));
      expect(line['inputTokens']).toBeUndefined();
      expect(line['background']).toBeUndefined();
    }
    const cost = await gw!.metrics.registry.getSingleMetric('model_gateway_cost_total')!.get();
    expect(micros(cost.values.find((v) => v.labels['model'] === 'gpt-r')?.value)).toBe(EXACT_MICROS);
  });

  it('a streamed retrieve that shows it completed records it once; a response created without background records nothing when retrieved', async () => {
    const alice = await setup();
    const created = await createBackground(alice);
    const estimate = (await gw!.record(created.reqId))['inputTokens'] as number;
    expect((await alice.responses.retrieve(created.id)).status).toBe('in_progress');
    const { data: stream, response } = await alice.responses.retrieve(created.id, { stream: true }).withResponse();
    const types: string[] = [];
    for await (const e of stream) types.push(e.type);
    expect(types[0]).toBe('response.queued');
    expect(types.at(-1)).toBe('response.completed');
    expect(await gw!.record(response.headers.get('x-request-id'))).toMatchObject({
      background: true,
      responseId: created.id,
      inputTokens: USAGE.input_tokens - estimate,
      outputTokens: USAGE.output_tokens,
    });
    const after = await alice.responses.retrieve(created.id).withResponse();
    expect(after.data.status).toBe('completed');
    expect((await gw!.record(after.response.headers.get('x-request-id')))['outputTokens']).toBeUndefined();

    // A response answered whole at its create was recorded then: its retrieve shows it completed and records nothing.
    const plain = await alice.responses.create({ model: 'gpt-r', input: 'hello' });
    expect(plain.status).toBe('completed');
    const got = await alice.responses.retrieve(plain.id).withResponse();
    expect(got.data.status).toBe('completed');
    expect((await gw!.record(got.response.headers.get('x-request-id')))['outputTokens']).toBeUndefined();
  });

  it('a cancel that answers it cancelled with its usage records it; a retrieve after it adds nothing', async () => {
    const alice = await setup();
    const created = await createBackground(alice);
    const estimate = (await gw!.record(created.reqId))['inputTokens'] as number;
    expect((await alice.responses.retrieve(created.id)).status).toBe('in_progress');
    const { data: cancelled, response } = await alice.responses.cancel(created.id).withResponse();
    expect(cancelled.status).toBe('cancelled');
    expect(await gw!.record(response.headers.get('x-request-id'))).toMatchObject({
      background: true,
      responseId: created.id,
      inputTokens: USAGE.input_tokens - estimate,
      outputTokens: USAGE.output_tokens,
    });
    const after = await alice.responses.retrieve(created.id).withResponse();
    expect(after.data.status).toBe('cancelled');
    expect((await gw!.record(after.response.headers.get('x-request-id')))['outputTokens']).toBeUndefined();
  });

  it("its cost is charged to the creator's money limits: past costPerDay, the next request gets 429 insufficient_quota", async () => {
    // 0.10 a day: a create reserves about 0.001 and settles to its input estimate; the completion costs 0.24.
    const alice = await setup('{costPerDay: "0.10"}');
    const created = await createBackground(alice);
    await gw!.record(created.reqId);
    const calls = await retrieveUntilCompleted(alice, created.id);
    expect(await gw!.record(calls.at(-1)!.reqId)).toMatchObject({ background: true, outputTokens: USAGE.output_tokens });
    const err = await createBackground(alice).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    expect((err as InstanceType<typeof OpenAI.RateLimitError>).code).toBe('insufficient_quota');
    expect((err as InstanceType<typeof OpenAI.RateLimitError>).message).toContain('group default/team');
    // Reading what was paid for is never refused by a money limit.
    expect((await alice.responses.retrieve(created.id)).status).toBe('completed');
  });
});
