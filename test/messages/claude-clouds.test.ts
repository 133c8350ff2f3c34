// Claude on Vertex AI and Amazon Bedrock through the gateway's Messages API, with @anthropic-ai/sdk as the client and
// the routes of docs/providers.md (examples/providers/claude-*.yaml) pointed at loopback fakes of the clouds: Vertex
// checks a live Google access token, Bedrock a SigV4 signature, and both refuse a body laid out wrongly (`model` left
// in, no anthropic_version), and Bedrock a beta flag the model does not accept. Bedrock's stream arrives as AWS
// event-stream frames in 7-byte slices. Beside them, an Anthropic API fake shows which betas a native backend gets.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AnthropicTurn, type AnthropicUpstream, startAnthropicUpstream } from '../fakes/anthropic-upstream.js';
import { type BedrockClaude, startBedrockClaude } from '../fakes/bedrock-claude.js';
import { type GoogleServiceAccount, startGoogleServiceAccount } from '../fakes/google-service-account.js';
import { startVertexClaude, type VertexClaude } from '../fakes/vertex-claude.js';
import { ALICE_KEY, startGateway, type TestGateway } from '../helpers/gateway.js';
import { recipe, recipeText } from '../providers/recipe-setup.js';
import { waitUntil } from '../support/wait.js';

