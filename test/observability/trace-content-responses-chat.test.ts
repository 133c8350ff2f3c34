// Recorded content (--trace-content) of a Responses request translated for a chat completions backend (api:
// chatCompletions), read from what a loopback OTLP receiver decodes, with the openai SDK as the client, whole and
// streamed: the prompt as the backend got it (the translation's chat messages: instructions a system message first, a
// tool inside a namespace under its namespaced name), as the Messages translation records it, and the answer as the
// client got it (the translated Response: a namespaced call under its own name).
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Tracing } from '../../src/features/tracing/tracing.js';
import { type OtlpReceiver, startOtlpReceiver } from '../fakes/otlp-receiver.js';
import { type ScriptedChatUpstream, startScriptedChatUpstream } from '../fakes/scripted-chat-upstream.js';
import { deadBaseURL, startGateway, type TestGateway } from '../helpers/gateway.js';
import { attributeJson, spansOfRequest, tracingWith } from '../helpers/tracing.js';
import { responsesChatManifests } from '../responses-chat/manifests.js';

const INSTRUCTIONS = 'You manage agents.';
const NAMESPACE = {
  type: 'namespace',
  name: 'agents',
  description: 'Sub-agents.',
  tools: [{ type: 'function', name: 'spawn', parameters: { type: 'object', properties: { task: { type: 'string' } } } }],
};

let chat: ScriptedChatUpstream;
let receiver: OtlpReceiver;
let tracing: Tracing;
let gw: TestGateway;

beforeAll(async () => {
  // Every request holds one assistant turn (the earlier call): each gets the second scripted turn.
  chat = await startScriptedChatUpstream([
    { text: 'unused', finish: 'stop', usage: { prompt_tokens: 1, completion_tokens: 1, cached_tokens: 0 } },
    {
      text: 'Spawning another.',
      reasoning: 'One more helper.',
      toolCalls: [{ id: 'call_2', name: 'agents__spawn', arguments: '{"task":"b"}' }],
      finish: 'tool_calls',
      usage: { prompt_tokens: 40, completion_tokens: 9, cached_tokens: 0 },
    },
  ]);
  receiver = await startOtlpReceiver();
  tracing = tracingWith(receiver, {}, true);
  gw = await startGateway(responsesChatManifests(await deadBaseURL(), { 'extra-chat': [['chatCompletions', chat.baseURL]] }), { tracing });
});

afterAll(async () => {
  await gw?.close();
  await tracing?.shutdown();
  await Promise.all([receiver, chat].map((f) => f?.close()));
});

describe.each([false, true])('recorded content of a translated Responses exchange, stream %s', (stream) => {
  it('the prompt as the chat backend got it (instructions first, the namespaced call by its chat name), the answer as the client got it', async () => {
    const client = new OpenAI({ apiKey: 'sk-alice-client-key-0123456789', baseURL: gw.baseURL, maxRetries: 0, timeout: 10_000 });
    const body = {
      model: 'extra-chat',
      instructions: INSTRUCTIONS,
      tools: [NAMESPACE],
      input: [
        { role: 'user', content: 'Split the work.' },
        { type: 'function_call', call_id: 'call_1', name: 'spawn', namespace: 'agents', arguments: '{"task":"a"}' },
        { type: 'function_call_output', call_id: 'call_1', output: 'agent-1' },
      ],
    } as unknown as OpenAI.Responses.ResponseCreateParamsNonStreaming;
    let id: string;
    if (stream) {
      const { data, response } = await client.responses.create({ ...body, stream: true }).withResponse();
      for await (const _ of data);
      id = response.headers.get('x-request-id')!;
    } else id = (await client.responses.create(body).withResponse()).response.headers.get('x-request-id')!;
    for (const span of await spansOfRequest(receiver, id)) {
      expect(attributeJson(span, 'gen_ai.input.messages'), span.name).toEqual([
        { role: 'system', parts: [{ type: 'text', content: INSTRUCTIONS }] },
        { role: 'user', parts: [{ type: 'text', content: 'Split the work.' }] },
        { role: 'assistant', parts: [{ type: 'tool_call', id: 'call_1', name: 'agents__spawn', arguments: { task: 'a' } }] },
        { role: 'tool', parts: [{ type: 'tool_call_response', id: 'call_1', response: 'agent-1' }] },
      ]);
      expect(attributeJson(span, 'gen_ai.output.messages'), span.name).toEqual([
        {
          role: 'assistant',
          parts: [
            { type: 'reasoning', content: 'One more helper.' },
            { type: 'text', content: 'Spawning another.' },
            { type: 'tool_call', id: 'call_2', name: 'spawn', arguments: { task: 'b' } },
          ],
          finish_reason: 'tool_call',
        },
      ]);
    }
  });
});
