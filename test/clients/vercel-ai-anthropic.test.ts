// The Vercel AI SDK's Anthropic provider (`@ai-sdk/anthropic`) against the gateway's Messages API. It validates every
// answer and stream event against its schemas of Anthropic's API, so a shape @anthropic-ai/sdk forgives fails here:
// a two-step tool conversation (the model calls get_weather, the SDK runs it and sends the result, the model
// answers), plain and streamed, on a route whose backend speaks the Messages API (passed through) and on one whose
// backend speaks chat completions (translated both ways); then the errors it maps to APICallError.
import { createAnthropic } from '@ai-sdk/anthropic';
import { generateText, stepCountIs, tool } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type AnthropicUpstream, startAnthropicUpstream } from '../fakes/anthropic-upstream.js';
import { type ScriptedChatUpstream, startScriptedChatUpstream } from '../fakes/scripted-chat-upstream.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { KEYS, messagesManifests } from '../messages/manifests.js';
import { callFailure as failure, streamedText } from '../support/ai-sdk.js';
import { anthropicTurns, chatTurns, QUESTION, TOOL } from '../messages/weather-conversation.js';

let anthropic: AnthropicUpstream;
let chat: ScriptedChatUpstream;
let gw: TestGateway;

beforeAll(async () => {
  anthropic = await startAnthropicUpstream(anthropicTurns);
  chat = await startScriptedChatUpstream(chatTurns);
  gw = await startGateway(messagesManifests({ anthropic: anthropic.baseURL, chat: chat.baseURL }));
});

afterAll(async () => {
  await gw?.close();
  await Promise.all([anthropic, chat].map((u) => u?.close()));
});

const provider = (apiKey: string = KEYS.alice) => createAnthropic({ apiKey, baseURL: `${gw.origin}/v1` });

/** The weather tool as the SDK runs it; records the inputs the model's calls carried. */
function weatherTool(calls: unknown[]) {
  return tool({
    description: TOOL.description,
    inputSchema: z.object({ city: z.string() }),
    execute: async (input) => {
      calls.push(input);
      return 'Sunny, 24 °C';
    },
  });
}

// The routes of test/messages/manifests.ts: the same conversation from either kind of backend, and the tool's
// result as the backend's own API carries it in the second step's request.
const ROUTES = [
  {
    name: 'passed through to a Messages API backend',
    model: 'claude-native',
    lastRequest: () => anthropic.requests.at(-1)?.body?.['messages'].at(-1).content[0],
    toolResult: { type: 'tool_result', tool_use_id: 'toolu_w1' },
  },
  {
    name: 'translated to a chat completions backend',
    model: 'claude-translated',
    lastRequest: () => (chat.requests.at(-1)?.body as { messages: unknown[] } | undefined)?.messages.at(-1),
    toolResult: { role: 'tool', tool_call_id: 'call_w1' },
  },
];

/** Up to 1,024 output tokens: the provider knows no limit for the gateway's model names and warns without one. */
const MAX_OUTPUT_TOKENS = 1024;

/** The weather question on `model`, with the tool (its calls recorded in `calls`) and room for its three steps. */
const conversation = (model: string, calls: unknown[]) => ({
  model: provider()(model),
  tools: { get_weather: weatherTool(calls) },
  stopWhen: stepCountIs(3),
  messages: [QUESTION],
  maxOutputTokens: MAX_OUTPUT_TOKENS,
  maxRetries: 0,
});

describe.each(ROUTES)('the Vercel AI SDK, Anthropic provider, $name', ({ model, lastRequest, toolResult }) => {
  it('generateText runs the tool between the two steps and reads both answers', async () => {
    const calls: unknown[] = [];
    const r = await generateText(conversation(model, calls));
    expect(calls).toEqual([{ city: 'Paris' }]);
    expect(lastRequest()).toMatchObject(toolResult);
    expect(JSON.stringify(lastRequest())).toContain('Sunny, 24 °C');
    expect(r.steps.map((s) => s.finishReason)).toEqual(['tool-calls', 'stop']);
    expect(r.steps[0]!.text).toBe('Let me check.');
    expect(r.text).toBe('It is sunny in Paris.');
    expect(r.totalUsage.outputTokens).toBe(39);
    expect(r.totalUsage.inputTokens).toBeGreaterThan(0);
  });

  it('streamText: every event parses, the tool runs, the text and usage arrive', async () => {
    const calls: unknown[] = [];
    const { text, errors, result: r } = await streamedText({ ...conversation(model, calls) });
    expect(errors).toEqual([]);
    expect(calls).toEqual([{ city: 'Paris' }]);
    expect(lastRequest()).toMatchObject(toolResult);
    expect(text).toBe('Let me check.It is sunny in Paris.');
    expect((await r.steps).map((s) => s.finishReason)).toEqual(['tool-calls', 'stop']);
    expect((await r.totalUsage).outputTokens).toBe(39);
  });
});

describe('the Vercel AI SDK, Anthropic provider, errors', () => {
  it('a wrong key is 401 and a model no route serves 404, neither retryable, with Anthropic error bodies', async () => {
    const e401 = await failure(generateText({ model: provider('sk-wrong')('claude-native'), prompt: 'x', maxOutputTokens: MAX_OUTPUT_TOKENS, maxRetries: 0 }));
    expect([e401.statusCode, e401.isRetryable]).toEqual([401, false]);
    expect(JSON.parse(e401.responseBody ?? '{}')).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });
    const e404 = await failure(generateText({ model: provider()('no-such-model'), prompt: 'x', maxOutputTokens: MAX_OUTPUT_TOKENS, maxRetries: 0 }));
    expect([e404.statusCode, e404.isRetryable]).toEqual([404, false]);
    expect(e404.message).toContain('no-such-model');
  });
});
