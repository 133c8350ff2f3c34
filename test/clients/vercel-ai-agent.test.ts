// The Vercel AI SDK as an agent framework uses it, against the gateway on loopback fakes: streamText with a tool over
// several steps (stopWhen) on chat completions and on Responses (store: false, reasoning carried), generateObject (a
// json_schema response format, and Anthropic's structured output through a translated Messages route), embedMany
// split into batches. (A stream the caller aborts is the same closed connection to the gateway as the openai SDK's:
// test/http/streaming.test.ts and test/usage pin what it frees and records.)
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { embedMany, generateObject, stepCountIs, tool } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type ChatTurn, type ScriptedChatUpstream, startScriptedChatUpstream } from '../fakes/scripted-chat-upstream.js';
import { type ScriptedResponsesUpstream, startScriptedResponsesUpstream } from '../fakes/scripted-responses-upstream.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { chatTurns } from '../messages/weather-conversation.js';
import { streamedText } from '../support/ai-sdk.js';

const KEY = 'sk-vercel-agent-client-0123456789';
const CITY = { city: 'Paris', temperatureC: 21, conditions: ['sunny', 'breezy'] };
const usage = (prompt_tokens: number, completion_tokens: number) => ({ prompt_tokens, completion_tokens, cached_tokens: 0 });

const SCRIPTS: Record<string, ChatTurn[]> = {
  tools: chatTurns,
  object: [{ text: JSON.stringify(CITY), finish: 'stop', usage: usage(80, 20) }],
};

const upstreams: Record<string, ScriptedChatUpstream> = {};
let responses: ScriptedResponsesUpstream;
let gw: TestGateway;
const responsesUsage = { inputTokens: 300, cachedInputTokens: 0, outputTokens: 20, reasoningTokens: 8 };

const route = (name: string, baseURL: string, endpoints: string) => `---
apiVersion: modelgateway.io/v1alpha1
kind: ModelRoute
metadata: {name: ${name}}
spec:
  model: ${name}
  endpoints: [${endpoints}]
  backends:
  - {name: up, baseURL: "${baseURL}", model: upstream-${name}}
`;

beforeAll(async () => {
  for (const [name, turns] of Object.entries(SCRIPTS)) upstreams[name] = await startScriptedChatUpstream(turns);
  responses = await startScriptedResponsesUpstream([
    {
      output: [
        { type: 'reasoning', summary: 'Look it up.', encryptedContent: 'gAAAA-vercel-enc' },
        { type: 'function_call', name: 'get_weather', callId: 'call_v1', arguments: '{"city":"Paris"}' },
      ],
      usage: responsesUsage,
    },
    { output: [{ type: 'message', text: 'It is sunny in Paris.' }], usage: responsesUsage },
  ]);
  const routes = Object.keys(SCRIPTS).map((name) => route(name, upstreams[name]!.baseURL, 'chat.completions, embeddings, messages'));
  routes.push(route('responses', responses.baseURL, 'responses'));
  gw = await startGateway(
    `
apiVersion: v1
kind: Secret
metadata: {name: client}
stringData: {token: ${KEY}}
${routes.join('')}---
apiVersion: modelgateway.io/v1alpha1
kind: Group
metadata: {name: agents}
spec: {models: ["*"]}
---
apiVersion: modelgateway.io/v1alpha1
kind: GatewayToken
metadata: {name: agent}
spec: {group: agents, secretRef: {name: client, key: token}}
`,
  );
}, 30_000);

afterAll(async () => {
  await gw?.close();
  await Promise.all([...Object.values(upstreams), responses].map((u) => u?.close()));
});

const openai = () => createOpenAI({ apiKey: KEY, baseURL: `${gw.origin}/v1` });
const accessLine = (upstream: ScriptedChatUpstream, i: number) => gw.record(String(upstream.requests[i]!.headers['x-request-id']));

