// A Messages stream request answered 200 with a whole answer (a chat backend's completion, or a native backend's
// message: a server or cache that ignored `stream`) reaches @anthropic-ai/sdk as Anthropic's events, which it
// assembles into that answer: on a route without keep-alives and on one whose keep-alives had committed the 200 (where
// the answer used to be retold as an error event). An upstream error after the keep-alives is still an error event.
import Anthropic from '@anthropic-ai/sdk';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RecordingServer, startRecordingServer } from '../fakes/recording-json-server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { recordingFetch } from '../helpers/recording-fetch.js';
import { KEYS, messagesManifests } from './manifests.js';
import { QUESTION } from './weather-conversation.js';

type Answer = (req: IncomingMessage, res: ServerResponse) => void | Promise<void>;

let answer: Answer = (_req, res) => {
  res.end();
};
let upstream: RecordingServer;
let gw: TestGateway;

/** A route whose streams get keep-alives while they wait, over one backend of the fake (native or chat). */
const keepAliveRoute = (model: string, backend: string) => `---
apiVersion: modelgateway.io/v1alpha1
kind: ModelRoute
metadata: {name: ${model}}
spec:
  model: ${model}
  endpoints: [messages]
  streaming: {keepAliveInterval: 20ms}
  backends:
  - ${backend}
`;

beforeAll(async () => {
  upstream = await startRecordingServer((req, res) => void answer(req, res));
  const native = `{name: native, api: anthropic, baseURL: "${upstream.baseURL}", model: upstream-claude, auth: {header: {name: x-api-key, secretRef: {name: upstreams, key: anthropic}}}}`;
  const chat = `{name: vllm, baseURL: "${upstream.baseURL}", model: upstream-chat-model, apiKeySecretRef: {name: upstreams, key: chat}}`;
  gw = await startGateway(
    messagesManifests({ anthropic: upstream.baseURL, chat: upstream.baseURL, extra: { 'claude-x-native': ['anthropic', upstream.baseURL] } }) +
      keepAliveRoute('claude-x-keepalive-native', native) +
      keepAliveRoute('claude-x-keepalive-chat', chat),
  );
});
afterAll(async () => {
  await gw?.close();
  await upstream?.close();
});

const message = {
  id: 'msg_whole',
  type: 'message',
  role: 'assistant',
  model: 'upstream-claude',
  content: [
    { type: 'thinking', thinking: 'They want the weather.', signature: 'sig_1' },
    { type: 'text', text: 'Checking.' },
    { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
  ],
  stop_reason: 'tool_use',
  stop_sequence: null,
  usage: { input_tokens: 40, output_tokens: 9, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
};

const completion = {
  id: 'chatcmpl-whole',
  choices: [
    {
      index: 0,
      message: {
        role: 'assistant',
        content: 'Checking.',
        tool_calls: [{ id: 'call_w', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
      },
      finish_reason: 'tool_calls',
    },
  ],
  usage: { prompt_tokens: 40, completion_tokens: 9 },
};

function whole(body: unknown, ready: Promise<void>, status = 200): Answer {
  return async (_req, res) => {
    await ready;
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
}

function streamClient(keepAlive: boolean) {
  let saw!: () => void;
  const ready = keepAlive ? new Promise<void>((r) => (saw = r)) : Promise.resolve();
  const rec = recordingFetch(() => saw?.());
  const client = new Anthropic({ apiKey: KEYS.alice, baseURL: gw.origin, maxRetries: 0, timeout: 10_000, fetch: rec.fetch });
  return { client, rec, ready };
}

const ask = (model: string) => ({ model, max_tokens: 64, messages: [QUESTION] });

describe.each([
  ['native, without keep-alives', 'claude-x-native', false],
  ['native, after keep-alives committed the 200', 'claude-x-keepalive-native', true],
])('a native whole message to a stream request, %s', (_name, model, keepAlive) => {
  it('is the stream the SDK assembles into the message (thinking, text, tool use, stop reason, usage)', async () => {
    const { client, rec, ready } = streamClient(keepAlive);
    answer = whole(message, ready);
    const final = await client.messages.stream(ask(model)).finalMessage();
    expect(final).toMatchObject(message);
    expect(rec.seen.text.includes(': keep-alive')).toBe(keepAlive);
    expect(await gw.record(rec.seen.requestId)).toMatchObject({ status: 200, inputTokens: 40, outputTokens: 9, estimated: false });
  });
});

describe.each([
  ['translated, without keep-alives', 'claude-translated', false],
  ['translated, after keep-alives committed the 200', 'claude-x-keepalive-chat', true],
])('a chat backend’s whole completion to a stream request, %s', (_name, model, keepAlive) => {
  it('is the stream the SDK assembles into the translated message', async () => {
    const { client, rec, ready } = streamClient(keepAlive);
    answer = whole(completion, ready);
    const final = await client.messages.stream(ask(model)).finalMessage();
    expect(final.content).toEqual([
      { type: 'text', text: 'Checking.' },
      { type: 'tool_use', id: 'call_w', name: 'get_weather', input: { city: 'Paris' } },
    ]);
    expect(final).toMatchObject({ stop_reason: 'tool_use', usage: { input_tokens: 40, output_tokens: 9 } });
    expect(rec.seen.text.includes(': keep-alive')).toBe(keepAlive);
    expect(await gw.record(rec.seen.requestId)).toMatchObject({ status: 200, inputTokens: 40, outputTokens: 9, estimated: false });
  });
});

describe('an upstream error after keep-alives committed the 200', () => {
  it("is still Anthropic's error event, which the SDK raises", async () => {
    const { client, rec, ready } = streamClient(true);
    answer = whole({ type: 'error', error: { type: 'api_error', message: 'the model crashed' } }, ready, 500);
    const err = await client.messages
      .stream(ask('claude-x-keepalive-native'))
      .finalMessage()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.APIError);
    expect(String((err as Error).message)).toContain('the model crashed');
    expect(rec.seen.text).toContain('event: error');
  });
});
