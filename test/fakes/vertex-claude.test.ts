// The fake Vertex publisher endpoint against what the gateway will send it (the adapter's request with a bearer
// token), its answers read by @anthropic-ai/sdk; and its refusals, so it can catch an adapter that gets the
// body or the path wrong.
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CloudRequest } from '../../src/features/messages/backends/cloud-request.js';
import { vertexClaudeRequest } from '../../src/features/messages/backends/vertex-claude.js';
import { judge } from '../support/anthropic-sdk-judge.js';
import type { AnthropicTurn } from './anthropic-upstream.js';
import { startVertexClaude, type VertexClaude } from './vertex-claude.js';

const TOKEN = 'ya29.fake-live-token';
const MODEL = 'claude-sonnet-4-5@20250929';
const TURN: AnthropicTurn = {
  content: [{ type: 'tool_use', id: 'toolu_1', name: 'read', input: { file: 'a.txt' } }],
  stop_reason: 'tool_use',
  usage: { input_tokens: 20, output_tokens: 6, cache_read_input_tokens: 5, cache_creation_input_tokens: 0 },
};
const BODY = (stream: boolean) => JSON.stringify({ model: 'claude', max_tokens: 64, stream, messages: [{ role: 'user', content: 'read a.txt' }] });

function adapted(stream: boolean, operation: 'messages' | 'count_tokens' = 'messages'): CloudRequest {
  const r = vertexClaudeRequest({ operation, body: Buffer.from(BODY(stream)), model: MODEL, stream, headers: {}, betas: undefined });
  if (!r.ok) throw new Error(r.error.error.message);
  return r.value;
}

async function send(r: CloudRequest, token = TOKEN) {
  const res = await request(fake.baseURL + r.path, {
    method: 'POST',
    headers: { 'content-type': r.contentType, authorization: `Bearer ${token}`, 'anthropic-beta': 'context-1m-2025-08-07', ...r.setHeaders },
    body: r.body,
  });
  return { status: res.statusCode, type: String(res.headers['content-type']), text: await res.body.text() };
}

let fake: VertexClaude;
beforeAll(async () => {
  fake = await startVertexClaude({ basePath: '/v1/projects/p/locations/us-east5/publishers/anthropic/models', validToken: (t) => t === TOKEN, turns: [TURN] });
});
afterAll(() => fake.close());

describe('fake Vertex AI (Claude) and the Vertex adapter', () => {
  it('rawPredict answers Anthropic’s JSON for the model in the path', async () => {
    const res = await send(adapted(false));
    expect(fake.refused).toEqual([]);
    const message = await judge(res.text).client.messages.create({ model: 'claude', max_tokens: 64, messages: [{ role: 'user', content: 'read a.txt' }] });
    expect(message.content).toEqual(TURN.content);
    expect(message.model).toBe(MODEL);
    expect(fake.requests.at(-1)).toMatchObject({ model: MODEL, specifier: 'rawPredict', headers: { 'anthropic-beta': 'context-1m-2025-08-07' } });
    expect(fake.requests.at(-1)!.url).toContain('/models/claude-sonnet-4-5@20250929:rawPredict');
  });

  it('streamRawPredict answers Anthropic’s SSE, which the SDK reads as it comes', async () => {
    const res = await send(adapted(true));
    expect(res.type).toMatch(/^text\/event-stream/);
    const final = await judge(res.text, { stream: true })
      .client.messages.stream({ model: 'claude', max_tokens: 64, messages: [{ role: 'user', content: 'read a.txt' }] })
      .finalMessage();
    expect(final.content).toEqual(TURN.content);
    expect(final.usage).toMatchObject({ input_tokens: 20, output_tokens: 6, cache_read_input_tokens: 5 });
    expect(fake.requests.at(-1)).toMatchObject({ specifier: 'streamRawPredict', body: { stream: true, anthropic_version: 'vertex-2023-10-16' } });
  });

  it('count-tokens:rawPredict counts with the model in the body', async () => {
    const res = await send(adapted(false, 'count_tokens'));
    expect(JSON.parse(res.text)).toEqual({ input_tokens: 20 });
    expect(fake.requests.at(-1)).toMatchObject({ model: 'count-tokens', body: { model: MODEL } });
  });

  it('refuses a token it did not issue, a body that names its model, and a stream sent to rawPredict', async () => {
    const before = fake.requests.length;
    expect((await send(adapted(false), 'ya29.someone-else')).status).toBe(401);
    const withModel: CloudRequest = { ...adapted(false), body: Buffer.from(JSON.stringify({ ...JSON.parse(adapted(false).body.toString()), model: MODEL })) };
    expect((await send(withModel)).status).toBe(400);
    expect(fake.refused.at(-1)).toBe('model: Extra inputs are not permitted');
    const mismatched: CloudRequest = { ...adapted(true), path: adapted(false).path };
    expect((await send(mismatched)).status).toBe(400);
    expect(fake.requests.length).toBe(before);
    fake.refused.length = 0;
  });
});
