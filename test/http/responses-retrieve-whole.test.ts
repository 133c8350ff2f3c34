// A streamed retrieve (`responses.retrieve(id, {stream: true, starting_after})`) that the upstream answers with the
// whole JSON response is told as Responses events: resumed after `starting_after`, as OpenAI's own resumption is
// (the events the client had are not sent again), and a response still running is told as created and in progress
// with no terminal event, so the client knows to come back; coming back after those two gets the rest.
import type OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeVideoResponsesUpstream } from '../fakes/video-responses-upstream.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { ALICE, newKey, sealedManifests } from '../helpers/sealed-setup.js';

let up: FakeVideoResponsesUpstream;
let gw: TestGateway;
let alice: OpenAI;

beforeAll(async () => {
  // A background response runs after one retrieve and has completed after two.
  up = await FakeVideoResponsesUpstream.start({ wholeRetrieves: true, backgroundSteps: 1 });
  gw = await startGateway(sealedManifests({ video: [up.baseURL], responses: up.baseURL }), { idKeys: [newKey()] });
  alice = gw.client(ALICE);
});
afterAll(async () => {
  await gw?.close();
  await up?.close();
});

type Told = { type: string; sequence_number: number; response?: { id: string; status: string } };

async function retrieveEvents(id: string, startingAfter?: number): Promise<Told[]> {
  const stream = await alice.responses.retrieve(id, startingAfter === undefined ? { stream: true } : { stream: true, starting_after: startingAfter });
  const out: Told[] = [];
  for await (const e of stream) out.push(e as Told);
  return out;
}

describe('a streamed retrieve answered whole', () => {
  it('starting_after: only the events after it, numbered as the whole telling numbers them; the upstream got it too', async () => {
    const created = await alice.responses.create({ model: 'gpt-r', input: 'one two three' });
    const all = await retrieveEvents(created.id);
    expect(all.map((e) => e.sequence_number)).toEqual(all.map((_, i) => i));
    expect(all.at(-1)).toMatchObject({ type: 'response.completed', response: { id: created.id, status: 'completed' } });

    const resumed = await retrieveEvents(created.id, 2);
    expect(up.requests.at(-1)!.query.get('starting_after')).toBe('2');
    expect(resumed.map((e) => [e.type, e.sequence_number])).toEqual(all.slice(3).map((e) => [e.type, e.sequence_number]));
    expect(resumed.at(-1)).toMatchObject({ type: 'response.completed', response: { id: created.id } });

    // After the last event there is nothing left to tell: an empty stream, not the whole one again.
    expect(await retrieveEvents(created.id, all.length - 1)).toEqual([]);
  });

  it('a response still running is created and in progress, no terminal event; resuming after those gets the rest', async () => {
    const created = await alice.responses.create({ model: 'gpt-r', input: 'four five', background: true });
    const running = await retrieveEvents(created.id);
    expect(running.map((e) => [e.type, e.sequence_number, e.response?.status])).toEqual([
      ['response.created', 0, 'in_progress'],
      ['response.in_progress', 1, 'in_progress'],
    ]);
    expect(running.every((e) => e.response?.id === created.id)).toBe(true);

    // The next retrieve finds it completed: the events after the two the client has, up to response.completed.
    const rest = await retrieveEvents(created.id, 1);
    expect(rest[0]).toMatchObject({ type: 'response.output_item.added', sequence_number: 2 });
    expect(rest.map((e) => e.sequence_number)).toEqual(rest.map((_, i) => i + 2));
    expect(rest.at(-1)).toMatchObject({ type: 'response.completed', response: { id: created.id, status: 'completed' } });
    const text = rest.flatMap((e) => (e.type === 'response.output_text.delta' ? [(e as unknown as { delta: string }).delta] : [])).join('');
    expect(text).toBe('echo: four five');
  });
});
