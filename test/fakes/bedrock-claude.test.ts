// The fake Bedrock against what the gateway will send it: the adapter's request, signed by the gateway's own SigV4
// identity, the stream decoded by the gateway's decoder and read by @anthropic-ai/sdk. And the fake refuses what
// Bedrock refuses (a bad signature, `model` left in the body), so it can catch an adapter that gets them wrong.
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bedrockClaudeRequest } from '../../src/features/messages/backends/bedrock-claude.js';
import { BedrockSseDecoder } from '../../src/features/messages/backends/bedrock-sse.js';
import type { CloudRequest } from '../../src/features/messages/backends/cloud-request.js';
import { AwsSigV4Identity } from '../../src/dataplane/upstream/identity/aws-sigv4.js';
import { judge } from '../support/anthropic-sdk-judge.js';
import type { AnthropicTurn } from './anthropic-upstream.js';
import { type BedrockClaude, startBedrockClaude } from './bedrock-claude.js';

const KEYS = { accessKeyId: 'AKIAFAKEBEDROCK00001', secretAccessKey: 'fake/secret/key/for/the/bedrock/fake00' };
const MODEL = 'us.anthropic.claude-sonnet-4-5-20250929-v1:0';
const TURN: AnthropicTurn = {
  content: [{ type: 'text', text: 'Hello from Bedrock' }],
  stop_reason: 'end_turn',
  usage: { input_tokens: 9, output_tokens: 4, cache_read_input_tokens: 0, cache_creation_input_tokens: 2 },
};
const BODY = JSON.stringify({ model: 'claude', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }], metadata: { user_id: 'u1' } });

const identity = (secretAccessKey = KEYS.secretAccessKey) =>
  new AwsSigV4Identity({ kind: 'awsSigV4', region: 'us-west-2', service: 'bedrock', keys: { ...KEYS, secretAccessKey } });

function adapted(stream: boolean, body = BODY): CloudRequest {
  const r = bedrockClaudeRequest({
    operation: 'messages',
    body: Buffer.from(body),
    model: MODEL,
    stream,
    headers: { 'anthropic-beta': 'context-1m-2025-08-07' },
    betas: undefined,
  });
  if (!r.ok) throw new Error(r.error.error.message);
  return r.value;
}

/** Signs and sends a request as the gateway does, and returns the answer's status, headers and body chunks. */
async function send(fake: BedrockClaude, r: CloudRequest, signer = identity()) {
  const headers: Record<string, string> = { 'content-type': r.contentType, ...r.setHeaders };
  const signable = { method: 'POST', origin: fake.origin, path: r.path, headers, body: r.body };
  await signer.authorize(signable);
  const res = await request(fake.origin + signable.path, { method: 'POST', headers, body: r.body });
  const chunks: Buffer[] = [];
  for await (const c of res.body) chunks.push(c as Buffer);
  return { status: res.statusCode, type: String(res.headers['content-type']), chunks };
}

let fake: BedrockClaude;
beforeAll(async () => {
  fake = await startBedrockClaude({ region: 'us-west-2', credentials: KEYS, turns: [TURN], sliceBytes: 7, acceptedBetas: ['context-1m-2025-08-07'] });
});
afterAll(() => fake.close());

describe('fake Bedrock (InvokeModel) and the Bedrock adapter', () => {
  it('InvokeModel: a signed request for the encoded model id gets Anthropic’s JSON', async () => {
    const res = await send(fake, adapted(false));
    expect(fake.refused).toEqual([]);
    expect(res.status).toBe(200);
    const { client } = judge(Buffer.concat(res.chunks).toString('utf8'));
    const message = await client.messages.create({ model: 'claude', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] });
    expect(message.content).toEqual(TURN.content);
    const seen = fake.requests.at(-1)!;
    expect(seen).toMatchObject({ modelId: MODEL, operation: 'invoke' });
    expect(seen.url).toContain('v1%3A0');
    expect(seen.body).toEqual({
      max_tokens: 64,
      messages: [{ role: 'user', content: 'hi' }],
      metadata: { user_id: 'u1' },
      anthropic_version: 'bedrock-2023-05-31',
      anthropic_beta: ['context-1m-2025-08-07'],
    });
  });

  it('InvokeModelWithResponseStream: event-stream messages in 7-byte slices decode into the SSE the SDK reads', async () => {
    const res = await send(fake, adapted(true));
    expect(res.status).toBe(200);
    expect(res.type).toBe('application/vnd.amazon.eventstream');
    expect(res.chunks.length).toBeGreaterThan(1);
    const decoder = new BedrockSseDecoder();
    const sse = Buffer.concat([...res.chunks.map((c) => decoder.push(c)), decoder.end()]).toString('utf8');
    const { client } = judge(sse, { stream: true });
    const final = await client.messages.stream({ model: 'claude', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] }).finalMessage();
    expect(final.content).toEqual(TURN.content);
    expect(final.usage).toMatchObject({ input_tokens: 9, output_tokens: 4, cache_creation_input_tokens: 2 });
    expect(sse).toContain('"amazon-bedrock-invocationMetrics"');
    expect(fake.requests.at(-1)).toMatchObject({
      modelId: MODEL,
      operation: 'invoke-with-response-stream',
      headers: { 'x-amzn-bedrock-accept': 'application/json' },
    });
  });

  it('a scripted exception ends the stream, told as Anthropic’s error event', async () => {
    const failing = await startBedrockClaude({
      region: 'us-west-2',
      credentials: KEYS,
      turns: [TURN],
      acceptedBetas: ['context-1m-2025-08-07'],
      exception: { afterEvents: 2, type: 'throttlingException', message: 'Too many tokens, please wait before trying again.' },
    });
    try {
      const res = await send(failing, adapted(true));
      const decoder = new BedrockSseDecoder();
      const sse = Buffer.concat([...res.chunks.map((c) => decoder.push(c)), decoder.end()]).toString('utf8');
      expect(
        sse
          .split('\n\n')
          .filter(Boolean)
          .map((e) => e.split('\n')[0]),
      ).toEqual(['event: message_start', 'event: ping', 'event: error']);
      expect(sse).toContain('"type":"rate_limit_error"');
    } finally {
      await failing.close();
    }
  });

  it('refuses a wrong signature and a body that still names its model, as Bedrock does', async () => {
    const before = fake.requests.length;
    expect((await send(fake, adapted(false), identity('not-the-secret-key-000000000000000000000'))).status).toBe(403);
    expect(fake.refused.at(-1)).toMatch(/^InvalidSignatureException/);
    const unadapted: CloudRequest = { ...adapted(false), body: Buffer.from(BODY) };
    const res = await send(fake, unadapted);
    expect(res.status).toBe(400);
    expect(fake.refused.at(-1)).toBe('ValidationException: Malformed input request: extraneous key [model] is not permitted');
    expect(fake.requests.length).toBe(before);
    fake.refused.length = 0;
  });

  it('refuses a beta flag the model does not accept with 400 invalid beta flag, as Bedrock does', async () => {
    const before = fake.requests.length;
    const body = JSON.parse(adapted(false).body.toString('utf8')) as Record<string, unknown>;
    const unsupported: CloudRequest = {
      ...adapted(false),
      body: Buffer.from(JSON.stringify({ ...body, anthropic_beta: ['context-1m-2025-08-07', 'claude-code-20250219'] })),
    };
    const res = await send(fake, unsupported);
    expect(res.status).toBe(400);
    expect(JSON.parse(Buffer.concat(res.chunks).toString('utf8'))).toEqual({ message: 'invalid beta flag' });
    expect(fake.requests.length).toBe(before);
    fake.refused.length = 0;
  });
});