describe('the Vercel AI SDK as an agent through the gateway', () => {
  it('streamText with a tool over two steps (stopWhen): the tool ran on the streamed call, the answer and both steps’ usage arrived', async () => {
    const calls: unknown[] = [];
    const {
      text,
      errors,
      result: r,
    } = await streamedText({
      model: openai().chat('tools'),
      prompt: 'What is the weather in Paris?',
      tools: {
        get_weather: tool({
          description: 'The weather in a city',
          inputSchema: z.object({ city: z.string() }),
          execute: async (input) => (calls.push(input), { forecast: 'sunny' }),
        }),
      },
      stopWhen: stepCountIs(3),
      maxRetries: 0,
    });
    expect(errors).toEqual([]);
    expect(calls).toEqual([{ city: 'Paris' }]);
    expect(text).toBe('Let me check.It is sunny in Paris.');
    expect((await r.steps).map((s) => s.finishReason)).toEqual(['tool-calls', 'stop']);
    expect(await r.totalUsage).toMatchObject({ inputTokens: 350, outputTokens: 39 });
    const second = upstreams['tools']!.requests[1]!.body['messages'] as Record<string, any>[];
    expect(second.at(-1)).toMatchObject({ role: 'tool', tool_call_id: 'call_w1', content: expect.stringContaining('sunny') });
    expect(await accessLine(upstreams['tools']!, 1)).toMatchObject({ status: 200, inputTokens: 190, outputTokens: 9, estimated: false });
  });

  it('streamText on Responses with a tool over two steps, store: false: the reasoning item goes back with its encrypted content', async () => {
    const {
      text,
      errors,
      result: r,
    } = await streamedText({
      model: openai().responses('responses'),
      prompt: 'What is the weather in Paris?',
      tools: {
        get_weather: tool({ description: 'The weather in a city', inputSchema: z.object({ city: z.string() }), execute: async () => ({ forecast: 'sunny' }) }),
      },
      providerOptions: { openai: { store: false, include: ['reasoning.encrypted_content'] } },
      stopWhen: stepCountIs(3),
      maxRetries: 0,
    });
    expect(errors).toEqual([]);
    expect(text).toBe('It is sunny in Paris.');
    const input = responses.requests[1]!.body['input'] as Record<string, unknown>[];
    expect(input.slice(1)).toEqual([
      { type: 'reasoning', id: 'rs_0', encrypted_content: 'gAAAA-vercel-enc', summary: [{ type: 'summary_text', text: 'Look it up.' }] },
      { type: 'function_call', call_id: 'call_v1', name: 'get_weather', arguments: '{"city":"Paris"}' },
      { type: 'function_call_output', call_id: 'call_v1', output: '{"forecast":"sunny"}' },
    ]);
    // The SDK's zod schemas accepted each event; the response ids it reports are the sealed ones.
    for (const step of await r.steps) expect(String(step.providerMetadata?.['openai']?.['responseId'])).toMatch(/^resp_.{40,}/);
    expect(await r.totalUsage).toMatchObject({ inputTokens: 600, outputTokens: 40 });
  });

  it('generateObject on chat completions: the schema goes as a strict json_schema response format, the object parses', async () => {
    const schema = z.object({ city: z.string(), temperatureC: z.number(), conditions: z.array(z.string()) });
    const r = await generateObject({ model: openai().chat('object'), schema, prompt: 'Weather in Paris as JSON', maxRetries: 0 });
    expect(r.object).toEqual(CITY);
    const sent = upstreams['object']!.requests.at(-1)!.body;
    expect(sent['response_format']).toMatchObject({
      type: 'json_schema',
      json_schema: { strict: true, schema: { type: 'object', required: expect.arrayContaining(['city']) } },
    });
  });

  it("generateObject with Anthropic's structured output on a translated Messages route: the schema reaches the chat backend", async () => {
    const anthropic = createAnthropic({ apiKey: KEY, baseURL: `${gw.origin}/v1` });
    const schema = z.object({ city: z.string(), temperatureC: z.number(), conditions: z.array(z.string()) });
    const before = upstreams['object']!.requests.length;
    const r = await generateObject({
      model: anthropic('object'),
      schema,
      prompt: 'Weather in Paris as JSON',
      maxRetries: 0,
      maxOutputTokens: 200,
      providerOptions: { anthropic: { structuredOutputMode: 'outputFormat' } },
    });
    expect(r.object).toEqual(CITY);
    const sent = upstreams['object']!.requests[before]!.body;
    expect(sent['response_format']).toMatchObject({
      type: 'json_schema',
      json_schema: { schema: { type: 'object', required: expect.arrayContaining(['city']) } },
    });
  });

  it('embedMany past the provider’s 2048 values a call: two batches, each recorded with its usage, the SDK sums them', async () => {
    const values = Array.from({ length: 2100 }, (_, i) => `text ${i}`);
    const r = await embedMany({ model: openai().embedding('object'), values, maxRetries: 0 });
    expect(r.embeddings).toHaveLength(2100);
    expect(r.embeddings[2049]).toEqual([0.1, 0.5, 1]);
    expect(r.usage.tokens).toBe(3 * 2100);
    const batches = upstreams['object']!.requests.filter((q) => q.path === '/v1/embeddings');
    expect(batches.map((q) => q.body['input'].length)).toEqual([2048, 52]);
    expect(await accessLine(upstreams['object']!, upstreams['object']!.requests.indexOf(batches[0]!))).toMatchObject({
      family: 'embeddings',
      inputTokens: 3 * 2048,
      estimated: false,
    });
  });
});
