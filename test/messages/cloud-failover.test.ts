// Failover on the Messages API between the clouds that serve Claude and between native and translated backends, under
// the route's default failover rules (docs/configuration.md): a 5xx, a 429 or a refused connection moves the request
// to the next backend, and the client, @anthropic-ai/sdk, gets the answering backend's message in Anthropic's shape,
// streamed and not. Each fake answers with its own text, so the message says which backend answered; the access line
// says which backend, after how many attempts, and that the usage recorded is what the answering backend reported.
// Bedrock checks SigV4 signatures and Vertex a live Google token, on every attempt, failed ones included.
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BackendHealth } from '../../src/dataplane/policy/health.js';
import type { AnthropicTurn, AnthropicUpstream } from '../fakes/anthropic-upstream.js';
import { startAnthropicUpstream } from '../fakes/anthropic-upstream.js';
import { type BedrockClaude, startBedrockClaude } from '../fakes/bedrock-claude.js';
import { type FaultyUpstream, startFaultyUpstream } from '../fakes/faulty-upstream.js';
import { type GoogleServiceAccount, startGoogleServiceAccount } from '../fakes/google-service-account.js';
import { type ChatTurn, type ScriptedChatUpstream, startScriptedChatUpstream } from '../fakes/scripted-chat-upstream.js';
import { startVertexClaude, type VertexClaude } from '../fakes/vertex-claude.js';
import { deadBaseURL, startGateway, type TestGateway } from '../helpers/gateway.js';
import { waitUntil } from '../support/wait.js';
import { type BackendKind, KEYS, messagesManifests } from './manifests.js';

const VERTEX_BASE = '/v1/projects/my-project/locations/us-east5/publishers/anthropic/models';
const AWS = { accessKeyId: 'AKIAEXAMPLEFAILOVER1', secretAccessKey: 'failover/test/secret/key/0123456789abcdef' };
const QUESTION = { role: 'user' as const, content: 'Who answers?' };

const saying = (text: string, input: number, output: number): AnthropicTurn => ({
  content: [{ type: 'text', text }],
  stop_reason: 'end_turn',
  usage: { input_tokens: input, output_tokens: output, cache_read_input_tokens: 10, cache_creation_input_tokens: 2 },
});
const TURNS = { anthropic: saying('Anthropic answers.', 101, 11), bedrock: saying('Bedrock answers.', 202, 22), vertex: saying('Vertex answers.', 303, 33) };
const CHAT: ChatTurn = { text: 'The chat backend answers.', finish: 'stop', usage: { prompt_tokens: 404, completion_tokens: 44, cached_tokens: 40 } };

/** What the gateway records for an Anthropic turn: all input, cache reads and writes included. */
const recorded = (t: AnthropicTurn) => ({
  inputTokens: t.usage.input_tokens + t.usage.cache_read_input_tokens + t.usage.cache_creation_input_tokens,
  cachedInputTokens: t.usage.cache_read_input_tokens,
  cacheWriteInputTokens: t.usage.cache_creation_input_tokens,
  outputTokens: t.usage.output_tokens,
  estimated: false,
});

/** The routes: each backend tried in the order listed (a priority tier each), named as the fakes are below. */
const ROUTES: Record<string, readonly string[]> = {
  'claude-x-three-clouds': ['bedrock503', 'vertex429', 'anthropic'],
  'claude-x-bedrock-refused': ['bedrockRefused', 'vertex'],
  'claude-x-vertex-then-bedrock': ['vertex503', 'bedrock'],
  'claude-x-anthropic-overloaded': ['anthropic529', 'bedrock'],
  'claude-x-native-to-chat': ['bedrock429', 'chat'],
  'claude-x-chat-to-native': ['chat503', 'anthropic'],
  'claude-x-all-fail': ['bedrock503', 'vertex429'],
};

let google: GoogleServiceAccount;
let anthropic: AnthropicUpstream;
let bedrock: BedrockClaude;
let vertex: VertexClaude;
let chat: ScriptedChatUpstream;
const failing: Record<string, Failing> = {};
let gw: TestGateway;

