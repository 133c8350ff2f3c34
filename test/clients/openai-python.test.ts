// openai-python, the most used OpenAI client, against the real executable: every family through the demo backend,
// sealed ids round-tripping through its typed models, and the errors it must map (401, 404, 429 with retry-after,
// streams the upstream cut). Its pydantic models and stream parsers are stricter than the node SDK about some
// shapes, so a gateway answer it cannot parse fails here. The client runs in the virtualenv scripts/py-clients.mjs
// sets up; without it this test fails, it does not skip.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error: a plain .mjs helper shared with scripts/run-tests.mjs
import { ensurePythonClients, PYTHON } from '../../scripts/py-clients.mjs';
import { REPO_ROOT } from '../support/spawn-cli.js';
import { EXAMPLE_KEY, startServedExamples, type ServedExamples } from './served-examples.js';

let served: ServedExamples;
let seen: Record<string, any>;

beforeAll(async () => {
  expect(ensurePythonClients(), 'the Python clients could not be installed (see the log above)').toBe(true);
  served = await startServedExamples();
  // Asynchronously: the misbehaving upstream lives in this process and must keep answering meanwhile.
  const run = await promisify(execFile)(PYTHON, [join(REPO_ROOT, 'test/clients/openai_python_client.py'), served.baseURL, EXAMPLE_KEY], { timeout: 90_000 });
  seen = JSON.parse(run.stdout);
}, 180_000);

afterAll(() => served?.stop());

/** The value a call returned; fails with what the SDK raised instead. */
function value(name: string): any {
  expect(seen[name], JSON.stringify(seen[name])).toMatchObject({ ok: true });
  return seen[name].value;
}

describe('openai-python against the gateway', () => {
  it('lists the models the key may use', () => {
    expect(value('models')).toEqual(['cut', 'demo-chat', 'demo-embed', 'demo-media', 'gpt-4o-mini', 'limited']);
  });

  it('chat completions, plain and streamed with usage', () => {
    expect(value('chat')).toMatchObject({ model: 'demo-chat', finish: 'stop', content: expect.stringContaining('python says hi') });
    expect(value('chat').usage.total_tokens).toBeGreaterThan(0);
    const s = value('chat_stream');
    expect(s.text).toContain('stream please');
    expect(s.chunks).toBeGreaterThan(3);
    expect(s.usage_total).toBeGreaterThan(0);
  });

  it('responses: sealed ids round-trip through retrieve, previous_response_id and input_items', () => {
    const r = value('responses');
    expect(r.id).toMatch(/^resp_/);
    expect(r.text).toContain('teapot');
    expect(r.retrieved_id).toBe(r.id);
    expect(r.follow_prev).toBe(r.id);
    expect(r.follow_id).not.toBe(r.id);
    expect(r.items).toBeGreaterThan(0);
  });

  it("responses: the SDK's stream helper reads every event and the final response", () => {
    const s = value('responses_stream');
    expect(s).toMatchObject({ first: 'response.created', last: 'response.completed' });
    expect(s.deltas).toBeGreaterThan(0);
    expect(s.final_id).toMatch(/^resp_/);
    expect(s.text).toContain('stream a response');
  });

  it('embeddings as floats and as base64', () => {
    expect(value('embeddings')).toEqual({ count: 2, dims: 256, b64_dims: 256, same: true });
  });

  it('audio: transcription and translation uploads, speech bytes', () => {
    const a = value('audio');
    expect(typeof a.transcription).toBe('string');
    expect(a.transcription.length).toBeGreaterThan(0);
    expect(typeof a.translation).toBe('string');
    expect(a.speech_riff).toBe('RIFF');
    expect(a.speech_bytes).toBeGreaterThan(44);
  });

  it('images: generation as base64 and an edit upload', () => {
    expect(value('images')).toEqual({ png: '\x89PNG', edit_items: 1 });
  });

  it('videos: create, poll, download and remix on sealed ids', () => {
    const v = value('videos');
    expect(v.id).toMatch(/^video_/);
    expect(v).toMatchObject({ status: 'completed', same_id: true, remix_of: v.id });
    expect(v.bytes).toBeGreaterThan(0);
  });

  it('errors map to the SDK exceptions with their codes', () => {
    expect(seen['bad_key']).toMatchObject({ ok: false, error: 'AuthenticationError', status: 401, code: 'invalid_api_key' });
    expect(seen['unknown_model']).toMatchObject({ ok: false, error: 'NotFoundError', status: 404, code: 'model_not_found' });
    expect(seen['rate_limited']).toMatchObject({ ok: false, error: 'RateLimitError', status: 429, code: 'rate_limit_exceeded', retry_after: '7' });
  });

  it('a stream the upstream cuts raises an APIError from the iterator, chat and Responses alike', () => {
    expect(seen['chat_stream_cut']).toMatchObject({ ok: false, error: 'APIError', message: expect.stringContaining('upstream') });
    expect(seen['responses_stream_cut']).toMatchObject({ ok: false, error: 'APIError', message: expect.stringContaining('upstream') });
  });
});
