// The Vercel AI SDK's default OpenAI model, openai(model), speaks the Responses API: here through the gateway to an
// anthropic backend (Responses → chat → Messages). generateText runs a tool loop (the SDK sends the function call
// and its output back as Responses input items, which reach Claude as tool_use and tool_result), streamText streams
// it; the SDK's own zod schemas validate every translated answer and event, and its usage is what Claude reported.
// Claude's first step says something before its call, and the SDK (store on by default) refers back to that text
// with an item_reference: the gateway kept the item it answered and sends Claude its text again; with store off the
// SDK sends the text itself. Another key's reference to it finds nothing (refused, saying what to send).
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, stepCountIs, tool } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { chatClaudeManifests } from '../chat-claude/manifests.js';
import { claudeTurns } from '../chat-claude/weather-claude.js';
import { type AnthropicUpstream, startAnthropicUpstream } from '../fakes/anthropic-upstream.js';
import { ALICE_KEY, deadBaseURL, keyManifests, startGateway, type TestGateway } from '../helpers/gateway.js';
import { streamedText } from '../support/ai-sdk.js';

const ANSWER = 'It is 18°C and sunny in Paris.';
const BOB_KEY = 'sk-bob-client-key-9876543210';

let claude: AnthropicUpstream;
let gw: TestGateway;

beforeAll(async () => {
  claude = await startAnthropicUpstream(claudeTurns);
  gw = await startGateway(
    `${chatClaudeManifests(await deadBaseURL(), { 'extra-claude': [['anthropic', claude.baseURL]] }, undefined, ['responses'])}---\n${keyManifests(BOB_KEY, ['extra-claude'], { group: 'bob-team', token: 'bob' })}`,
  );
});

afterAll(async () => {
  await gw?.close();
  await claude?.close();
});

const openai = (apiKey = ALICE_KEY) => createOpenAI({ apiKey, baseURL: gw.baseURL });
const tools = {
  get_weather: tool({ description: 'The weather in a city', inputSchema: z.object({ city: z.string() }), execute: async () => ({ forecast: 'sunny' }) }),
};

/** What the SDK sums over the two steps: Claude's input counts its cache reads and writes. */
const totals = {
  inputTokens: claudeTurns.reduce((n, t) => n + t.usage.input_tokens + t.usage.cache_read_input_tokens + t.usage.cache_creation_input_tokens, 0),
  outputTokens: claudeTurns.reduce((n, t) => n + t.usage.output_tokens, 0),
};

/**
 * The second step's Messages request: Claude's first turn again (its text, whether the SDK sent it or referred to
 * it, and its call), then the tool's output as a tool_result for Claude's toolu_ id.
 */
function expectToolResultSent(request: { body: Record<string, any> | undefined }) {
  expect(request.body!['messages'].at(-2)).toEqual({
    role: 'assistant',
    content: [
      { type: 'text', text: 'Let me check.' },
      { type: 'tool_use', id: 'toolu_weather_1', name: 'get_weather', input: { city: 'Paris' } },
    ],
  });
  expect(request.body!['messages'].at(-1)).toEqual({
    role: 'user',
    content: [{ type: 'tool_result', tool_use_id: 'toolu_weather_1', content: '{"forecast":"sunny"}' }],
  });
}

describe('the Vercel AI SDK on Responses, answered by an anthropic backend', () => {
  it('generateText with a tool loop (store on, the default): Claude’s text referred to, sent again; the tool’s output as a tool_result; both steps’ usage', async () => {
    const before = claude.requests.length;
    const r = await generateText({ model: openai()('extra-claude'), prompt: 'Weather in Paris?', tools, stopWhen: stepCountIs(3), maxRetries: 0 });
    expect(r.text).toBe(ANSWER);
    expect(r.steps).toHaveLength(2);
    expect(r.steps[0]!.toolCalls[0]).toMatchObject({ toolCallId: 'toolu_weather_1', toolName: 'get_weather', input: { city: 'Paris' } });
    expect(claude.requests.length).toBe(before + 2);
    expectToolResultSent(claude.requests.at(-1)!);
    expect(r.totalUsage).toMatchObject(totals);
  });

  for (const store of [false, true]) {
    it(`streamText with the same loop, store ${store ? 'on: Claude’s streamed text kept, referred to' : 'off: the SDK sends the text itself'}; every event validated, usage summed`, async () => {
      const {
        text,
        errors,
        result: r,
      } = await streamedText({
        model: openai()('extra-claude'),
        prompt: 'Weather in Paris?',
        tools,
        stopWhen: stepCountIs(3),
        maxRetries: 0,
        providerOptions: { openai: { store } },
      });
      expect(errors).toEqual([]);
      expect(text).toBe(`Let me check.${ANSWER}`);
      expect(await r.totalUsage).toMatchObject(totals);
      expect(claude.requests.at(-1)!.body).toMatchObject({ stream: true });
      expectToolResultSent(claude.requests.at(-1)!);
    });
  }

  it('a reference to an item another key got finds nothing: refused in OpenAI’s shape, saying what to send, Claude not asked', async () => {
    const first = await generateText({ model: openai()('extra-claude'), prompt: 'Weather in Paris?', tools, stopWhen: stepCountIs(1), maxRetries: 0 });
    const asked = claude.requests.length;
    // Bob goes on from Alice's step: the SDK refers to her text by the id the gateway minted for her.
    const run = generateText({
      model: openai(BOB_KEY)('extra-claude'),
      messages: [{ role: 'user', content: 'Weather in Paris?' }, ...first.response.messages],
      tools,
      maxRetries: 0,
    });
    await expect(run).rejects.toMatchObject({ statusCode: 400, message: expect.stringContaining('store = false') });
    expect(claude.requests.length).toBe(asked);
  });
});