beforeAll(async () => {
  google = await startGoogleServiceAccount();
  const validToken = (t: string) => google.tokens.valid(t);
  const bedrockFailing = (status: number, type: string, message: string) =>
    startBedrockClaude({ region: 'us-west-2', credentials: AWS, turns: [TURNS.bedrock], failWith: { status, type, message } });
  const vertexFailing = (status: number, code: string, message: string) =>
    startVertexClaude({ basePath: VERTEX_BASE, validToken, turns: [TURNS.vertex], failWith: { status, code, message } });
  anthropic = await startAnthropicUpstream([TURNS.anthropic]);
  bedrock = await startBedrockClaude({ region: 'us-west-2', credentials: AWS, turns: [TURNS.bedrock], sliceBytes: 11 });
  vertex = await startVertexClaude({ basePath: VERTEX_BASE, validToken, turns: [TURNS.vertex] });
  chat = await startScriptedChatUpstream([CHAT]);
  failing['bedrock503'] = await bedrockFailing(503, 'ServiceUnavailableException', 'Bedrock is unable to process your request.');
  failing['bedrock429'] = await bedrockFailing(429, 'ThrottlingException', 'Too many requests, please wait before trying again.');
  failing['vertex429'] = await vertexFailing(429, 'RESOURCE_EXHAUSTED', 'Quota exceeded for aiplatform.googleapis.com/online_prediction_requests.');
  failing['vertex503'] = await vertexFailing(503, 'UNAVAILABLE', 'The service is currently unavailable.');
  failing['chat503'] = await startScriptedChatUpstream([{ ...CHAT, error: { status: 503, message: 'the chat backend is overloaded' } }]);
  const overloaded = { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } };
  failing['anthropic529'] = await startFaultyUpstream('anthropic-overloaded', { kind: 'status', status: 529, body: overloaded });
  const url = (f: Failing) => ('origin' in f ? f.origin : f.baseURL);
  // Each name of ROUTES as a backend: its kind and base URL; `bedrockRefused` is Bedrock at a port nothing listens on.
  const backends: Record<string, readonly [BackendKind, string]> = {
    anthropic: ['anthropic', anthropic.baseURL],
    bedrock: ['bedrock', bedrock.origin],
    vertex: ['vertex', vertex.baseURL],
    chat: ['openai', chat.baseURL],
    bedrockRefused: ['bedrock', new URL(await deadBaseURL()).origin],
  };
  for (const [name, f] of Object.entries(failing)) backends[name] = [name.startsWith('chat') ? 'openai' : (name.replace(/\d+$/, '') as BackendKind), url(f)];
  gw = await startGateway(
    messagesManifests({
      anthropic: anthropic.baseURL,
      chat: chat.baseURL,
      clouds: { aws: AWS, googleKeyJson: google.keyJson },
      extra: Object.fromEntries(Object.entries(ROUTES).map(([model, names]) => [model, names.map((n) => backends[n]!)])),
    }),
    // Failures must not eject a backend between the tests: each test proves the failing one is tried first.
    { health: new BackendHealth({ consecutiveFailures: 1_000_000, maxRetryAfterMs: 0 }) },
  );
}, 30_000);

afterAll(async () => {
  await gw?.close();
  await Promise.all([anthropic, bedrock, vertex, chat, ...Object.values(failing)].map((f) => f?.close()));
  await google?.close();
});

const client = () => new Anthropic({ apiKey: KEYS.alice, baseURL: gw.origin, maxRetries: 0, timeout: 10_000 });

/** The SDK's message for the model, streamed (assembled by its helper from the events) or not. */
async function ask(model: string, stream: boolean): Promise<Anthropic.Message> {
  const params = { model, max_tokens: 256, messages: [QUESTION] };
  return stream ? client().messages.stream(params).finalMessage() : client().messages.create(params);
}

/** The access line of the request that the upstream saw last. */
async function accessLineOf(requests: readonly { headers: Record<string, unknown> }[]): Promise<Record<string, unknown>> {
  const id = requests.at(-1)?.headers['x-request-id'];
  return waitUntil(() => gw.logs.find((l) => l['msg'] === 'request' && l['reqId'] === id), 5_000, `the access line of ${String(id)}`);
}

type Failing = BedrockClaude | VertexClaude | ScriptedChatUpstream | FaultyUpstream;
/** The requests a failing fake answered with its error (Bedrock and Vertex count only those that passed their auth checks). */
const failures = (f: Failing) => ('refused' in f ? f.refused.length : f.requests.length);

/** A route of native backends that fail until the last, which answers. */
interface NativeChain {
  readonly title: string;
  readonly model: string;
  /** The failing fakes tried first, each once. */
  readonly failed: readonly string[];
  readonly answers: 'anthropic' | 'bedrock' | 'vertex';
  readonly attempts: number;
}

