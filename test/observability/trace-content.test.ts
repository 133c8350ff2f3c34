// Recorded content (--trace-content) as the GenAI conventions' JSON schema has it, read from what a loopback OTLP
// receiver decodes: gen_ai.input.messages, gen_ai.system_instructions and gen_ai.output.messages on the server
// span and the attempt, for Chat Completions and Responses, streamed and not, tool calls and their results included.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ServerResponse } from 'node:http';
import type { Tracing } from '../../src/features/tracing/tracing.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { attributeJson, spansOfRequest, tracingWith } from '../helpers/tracing.js';
import { startOtlpReceiver, type OtlpReceiver } from '../fakes/otlp-receiver.js';
import { startRecordingUpstream, type RecordingUpstream } from '../fakes/recording-upstream.js';

const CLIENT_KEY = 'sk-trace-content-client-0123456789';
const UPSTREAM_KEY = 'sk-trace-content-upstream-0123456789';

function manifests(upstream: string): string {
  return `
apiVersion: v1
kind: Secret
metadata: {name: keys, namespace: ns}
stringData: {client: ${CLIENT_KEY}, upstream: ${UPSTREAM_KEY}}
---
apiVersion: modelgateway.io/v1alpha1
kind: ModelRoute
metadata: {name: agent, namespace: ns}
spec:
  model: agent
  backends:
  - {name: primary, baseURL: "${upstream}", apiKeySecretRef: {name: keys, key: upstream}, model: upstream-model}
---
apiVersion: modelgateway.io/v1alpha1
kind: Group
metadata: {name: g, namespace: ns}
spec: {models: [agent]}
---
apiVersion: modelgateway.io/v1alpha1
kind: GatewayToken
metadata: {name: t, namespace: ns}
spec: {group: g, secretRef: {name: keys, key: client}}
`;
}

function sendJson(res: ServerResponse, value: unknown): void {
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(value));
}

function sendEvents(res: ServerResponse, events: unknown[]): void {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  res.end(`${events.map((e) => `data: ${JSON.stringify(e)}\n\n`).join('')}data: [DONE]\n\n`);
}

const chunk = (delta: unknown, finish: string | null = null) => ({
  id: 'c',
  object: 'chat.completion.chunk',
  created: 1,
  model: 'upstream-model',
  choices: [{ index: 0, delta, finish_reason: finish }],
});

