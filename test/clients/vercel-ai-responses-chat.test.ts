// The Vercel AI SDK's default OpenAI model, openai(model), speaks the Responses API: here through the gateway to a
// backend that speaks chat completions only (api: chatCompletions). generateText runs a tool loop (the SDK sends the
// function call and its output back as Responses input items), streamText streams the answer; the SDK's own zod
// schemas validate every translated answer and event, and its usage is the chat usage the backend reported. With
// store on (the SDK's default) it refers back to an earlier answer's text by item_reference, which the gateway
// resolves from the response it kept; a multi-turn chat by previousResponseId continues the kept conversation.
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, stepCountIs, tool } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type ScriptedChatUpstream, startScriptedChatUpstream } from '../fakes/scripted-chat-upstream.js';
import { ALICE_KEY, deadBaseURL, startGateway, type TestGateway } from '../helpers/gateway.js';
import { responsesChatManifests } from '../responses-chat/manifests.js';
import { ANSWER, weatherTurns } from '../responses-chat/weather-chat.js';
import { streamedText } from '../support/ai-sdk.js';

const PREAMBLE = 'Let me look that up.';

let chat: ScriptedChatUpstream;
let reasoning: ScriptedChatUpstream;
let preamble: ScriptedChatUpstream;
let gw: TestGateway;

beforeAll(async () => {
  chat = await startScriptedChatUpstream(weatherTurns);
  reasoning = await startScriptedChatUpstream([{ ...weatherTurns[0]!, reasoning: 'Paris: look it up.' }, weatherTurns[1]!]);
  preamble = await startScriptedChatUpstream([{ ...weatherTurns[0]!, text: PREAMBLE }, weatherTurns[1]!]);
  gw = await startGateway(
    responsesChatManifests(await deadBaseURL(), {
      'extra-chat': [['chatCompletions', chat.baseURL]],
      'extra-reasoning': [['chatCompletions', reasoning.baseURL]],
      'extra-preamble': [['chatCompletions', preamble.baseURL]],
    }),
  );
});

afterAll(async () => {
  await gw?.close();
  await Promise.all([chat, reasoning, preamble].map((u) => u?.close()));
});

const openai = () => createOpenAI({ apiKey: ALICE_KEY, baseURL: gw.baseURL });
const tools = {
  get_weather: tool({ description: 'The weather in a city', inputSchema: z.object({ city: z.string() }), execute: async () => ({ forecast: 'sunny' }) }),
};
const totals = {
  inputTokens: weatherTurns[0]!.usage.prompt_tokens + weatherTurns[1]!.usage.prompt_tokens,
  outputTokens: weatherTurns[0]!.usage.completion_tokens + weatherTurns[1]!.usage.completion_tokens,
};

describe('the Vercel AI SDK on Responses, answered by a chat completions backend', () => {
  it('generateText with a tool loop: the tool ran, its output went back as a tool message, the answer and both steps’ usage', async () => {
    const before = chat.requests.length;
    const r = await generateText({ model: openai()('extra-chat'), prompt: 'Weather in Paris?', tools, stopWhen: stepCountIs(3), maxRetries: 0 });
    expect(r.text).toBe(ANSWER);
    expect(r.steps).toHaveLength(2);
    expect(r.steps[0]!.toolCalls[0]).toMatchObject({ toolName: 'get_weather', input: { city: 'Paris' } });
    const second = chat.requests[before + 1]!.body['messages'] as Record<string, unknown>[];
    expect(second.at(-1)).toEqual({ role: 'tool', tool_call_id: 'call_weather_1', content: '{"forecast":"sunny"}' });
    expect(r.totalUsage).toMatchObject(totals);
  });

  it('streamText with the same loop: the text streams, the SDK validated every event, usage summed over the steps', async () => {
    const {
      text,
      errors,
      result: r,
    } = await streamedText({
      model: openai()('extra-chat'),
      prompt: 'Weather in Paris?',
      tools,
      stopWhen: stepCountIs(3),
      maxRetries: 0,
    });
    expect(errors).toEqual([]);
    expect(text).toBe(ANSWER);
    expect(await r.totalUsage).toMatchObject(totals);
    expect(chat.requests.at(-1)!.body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
  });

  it("a step with reasoning (the backend's reasoning_content): the SDK refers back to it (item_reference, store on by default), which is dropped as reasoning is", async () => {
    const r = await generateText({ model: openai()('extra-reasoning'), prompt: 'Weather in Paris?', tools, stopWhen: stepCountIs(3), maxRetries: 0 });
    // The SDK shows a reasoning item's summary, which the translation leaves empty (the text is in its content, which
    // @ai-sdk/openai does not read: docs/coding-agents.md).
    expect(r.steps[0]!.reasoning).toEqual([expect.objectContaining({ type: 'reasoning', text: '' })]);
    expect(r.text).toBe(ANSWER);
    const second = reasoning.requests[1]!.body['messages'] as Record<string, unknown>[];
    expect(second.map((m) => m['role'])).toEqual(['user', 'assistant', 'tool']);
  });

  it('a step that says something before its call (store on): the SDK refers to that text, the backend gets it again', async () => {
    const r = await generateText({ model: openai()('extra-preamble'), prompt: 'Weather in Paris?', tools, stopWhen: stepCountIs(3), maxRetries: 0 });
    expect(r.text).toBe(ANSWER);
    expect(preamble.requests.at(-1)!.body['messages']).toEqual([
      { role: 'user', content: 'Weather in Paris?' },
      {
        role: 'assistant',
        content: PREAMBLE,
        tool_calls: [{ id: 'call_weather_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
      },
      { role: 'tool', tool_call_id: 'call_weather_1', content: '{"forecast":"sunny"}' },
    ]);
  });

  it('a second turn by previousResponseId: only the new message is sent, the backend gets the whole conversation', async () => {
    const first = await generateText({ model: openai()('extra-preamble'), prompt: 'Weather in Paris?', tools, maxRetries: 0 });
    expect(first.toolCalls).toHaveLength(1);
    const second = await generateText({
      model: openai()('extra-preamble'),
      messages: [
        {
          role: 'tool',
          content: [{ type: 'tool-result', toolCallId: 'call_weather_1', toolName: 'get_weather', output: { type: 'json', value: { forecast: 'sunny' } } }],
        },
      ],
      tools,
      maxRetries: 0,
      providerOptions: { openai: { previousResponseId: first.response.id } },
    });
    expect(second.text).toBe(ANSWER);
    expect(preamble.requests.at(-1)!.body['messages']).toMatchObject([
      { role: 'user' },
      { role: 'assistant', content: PREAMBLE, tool_calls: [{ id: 'call_weather_1' }] },
      { role: 'tool', tool_call_id: 'call_weather_1', content: '{"forecast":"sunny"}' },
    ]);
  });
});
