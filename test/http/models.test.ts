// GET /v1/models and /v1/models/{model} through the SDK: exactly the token's models, ids with "/" included.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { startRecordingUpstream, type RecordingUpstream } from '../fakes/recording-upstream.js';
import { ALICE_KEY, standardManifests, startGateway, type TestGateway } from '../helpers/gateway.js';

let upstream: RecordingUpstream;
let gw: TestGateway;

beforeAll(async () => {
  upstream = await startRecordingUpstream();
  gw = await startGateway(standardManifests(upstream.baseURL));
});
afterAll(async () => {
  await gw?.close();
  await upstream?.close();
});

describe('models', () => {
  it("lists exactly the models of the token's group", async () => {
    const ids: string[] = [];
    for await (const m of gw.client().models.list()) {
      expect(m).toMatchObject({ object: 'model', owned_by: 'default', created: expect.any(Number) });
      ids.push(m.id);
    }
    expect(ids).toEqual(['gpt-4o-mini', 'org/image-model', 'sora-2', 'text-embedding-3-small', 'tts-1', 'whisper-1']);
    expect(ids).not.toContain('forbidden-model');
  });

  it("narrows the list by the token's own models", async () => {
    const page = await gw.client('sk-narrow-key').models.list();
    expect(page.data.map((m) => m.id)).toEqual(['gpt-4o-mini']);
  });

  it('returns the OpenAI list shape', async () => {
    const res = await fetch(`${gw.baseURL}/models`, { headers: { authorization: `Bearer ${ALICE_KEY}` } });
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const body = (await res.json()) as { object: string; data: unknown };
    expect(body.object).toBe('list');
    expect(Array.isArray(body.data)).toBe(true);
  });

  it('retrieves a model, including an id containing "/" (SDK encodes it as %2F)', async () => {
    await expect(gw.client().models.retrieve('gpt-4o-mini')).resolves.toMatchObject({ id: 'gpt-4o-mini', object: 'model' });
    await expect(gw.client().models.retrieve('org/image-model')).resolves.toMatchObject({ id: 'org/image-model' });
  });

  it('accepts the "/" unencoded as well', async () => {
    const res = await fetch(`${gw.baseURL}/models/org/image-model`, { headers: { authorization: `Bearer ${ALICE_KEY}` } });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { id: string }).id).toBe('org/image-model');
  });

  it('unknown → 404, not allowed → 403', async () => {
    await expect(gw.client().models.retrieve('no-such')).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(gw.client().models.retrieve('forbidden-model')).rejects.toMatchObject({ status: 403, code: 'model_not_allowed' });
    await expect(gw.client('sk-narrow-key').models.retrieve('tts-1')).rejects.toBeInstanceOf(OpenAI.PermissionDeniedError);
  });

  it('follows a table reload', async () => {
    gw.load(standardManifests(upstream.baseURL).replace('  models: [gpt-4o-mini, text-embedding-3-small,', '  models: [text-embedding-3-small,'));
    try {
      const page = await gw.client().models.list();
      expect(page.data.map((m) => m.id)).not.toContain('gpt-4o-mini');
    } finally {
      gw.load(standardManifests(upstream.baseURL));
    }
  });
});