describe('recorded content in the GenAI conventions schema', () => {
  let upstream: RecordingUpstream;
  let receiver: OtlpReceiver;
  let tracing: Tracing;
  let gateway: TestGateway;

  beforeAll(async () => {
    upstream = await startRecordingUpstream();
    receiver = await startOtlpReceiver();
    tracing = tracingWith(receiver, {}, true);
    gateway = await startGateway(manifests(upstream.baseURL), { tracing });
  });
  afterAll(async () => {
    await gateway.close();
    await tracing.shutdown();
    await receiver.close();
    await upstream.close();
  });
  afterEach(() => {
    upstream.override('/v1/chat/completions', undefined);
    upstream.override('/v1/responses', undefined);
  });

  const spansOf = (requestId: string) => spansOfRequest(receiver, requestId);
  const attr = attributeJson;

  it('a chat exchange with a system prompt, a tool result and a tool call answered', async () => {
    upstream.override('/v1/chat/completions', (_req, res) =>
      sendJson(res, {
        id: 'x',
        object: 'chat.completion',
        created: 1,
        model: 'upstream-model',
        choices: [
          {
            index: 0,
            message: {
              role: 'assistant',
              content: null,
              tool_calls: [{ id: 'call_2', type: 'function', function: { name: 'forecast', arguments: '{"days":2}' } }],
            },
            finish_reason: 'tool_calls',
          },
        ],
      }),
    );
    const answer = await gateway
      .client(CLIENT_KEY)
      .chat.completions.create({
        model: 'agent',
        messages: [
          { role: 'system', content: 'You forecast weather.' },
          { role: 'user', content: 'Paris?' },
          { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'now', arguments: '{"city":"Paris"}' } }] },
          { role: 'tool', tool_call_id: 'call_1', content: 'rain' },
        ],
      })
      .withResponse();
    for (const span of await spansOf(answer.response.headers.get('x-request-id')!)) {
      expect(attr(span, 'gen_ai.input.messages'), span.name).toEqual([
        { role: 'system', parts: [{ type: 'text', content: 'You forecast weather.' }] },
        { role: 'user', parts: [{ type: 'text', content: 'Paris?' }] },
        { role: 'assistant', parts: [{ type: 'tool_call', id: 'call_1', name: 'now', arguments: { city: 'Paris' } }] },
        { role: 'tool', parts: [{ type: 'tool_call_response', id: 'call_1', response: 'rain' }] },
      ]);
      // Chat Completions keeps its system prompt in the history: no separate instructions.
      expect(span.attributes['gen_ai.system_instructions'], span.name).toBeUndefined();
      expect(attr(span, 'gen_ai.output.messages'), span.name).toEqual([
        { role: 'assistant', parts: [{ type: 'tool_call', id: 'call_2', name: 'forecast', arguments: { days: 2 } }], finish_reason: 'tool_call' },
      ]);
    }
  });

  it('a streamed chat answer: its text and tool call joined from the deltas, with how it ended', async () => {
    upstream.override('/v1/chat/completions', (_req, res) =>
      sendEvents(res, [
        chunk({ role: 'assistant', content: 'Let me ' }),
        chunk({ content: 'check.' }),
        chunk({ tool_calls: [{ index: 0, id: 'call_3', type: 'function', function: { name: 'now', arguments: '{"city":' } }] }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: '"Oslo"}' } }] }, 'tool_calls'),
      ]),
    );
    const { data: stream, response } = await gateway
      .client(CLIENT_KEY)
      .chat.completions.create({ model: 'agent', messages: [{ role: 'user', content: 'Oslo?' }], stream: true })
      .withResponse();
    for await (const _ of stream);
    for (const span of await spansOf(response.headers.get('x-request-id')!)) {
      expect(attr(span, 'gen_ai.input.messages'), span.name).toEqual([{ role: 'user', parts: [{ type: 'text', content: 'Oslo?' }] }]);
      expect(attr(span, 'gen_ai.output.messages'), span.name).toEqual([
        {
          role: 'assistant',
          parts: [
            { type: 'text', content: 'Let me check.' },
            { type: 'tool_call', id: 'call_3', name: 'now', arguments: { city: 'Oslo' } },
          ],
          finish_reason: 'tool_call',
        },
      ]);
    }
  });

  it('a Responses exchange: instructions as system instructions, input items in order, the output items as one message', async () => {
    upstream.override('/v1/responses', (_req, res) =>
      sendJson(res, {
        id: 'resp_1',
        object: 'response',
        created_at: 1,
        status: 'completed',
        model: 'upstream-model',
        output: [{ type: 'message', id: 'm', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'Sunny.', annotations: [] }] }],
      }),
    );
    const answer = await gateway
      .client(CLIENT_KEY)
      .responses.create({
        model: 'agent',
        instructions: 'You forecast weather.',
        input: [
          { role: 'user', content: [{ type: 'input_text', text: 'Rome?' }] },
          { type: 'function_call', call_id: 'c1', name: 'now', arguments: '{"city":"Rome"}' },
          { type: 'function_call_output', call_id: 'c1', output: 'sun' },
        ],
      })
      .withResponse();
    for (const span of await spansOf(answer.response.headers.get('x-request-id')!)) {
      expect(attr(span, 'gen_ai.system_instructions'), span.name).toEqual([{ type: 'text', content: 'You forecast weather.' }]);
      expect(attr(span, 'gen_ai.input.messages'), span.name).toEqual([
        { role: 'user', parts: [{ type: 'text', content: 'Rome?' }] },
        { role: 'assistant', parts: [{ type: 'tool_call', id: 'c1', name: 'now', arguments: { city: 'Rome' } }] },
        { role: 'tool', parts: [{ type: 'tool_call_response', id: 'c1', response: 'sun' }] },
      ]);
      expect(attr(span, 'gen_ai.output.messages'), span.name).toEqual([
        { role: 'assistant', parts: [{ type: 'text', content: 'Sunny.' }], finish_reason: 'stop' },
      ]);
    }
  });

  it('a streamed Responses answer that ran out of output tokens', async () => {
    upstream.override('/v1/responses', (_req, res) =>
      sendEvents(res, [
        { type: 'response.created', sequence_number: 0, response: { id: 'r', object: 'response', status: 'in_progress', output: [] } },
        { type: 'response.output_text.delta', sequence_number: 1, item_id: 'm', output_index: 0, content_index: 0, delta: 'Cloudy, then' },
        {
          type: 'response.incomplete',
          sequence_number: 2,
          response: { id: 'r', object: 'response', status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' }, output: [] },
        },
      ]),
    );
    const { data: stream, response } = await gateway.client(CLIENT_KEY).responses.create({ model: 'agent', input: 'Berlin?', stream: true }).withResponse();
    for await (const _ of stream);
    for (const span of await spansOf(response.headers.get('x-request-id')!)) {
      expect(attr(span, 'gen_ai.input.messages'), span.name).toEqual([{ role: 'user', parts: [{ type: 'text', content: 'Berlin?' }] }]);
      expect(attr(span, 'gen_ai.output.messages'), span.name).toEqual([
        { role: 'assistant', parts: [{ type: 'text', content: 'Cloudy, then' }], finish_reason: 'length' },
      ]);
    }
  });
});
