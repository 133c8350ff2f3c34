// Malformed input on the sealed-id paths: a continuation (previous_response_id) re-serialises the body, so
// a body nested too deeply to serialise must be the client's 400, not a gateway 500.
import { afterAll, beforeAll, describe, it } from 'vitest';
import { FakeVideoResponsesUpstream } from '../fakes/video-responses-upstream.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { ALICE, newKey, sealedManifests } from '../helpers/sealed-setup.js';
import { expectOpenAIError } from './support.js';

let up: FakeVideoResponsesUpstream;
let gw: TestGateway;

beforeAll(async () => {
  up = await FakeVideoResponsesUpstream.start({ eventDelayMs: 2 });
  gw = await startGateway(sealedManifests({ video: [up.baseURL], responses: up.baseURL }), { idKeys: [newKey()] });
});
afterAll(async () => {
  await gw?.close();
  await up?.close();
});

describe('sealed continuation input', () => {
  it('previous_response_id with a body nested too deeply → 400 invalid_json', async () => {
    // Regression: the hook's JSON.stringify overflowed the stack and the RangeError became a 500.
    const first = await gw.client(ALICE).responses.create({ model: 'gpt-r', input: 'hello' });
    const depth = 200_000;
    const body = `{"model":"gpt-r","previous_response_id":${JSON.stringify(first.id)},"input":${'['.repeat(depth)}${']'.repeat(depth)}}`;
    const res = await fetch(`${gw.baseURL}/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ALICE}`, 'content-type': 'application/json' },
      body,
    });
    const r = { status: res.status, headers: res.headers, json: (await res.json()) as any };
    expectOpenAIError(r, 400, 'invalid_json');
  });
});