const VERTEX_BASE = '/v1/projects/my-project/locations/us-east5/publishers/anthropic/models';
const BEDROCK_KEYS = { accessKeyId: 'AKIAEXAMPLEGATEWAY01', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY' };
const TURN: AnthropicTurn = {
  content: [
    { type: 'text', text: 'Let me check.' },
    { type: 'tool_use', id: 'toolu_c1', name: 'get_weather', input: { city: 'Paris' } },
  ],
  stop_reason: 'tool_use',
  usage: { input_tokens: 120, output_tokens: 30, cache_read_input_tokens: 40, cache_creation_input_tokens: 8 },
};
const RECORDED = { inputTokens: 168, cachedInputTokens: 40, cacheWriteInputTokens: 8, outputTokens: 30, estimated: false };
const QUESTION = { role: 'user' as const, content: 'What is the weather in Paris?' };
/** A prior turn with a signed thinking block, which the cloud must receive byte for byte. */
const THINKING_TURN: Anthropic.MessageParam[] = [
  QUESTION,
  {
    role: 'assistant',
    content: [
      { type: 'thinking', thinking: 'The user wants the weather: "Paris", °C.\nCall the tool.', signature: 'ErUBCkYIBxgCIkB+/sig==\u00e9/AbC+x' },
      { type: 'text', text: 'Let me check.' },
    ],
  },
  { role: 'user', content: 'And tomorrow?' },
];

let google: GoogleServiceAccount;
let vertex: VertexClaude;
let bedrock: BedrockClaude;
let throttled: BedrockClaude;
let anthropicApi: AnthropicUpstream;
let vertexGw: TestGateway;
let bedrockGw: TestGateway;

const client = (gw: TestGateway) =>
  new Anthropic({ apiKey: ALICE_KEY, baseURL: gw.origin, maxRetries: 0, timeout: 10_000, defaultHeaders: { 'anthropic-beta': 'test-beta-2026' } });

/** What Claude Code sends in anthropic-beta, believing it talks to Anthropic's API. */
const CLAUDE_CODE_BETAS = [
  'claude-code-20250219',
  'interleaved-thinking-2025-05-14',
  'context-management-2025-06-27',
  'effort-2025-11-24',
  'tool-search-tool-2025-10-19',
  'fine-grained-tool-streaming-2025-05-14',
].join(',');
const THINKING_ONLY = { anthropicBetas: { allow: ['interleaved-thinking-2025-05-14'] } };
const claudeCode = (gw: TestGateway) =>
  new Anthropic({ apiKey: ALICE_KEY, baseURL: gw.origin, maxRetries: 0, timeout: 10_000, defaultHeaders: { 'anthropic-beta': CLAUDE_CODE_BETAS } });

type Doc = Parameters<NonNullable<Parameters<typeof recipe>[1]['edit']>>[0][number];

/** Another route in the recipe's namespace: its model, base URL and backend fields (the recipe's own backend otherwise). */
function extraRoute(docs: Doc[], model: string, baseURL: string, fields: Record<string, unknown> = {}): void {
  const base = docs.find((d) => d.kind === 'ModelRoute')!;
  const backend = { ...base.spec!.backends[0]!, baseURL, ...fields };
  docs.push({ ...base, metadata: { ...base.metadata, name: model }, spec: { ...base.spec, model, backends: [backend] } } as Doc);
}

beforeAll(async () => {
  google = await startGoogleServiceAccount();
  vertex = await startVertexClaude({ basePath: VERTEX_BASE, validToken: (t) => google.tokens.valid(t), turns: [TURN, TURN] });
  bedrock = await startBedrockClaude({
    region: 'us-west-2',
    credentials: BEDROCK_KEYS,
    turns: [TURN, TURN],
    sliceBytes: 7,
    acceptedBetas: ['interleaved-thinking-2025-05-14'],
  });
  anthropicApi = await startAnthropicUpstream([TURN]);
  throttled = await startBedrockClaude({
    region: 'us-west-2',
    credentials: BEDROCK_KEYS,
    turns: [TURN],
    exception: { afterEvents: 4, type: 'throttlingException', message: 'Too many tokens, please wait before trying again.' },
  });
  const vertexOrigin = new URL(vertex.baseURL).origin;
  vertexGw = await startGateway(
    recipe('claude-vertex.yaml', {
      origin: vertexOrigin,
      edit: (docs) => {
        for (const d of docs) if (d.kind === 'Secret') d.stringData!['key.json'] = google.keyJson;
        extraRoute(docs, 'claude-vertex-elsewhere', `${vertexOrigin}/v1/projects/other/locations/us-east5/publishers/anthropic/models`);
        extraRoute(docs, 'claude-vertex-betas', vertex.baseURL, THINKING_ONLY);
        extraRoute(docs, 'claude-anthropic', anthropicApi.baseURL, { auth: { none: {} } });
        extraRoute(docs, 'claude-anthropic-betas', anthropicApi.baseURL, { auth: { none: {} }, ...THINKING_ONLY });
      },
    }).yaml,
  );
  bedrockGw = await startGateway(
    recipe('claude-bedrock.yaml', {
      origin: bedrock.origin,
      edit: (docs) => {
        extraRoute(docs, 'claude-bedrock-throttled', throttled.origin);
        const wrong = { AWS_ACCESS_KEY_ID: BEDROCK_KEYS.accessKeyId, AWS_SECRET_ACCESS_KEY: 'not/the/right/secret/key/0123456789abcd' };
        const labels = { 'modelgateway.io/secret': 'true' };
        docs.push({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'wrong-aws', namespace: 'ai', labels }, stringData: wrong } as never);
        extraRoute(docs, 'claude-bedrock-wrong-key', bedrock.origin, {
          auth: { awsSigV4: { region: 'us-west-2', service: 'bedrock', secretRef: { name: 'wrong-aws' } } },
        });
        extraRoute(docs, 'claude-bedrock-betas', bedrock.origin, THINKING_ONLY);
      },
    }).yaml,
  );
});

afterAll(async () => {
  await Promise.all([vertexGw, bedrockGw].map((g) => g?.close()));
  await Promise.all([vertex, bedrock, throttled, anthropicApi].map((f) => f?.close()));
  await google?.close();
});

async function accessLine(gw: TestGateway, reqId: unknown): Promise<Record<string, unknown>> {
  return waitUntil(() => gw.logs.find((l) => l['msg'] === 'request' && l['reqId'] === reqId), 5_000, `the access line of ${String(reqId)}`);
}

