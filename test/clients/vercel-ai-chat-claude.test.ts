// The Vercel AI SDK's OpenAI chat provider (`openai.chat(model)`) through the gateway to a backend that speaks
// Anthropic's Messages API (api: anthropic, the fake Anthropic API on loopback). Its zod schemas validate every
// translated completion and chunk: generateText runs a tool loop (the SDK sends the call and its result back as chat
// messages, the backend gets tool_use and tool_result blocks), streamText streams the same loop, each step's usage is
// what the backend reported and what the gateway recorded, and a stream the backend cuts surfaces as an error.
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, stepCountIs, tool } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { chatClaudeManifests } from '../chat-claude/manifests.js';
import { claudeTurns, recordedClaude } from '../chat-claude/weather-claude.js';
import { type AnthropicUpstream, startAnthropicUpstream } from '../fakes/anthropic-upstream.js';
import { ALICE_KEY, deadBaseURL, startGateway, type TestGateway } from '../helpers/gateway.js';
import { streamedText } from '../support/ai-sdk.js';

let claude: AnthropicUpstream;
let cut: AnthropicUpstream;
let gw: TestGateway;

beforeAll(async () => {
  claude = await startAnthropicUpstream(claudeTurns);
  cut = await startAnthropicUpstream([{ ...claudeTurns[1]!, cut: true }]);
  gw = await startGateway(
    chatClaudeManifests(await deadBaseURL(), { 'extra-claude': [['anthropic', claude.baseURL]], 'extra-cut': [['anthropic', cut.baseURL]] }),
  );
});

afterAll(async () => {
  await gw?.close();
  await Promise.all([claude, cut].map((u) => u?.close()));
});

const model = (name: string) => createOpenAI({ apiKey: ALICE_KEY, baseURL: gw.baseURL }).chat(name);
const tools = {
  get_weather: tool({ description: 'The weather in a city', inputSchema: z.object({ city: z.string() }), execute: async () => '18°C, sunny' }),
};
const ANSWER = 'It is 18°C and sunny in Paris.';

/** The usage the SDK reads of turn i: input counting the cache reads and writes, as the backend reported them. */
function sdkUsage(i: number) {
  const r = recordedClaude(i);
  return { inputTokens: r.inputTokens, outputTokens: r.outputTokens, inputTokenDetails: expect.objectContaining({ cacheReadTokens: r.cachedInputTokens }) };
}

/** The backend's two requests of the loop just run: the tool_use and its tool_result went back as Anthropic blocks. */
async function expectLoopSent(from: number) {
  const [first, second] = claude.requests.slice(from);
  expect(first!.body!['tools']).toEqual([expect.objectContaining({ name: 'get_weather', input_schema: expect.objectContaining({ required: ['city'] }) })]);
  expect(second!.body!['messages'].slice(1)).toEqual([
    {
      role: 'assistant',
      content: [{ type: 'text', text: 'Let me check.' }, expect.objectContaining({ type: 'tool_use', id: 'toolu_weather_1', input: { city: 'Paris' } })],
    },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_weather_1', content: '18°C, sunny' }] },
  ]);
  for (const [i, req] of [first!, second!].entries())
    expect(await gw.record(String(req.headers['x-request-id']))).toMatchObject({ status: 200, family: 'chat.completions', ...recordedClaude(i) });
}

describe('the Vercel AI SDK chat provider on an anthropic backend', () => {
  it('generateText with a tool loop: the tool ran on the toolu_ call, the answer, each step’s usage as the backend reported', async () => {
    const from = claude.requests.length;
    const r = await generateText({ model: model('extra-claude'), prompt: 'What is the weather in Paris?', tools, stopWhen: stepCountIs(3), maxRetries: 0 });
    expect(r.text).toBe(ANSWER);
    expect(r.steps).toHaveLength(2);
    expect(r.steps[0]!.toolCalls[0]).toMatchObject({ toolCallId: 'toolu_weather_1', toolName: 'get_weather', input: { city: 'Paris' } });
    expect(r.steps.map((s) => s.finishReason)).toEqual(['tool-calls', 'stop']);
    expect(r.steps.map((s) => s.usage)).toEqual([expect.objectContaining(sdkUsage(0)), expect.objectContaining(sdkUsage(1))]);
    await expectLoopSent(from);
  });

  it('streamText with the same loop: every chunk validated, the text, each step’s usage from the usage chunk', async () => {
    const from = claude.requests.length;
    const {
      text,
      errors,
      result: r,
    } = await streamedText({
      model: model('extra-claude'),
      prompt: 'What is the weather in Paris?',
      tools,
      stopWhen: stepCountIs(3),
      maxRetries: 0,
    });
    expect(errors).toEqual([]);
    expect(text).toBe(`Let me check.${ANSWER}`);
    expect((await r.steps).map((s) => s.finishReason)).toEqual(['tool-calls', 'stop']);
    expect((await r.steps).map((s) => s.usage)).toEqual([expect.objectContaining(sdkUsage(0)), expect.objectContaining(sdkUsage(1))]);
    expect(claude.requests.at(-1)!.body).toMatchObject({ stream: true });
    await expectLoopSent(from);
  });

  it('a stream the backend cuts surfaces as an error after the text that came', async () => {
    const { text, errors, result: r } = await streamedText({ model: model('extra-cut'), prompt: 'Weather?', maxRetries: 0 });
    expect(ANSWER.startsWith(text) && text.length > 0, text).toBe(true);
    expect(errors).toHaveLength(1);
    expect(String((errors[0] as { message?: string }).message ?? errors[0])).toContain('upstream');
    expect(await r.finishReason).not.toBe('stop');
  });
});