const NATIVE_CHAINS: NativeChain[] = [
  {
    title: 'Bedrock 503, then Vertex 429, then Anthropic answers',
    model: 'claude-x-three-clouds',
    failed: ['bedrock503', 'vertex429'],
    answers: 'anthropic',
    attempts: 3,
  },
  { title: 'Bedrock refuses the connection, then Vertex answers', model: 'claude-x-bedrock-refused', failed: [], answers: 'vertex', attempts: 2 },
  {
    title: 'Vertex 503, then Bedrock answers (its event stream decoded)',
    model: 'claude-x-vertex-then-bedrock',
    failed: ['vertex503'],
    answers: 'bedrock',
    attempts: 2,
  },
  {
    title: 'Anthropic 529 (overloaded_error), then Bedrock answers',
    model: 'claude-x-anthropic-overloaded',
    failed: ['anthropic529'],
    answers: 'bedrock',
    attempts: 2,
  },
];

/** The answering fake's requests, and how its last one must be laid out for that cloud. */
const ANSWERING = {
  anthropic: {
    requests: () => anthropic.requests,
    laidOut: (stream: boolean) => ({ path: '/v1/messages', body: expect.objectContaining({ model: 'upstream-claude', ...(stream ? { stream: true } : {}) }) }),
  },
  vertex: { requests: () => vertex.requests, laidOut: (stream: boolean) => ({ specifier: stream ? 'streamRawPredict' : 'rawPredict' }) },
  bedrock: { requests: () => bedrock.requests, laidOut: (stream: boolean) => ({ operation: stream ? 'invoke-with-response-stream' : 'invoke' }) },
} as const;

describe.each([false, true])('Messages failover, stream %s', (stream) => {
  it.each(NATIVE_CHAINS)('$title: its message and usage, each failing backend tried once', async (chain) => {
    const answering = ANSWERING[chain.answers];
    const before = [...chain.failed.map((f) => failures(failing[f]!)), answering.requests().length];
    const message = await ask(chain.model, stream);
    const turn = TURNS[chain.answers];
    expect(message).toMatchObject({ type: 'message', content: turn.content, stop_reason: 'end_turn', usage: turn.usage });
    expect([...chain.failed.map((f) => failures(failing[f]!)), answering.requests().length]).toEqual(before.map((n) => n + 1));
    expect(answering.requests().at(-1)).toMatchObject(answering.laidOut(stream));
    expect(await accessLineOf(answering.requests())).toMatchObject({ status: 200, backend: chain.answers, attempts: chain.attempts, ...recorded(turn) });
  });

  it('native to translated: Bedrock 429, then a chat backend answers, translated into a Messages answer', async () => {
    const chatBefore = chat.requests.length;
    const message = await ask('claude-x-native-to-chat', stream);
    expect(message).toMatchObject({
      type: 'message',
      role: 'assistant',
      model: 'claude-x-native-to-chat',
      content: [{ type: 'text', text: CHAT.text }],
      stop_reason: 'end_turn',
      usage: { input_tokens: 364, cache_read_input_tokens: 40, cache_creation_input_tokens: 0, output_tokens: 44 },
    });
    const [sent] = chat.requests.slice(chatBefore);
    expect(sent!.body).toMatchObject({ model: 'upstream-chat-model', messages: [{ role: 'user', content: QUESTION.content }] });
    expect(await accessLineOf(chat.requests)).toMatchObject({
      status: 200,
      backend: 'vllm',
      attempts: 2,
      inputTokens: 404,
      cachedInputTokens: 40,
      outputTokens: 44,
      estimated: false,
    });
  });

  it('translated to native: a chat backend 503, then Anthropic answers with its own message, passed through', async () => {
    const before = failing['chat503']!.requests.length;
    const message = await ask('claude-x-chat-to-native', stream);
    expect(message).toMatchObject({ content: TURNS.anthropic.content, usage: TURNS.anthropic.usage });
    expect(failing['chat503']!.requests.length).toBe(before + 1);
    expect(anthropic.requests.at(-1)!.path).toBe('/v1/messages');
    expect(await accessLineOf(anthropic.requests)).toMatchObject({ status: 200, backend: 'anthropic', attempts: 2, ...recorded(TURNS.anthropic) });
  });

  it('every backend failing: the last one’s 429 reaches the SDK as RateLimitError, in Anthropic’s shape', async () => {
    const err = await ask('claude-x-all-fail', stream).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.RateLimitError);
    expect((err as InstanceType<typeof Anthropic.APIError>).error).toEqual({
      type: 'error',
      error: { type: 'rate_limit_error', message: expect.stringContaining('Quota exceeded') },
    });
  });
});