it('docs/providers.md shows both routes as examples/providers holds them', () => {
  const docs = readFileSync(join(import.meta.dirname, '..', '..', 'docs', 'providers.md'), 'utf8');
  for (const file of ['claude-vertex.yaml', 'claude-bedrock.yaml']) expect(docs).toContain(recipeText(file).trim());
});

describe('Claude on Vertex AI (rawPredict with a Google access token)', () => {
  const MODEL = 'claude-sonnet-4-5-vertex';

  it('create: the answer and the usage the cloud reported; the body without model, with anthropic_version', async () => {
    const before = vertex.requests.length;
    const refusedBefore = vertex.refused.length;
    const message = await client(vertexGw).messages.create({ model: MODEL, max_tokens: 1024, messages: [QUESTION] });
    expect(message).toMatchObject({ content: TURN.content, stop_reason: 'tool_use', usage: TURN.usage });
    expect(vertex.refused.slice(refusedBefore)).toEqual([]);
    const [seen] = vertex.requests.slice(before);
    expect(seen!.url).toBe(`${VERTEX_BASE}/claude-sonnet-4-5@20250929:rawPredict`);
    expect(seen!.body).toEqual({ anthropic_version: 'vertex-2023-10-16', max_tokens: 1024, messages: [QUESTION] });
    expect(seen!.headers['anthropic-version']).toBeUndefined();
    expect(seen!.headers['anthropic-beta']).toBe('test-beta-2026');
    expect(await accessLine(vertexGw, seen!.headers['x-request-id'])).toMatchObject({ status: 200, family: 'messages', model: MODEL, ...RECORDED });
  });

  it('stream: streamRawPredict, the SDK assembles the message, the usage is the cloud’s report', async () => {
    const before = vertex.requests.length;
    const message = await client(vertexGw)
      .messages.stream({ model: MODEL, max_tokens: 1024, messages: [QUESTION] })
      .finalMessage();
    expect(message).toMatchObject({ content: TURN.content, stop_reason: 'tool_use' });
    const [seen] = vertex.requests.slice(before);
    expect(seen!.specifier).toBe('streamRawPredict');
    expect(seen!.body['stream']).toBe(true);
    expect(await accessLine(vertexGw, seen!.headers['x-request-id'])).toMatchObject({ status: 200, ...RECORDED });
  });

  it('thinking blocks and their signatures reach the cloud byte for byte', async () => {
    const before = vertex.requests.length;
    await client(vertexGw).messages.create({ model: MODEL, max_tokens: 1024, messages: THINKING_TURN });
    const [seen] = vertex.requests.slice(before);
    expect(JSON.stringify(seen!.body['messages'])).toBe(JSON.stringify(THINKING_TURN));
  });

  it('count_tokens: count-tokens:rawPredict with the model in the body', async () => {
    const before = vertex.requests.length;
    const count = await client(vertexGw).messages.countTokens({ model: MODEL, messages: [QUESTION] });
    expect(count.input_tokens).toBe(TURN.usage.input_tokens);
    const [seen] = vertex.requests.slice(before);
    expect(seen!.url).toBe(`${VERTEX_BASE}/count-tokens:rawPredict`);
    expect(seen!.body['model']).toBe('claude-sonnet-4-5@20250929');
  });

  it('Google’s error shape reaches the client as Anthropic’s, status kept', async () => {
    const err = await client(vertexGw)
      .messages.create({ model: 'claude-vertex-elsewhere', max_tokens: 64, messages: [QUESTION] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.NotFoundError);
    expect((err as InstanceType<typeof Anthropic.APIError>).error).toEqual({
      type: 'error',
      error: { type: 'not_found_error', message: expect.stringContaining('no route') },
    });
  });
});

describe('the betas a native backend receives (anthropicBetas)', () => {
  it('Anthropic’s API without anthropicBetas: every beta the client sent, as sent', async () => {
    const before = anthropicApi.requests.length;
    await claudeCode(vertexGw).messages.create({ model: 'claude-anthropic', max_tokens: 1024, messages: [QUESTION] });
    expect(anthropicApi.requests.slice(before).map((r) => r.headers['anthropic-beta'])).toEqual([CLAUDE_CODE_BETAS]);
  });

  it('Anthropic’s API and Vertex AI with anthropicBetas.allow: only the allowed betas, in the anthropic-beta header', async () => {
    const before = anthropicApi.requests.length;
    await claudeCode(vertexGw).messages.create({ model: 'claude-anthropic-betas', max_tokens: 1024, messages: [QUESTION] });
    expect(anthropicApi.requests.slice(before).map((r) => r.headers['anthropic-beta'])).toEqual(['interleaved-thinking-2025-05-14']);
    const vertexBefore = vertex.requests.length;
    await claudeCode(vertexGw).messages.create({ model: 'claude-vertex-betas', max_tokens: 1024, messages: [QUESTION] });
    const [seen] = vertex.requests.slice(vertexBefore);
    expect(seen!.headers['anthropic-beta']).toBe('interleaved-thinking-2025-05-14');
    expect(seen!.body['anthropic_beta']).toBeUndefined();
  });

  it('Anthropic’s API with anthropicBetas.allow and none of them sent: no anthropic-beta header at all', async () => {
    const before = anthropicApi.requests.length;
    await client(vertexGw).messages.create({ model: 'claude-anthropic-betas', max_tokens: 1024, messages: [QUESTION] });
    expect(anthropicApi.requests.slice(before).map((r) => r.headers['anthropic-beta'])).toEqual([undefined]);
  });
});

describe('Claude on Amazon Bedrock (InvokeModel signed with SigV4)', () => {
  const MODEL = 'claude-sonnet-4-5-bedrock';
  const MODEL_PATH = '/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0';

  it('create: /invoke, signed; the body without model or betas (none allowed by default), with anthropic_version; the usage reported', async () => {
    const before = bedrock.requests.length;
    const refusedBefore = bedrock.refused.length;
    const message = await client(bedrockGw).messages.create({ model: MODEL, max_tokens: 1024, messages: [QUESTION] });
    expect(message).toMatchObject({ content: TURN.content, stop_reason: 'tool_use', usage: TURN.usage });
    expect(bedrock.refused.slice(refusedBefore)).toEqual([]);
    const [seen] = bedrock.requests.slice(before);
    expect(seen!.url).toBe(`${MODEL_PATH}/invoke`);
    expect(seen!.body).toEqual({ max_tokens: 1024, messages: [QUESTION], anthropic_version: 'bedrock-2023-05-31' });
    expect(seen!.headers['anthropic-beta']).toBeUndefined();
    expect(await accessLine(bedrockGw, seen!.headers['x-request-id'])).toMatchObject({ status: 200, family: 'messages', model: MODEL, ...RECORDED });
  });

  it('stream: the event stream decoded into SSE; the SDK assembles the message; the usage is the cloud’s report', async () => {
    const before = bedrock.requests.length;
    const refusedBefore = bedrock.refused.length;
    const message = await client(bedrockGw)
      .messages.stream({ model: MODEL, max_tokens: 1024, messages: [QUESTION] })
      .finalMessage();
    expect(message).toMatchObject({ content: TURN.content, stop_reason: 'tool_use' });
    expect(bedrock.refused.slice(refusedBefore)).toEqual([]);
    const [seen] = bedrock.requests.slice(before);
    expect(seen!.url).toBe(`${MODEL_PATH}/invoke-with-response-stream`);
    expect(seen!.body['stream']).toBeUndefined();
    expect(await accessLine(bedrockGw, seen!.headers['x-request-id'])).toMatchObject({ status: 200, ...RECORDED });
  });

  it('stream: the client gets text/event-stream, Anthropic’s events and no AWS framing', async () => {
    const res = await fetch(`${bedrockGw.origin}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': ALICE_KEY, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: MODEL, max_tokens: 64, stream: true, messages: [QUESTION] }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const text = await res.text();
    expect(text.startsWith('event: message_start\ndata: {')).toBe(true);
    expect(text).toContain('event: message_stop\n');
    expect(text).not.toContain(':event-type');
  });

  it('a throttling exception mid-stream reaches the SDK as a rate_limit_error', async () => {
    const before = throttled.requests.length;
    const stream = client(bedrockGw).messages.stream({ model: 'claude-bedrock-throttled', max_tokens: 1024, messages: [QUESTION] });
    const err = await stream.finalMessage().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.APIError);
    expect((err as InstanceType<typeof Anthropic.APIError>).error).toEqual({
      type: 'error',
      error: { type: 'rate_limit_error', message: 'throttlingException: Too many tokens, please wait before trying again.' },
    });
    // The events before the exception were relayed: the message had started.
    expect(stream.currentMessage?.id).toBe('msg_bdrk_1');
    expect(throttled.requests.length).toBe(before + 1);
  });

  it('thinking blocks and their signatures reach the cloud byte for byte', async () => {
    const before = bedrock.requests.length;
    await client(bedrockGw).messages.create({ model: MODEL, max_tokens: 1024, messages: THINKING_TURN });
    const [seen] = bedrock.requests.slice(before);
    expect(JSON.stringify(seen!.body['messages'])).toBe(JSON.stringify(THINKING_TURN));
  });

  it('Bedrock’s {"message"} refusal reaches the client in Anthropic’s shape, status kept', async () => {
    const err = await client(bedrockGw)
      .messages.create({ model: 'claude-bedrock-wrong-key', max_tokens: 64, messages: [QUESTION] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.PermissionDeniedError);
    expect((err as InstanceType<typeof Anthropic.APIError>).error).toEqual({
      type: 'error',
      error: { type: 'permission_error', message: expect.stringContaining('signature') },
    });
  });

  it('Claude Code’s many betas: none reach a backend without anthropicBetas, so Bedrock does not refuse the request', async () => {
    const before = bedrock.requests.length;
    const refusedBefore = bedrock.refused.length;
    for (const stream of [false, true]) {
      const message = await claudeCode(bedrockGw).messages.create({ model: MODEL, max_tokens: 1024, stream, messages: [QUESTION] });
      if (!stream) expect(message).toMatchObject({ content: TURN.content });
      else for await (const _ of message as AsyncIterable<unknown>);
    }
    expect(bedrock.refused.slice(refusedBefore)).toEqual([]);
    expect(bedrock.requests.slice(before).map((r) => r.body['anthropic_beta'])).toEqual([undefined, undefined]);
  });

  it('anthropicBetas.allow: exactly the allowed betas the client sent reach Bedrock, in anthropic_beta', async () => {
    const before = bedrock.requests.length;
    const refusedBefore = bedrock.refused.length;
    await claudeCode(bedrockGw).messages.create({ model: 'claude-bedrock-betas', max_tokens: 1024, messages: [QUESTION] });
    expect(bedrock.refused.slice(refusedBefore)).toEqual([]);
    const [seen] = bedrock.requests.slice(before);
    expect(seen!.body['anthropic_beta']).toEqual(['interleaved-thinking-2025-05-14']);
  });

  it('count_tokens: InvokeModel cannot count, so the gateway estimates and Bedrock is not asked', async () => {
    const before = bedrock.requests.length;
    const count = await client(bedrockGw).messages.countTokens({ model: MODEL, messages: [QUESTION] });
    expect(count.input_tokens).toBeGreaterThan(0);
    expect(bedrock.requests.length).toBe(before);
  });
});
