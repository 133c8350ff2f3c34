// Recorded content (--trace-content) of answers the gateway retold, read from what a loopback OTLP receiver decodes:
// the answer is recorded as the client got it (docs/operations.md), so a whole JSON answer to a stream request that
// reached the client as stream events, and an event stream its upstream labelled application/json, are read as the
// events they are, with the openai SDK and @anthropic-ai/sdk as clients (chat, Responses, and Messages translated
// from a chat backend or from a native one).
import Anthropic from '@anthropic-ai/sdk';
import type { ServerResponse } from 'node:http';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Tracing } from '../../src/features/tracing/tracing.js';
import { type OtlpReceiver, startOtlpReceiver } from '../fakes/otlp-receiver.js';
import { type RecordedRequest, type RecordingServer, startRecordingServer } from '../fakes/recording-json-server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { attributeJson, spansOfRequest, tracingWith } from '../helpers/tracing.js';
import { KEYS, messagesManifests } from '../messages/manifests.js';
import { QUESTION } from '../messages/weather-conversation.js';

type Answer = (res: ServerResponse, seen: RecordedRequest) => void;

// An OpenAI route over the chat backend (named to fall under the Messages tests' group, `claude-x-*`).
const openAiRoute = (baseURL: string) => `---
apiVersion: modelgateway.io/v1alpha1
kind: ModelRoute
metadata: {name: claude-x-openai}
spec:
  model: claude-x-openai
  endpoints: [chat.completions, responses]
  backends:
  - {name: vllm, baseURL: "${baseURL}", model: upstream-chat-model, apiKeySecretRef: {name: upstreams, key: chat}}
`;

let answer: Answer = (res) => void res.end();
let upstream: RecordingServer;
let receiver: OtlpReceiver;
let tracing: Tracing;
let gw: TestGateway;

beforeAll(async () => {
  upstream = await startRecordingServer((_req, res, seen) => answer(res, seen));
  receiver = await startOtlpReceiver();
  tracing = tracingWith(receiver, {}, true);
  gw = await startGateway(messagesManifests({ anthropic: upstream.baseURL, chat: upstream.baseURL }) + openAiRoute(upstream.baseURL), { tracing });
});
afterAll(async () => {
  await gw?.close();
  await tracing?.shutdown();
  await Promise.all([receiver, upstream].map((f) => f?.close()));
});

const json =
  (body: unknown): Answer =>
  (res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };

const completion = {
  id: 'chatcmpl-whole',
  object: 'chat.completion',
  created: 1,
  model: 'upstream-chat-model',
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
  usage: { prompt_tokens: 40, completion_tokens: 9, total_tokens: 49 },
};

/** The completion above as recorded content: its text and tool call (the id as the backend gave it). */
const toolCallAnswer = (id: string) => [
  {
    role: 'assistant',
    parts: [
      { type: 'text', content: 'Checking.' },
      { type: 'tool_call', id, name: 'get_weather', arguments: { city: 'Paris' } },
    ],
    finish_reason: 'tool_call',
  },
];

/** The output recorded on the server span and on the attempt of a request. */
async function outputs(requestId: string | null): Promise<unknown[]> {
  const spans = await spansOfRequest(receiver, requestId!);
  return spans.map((span) => attributeJson(span, 'gen_ai.output.messages'));
}

const openai = () => new OpenAI({ apiKey: KEYS.alice, baseURL: `${gw.origin}/v1`, maxRetries: 0, timeout: 10_000 });
const anthropic = () => new Anthropic({ apiKey: KEYS.alice, baseURL: gw.origin, maxRetries: 0, timeout: 10_000 });

describe('recorded content of a retold answer', () => {
  it('chat: a whole completion told as chunks is read from the chunks the client got', async () => {
    answer = json(completion);
    const { data, response } = await openai()
      .chat.completions.create({ model: 'claude-x-openai', messages: [{ role: 'user', content: 'weather?' }], stream: true })
      .withResponse();
    for await (const _ of data);
    expect(await outputs(response.headers.get('x-request-id'))).toEqual([toolCallAnswer('call_w'), toolCallAnswer('call_w')]);
  });

  it('chat: an event stream its upstream labelled application/json is read as the events it is', async () => {
    const chunk = (delta: object, finish: string | null = null) =>
      `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
    answer = (res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(`${chunk({ role: 'assistant', content: 'Sun' })}${chunk({ content: 'ny.' }, 'stop')}data: [DONE]\n\n`);
    };
    const { data, response } = await openai()
      .chat.completions.create({ model: 'claude-x-openai', messages: [{ role: 'user', content: 'weather?' }], stream: true })
      .withResponse();
    for await (const _ of data);
    const sunny = [{ role: 'assistant', parts: [{ type: 'text', content: 'Sunny.' }], finish_reason: 'stop' }];
    expect(await outputs(response.headers.get('x-request-id'))).toEqual([sunny, sunny]);
  });

  it('responses: a whole response told as Responses events is read from those events', async () => {
    answer = json({
      id: 'resp_whole',
      object: 'response',
      created_at: 1,
      status: 'completed',
      model: 'upstream-chat-model',
      output: [{ id: 'msg_1', type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: 'Sunny.', annotations: [] }] }],
    });
    const { data, response } = await openai().responses.create({ model: 'claude-x-openai', input: 'weather?', stream: true }).withResponse();
    const types: string[] = [];
    for await (const e of data) types.push(e.type);
    expect(types.at(-1)).toBe('response.completed');
    const sunny = [{ role: 'assistant', parts: [{ type: 'text', content: 'Sunny.' }], finish_reason: 'stop' }];
    expect(await outputs(response.headers.get('x-request-id'))).toEqual([sunny, sunny]);
  });

  it('messages, translated: a whole chat completion told as Anthropic’s events is read from those events', async () => {
    answer = json(completion);
    const s = anthropic().messages.stream({ model: 'claude-translated', max_tokens: 64, messages: [QUESTION] });
    const { response } = await s.withResponse();
    expect((await s.finalMessage()).stop_reason).toBe('tool_use');
    expect(await outputs(response.headers.get('x-request-id'))).toEqual([toolCallAnswer('call_w'), toolCallAnswer('call_w')]);
  });

  it('messages, native: a whole message told as its events is read from those events', async () => {
    answer = json({
      id: 'msg_whole',
      type: 'message',
      role: 'assistant',
      model: 'upstream-claude',
      content: [
        { type: 'text', text: 'Checking.' },
        { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
      ],
      stop_reason: 'tool_use',
      stop_sequence: null,
      usage: { input_tokens: 40, output_tokens: 9 },
    });
    const s = anthropic().messages.stream({ model: 'claude-native', max_tokens: 64, messages: [QUESTION] });
    const { response } = await s.withResponse();
    expect((await s.finalMessage()).stop_reason).toBe('tool_use');
    expect(await outputs(response.headers.get('x-request-id'))).toEqual([toolCallAnswer('toolu_1'), toolCallAnswer('toolu_1')]);
  });
});
