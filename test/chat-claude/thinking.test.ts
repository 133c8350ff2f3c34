// Claude's thinking through chat completions (openai SDK): the fake Anthropic API answers a thinking block (with its
// signature) before the text, whole and streamed, and the client gets it as reasoning_content (the signature
// dropped); an overload Anthropic reports mid-stream (an `error` event after the first thinking delta) ends the
// client's stream as an error the SDK raises, and the request is recorded with the input counts message_start gave.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AnthropicUpstream, startAnthropicUpstream } from '../fakes/anthropic-upstream.js';
import { ALICE_KEY, deadBaseURL, startGateway, type TestGateway } from '../helpers/gateway.js';
import { chatClaudeManifests } from './manifests.js';
import { OVERLOADED, THINKING, thinkingTurn } from './weather-claude.js';

const ASK: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'What is six by seven?' }];
type WithReasoning = { reasoning_content?: string };

let claude: AnthropicUpstream;
let failing: AnthropicUpstream;
let gw: TestGateway;
let client: OpenAI;

beforeAll(async () => {
  claude = await startAnthropicUpstream([thinkingTurn]);
  failing = await startAnthropicUpstream([{ ...thinkingTurn, streamError: OVERLOADED }]);
  gw = await startGateway(
    chatClaudeManifests(await deadBaseURL(), { 'extra-claude': [['anthropic', claude.baseURL]], 'extra-overloaded': [['anthropic', failing.baseURL]] }),
  );
  client = new OpenAI({ apiKey: ALICE_KEY, baseURL: gw.baseURL, maxRetries: 0, timeout: 10_000 });
});

afterAll(async () => {
  await gw?.close();
  await Promise.all([claude, failing].map((u) => u?.close()));
});

describe("Claude's thinking through chat completions", () => {
  it('a whole answer: the thinking as reasoning_content, the text as content, the usage recorded', async () => {
    const r = await client.chat.completions.create({ model: 'extra-claude', messages: ASK });
    const message = r.choices[0]!.message as (typeof r.choices)[0]['message'] & WithReasoning;
    expect(message.reasoning_content).toBe(THINKING);
    expect(message.content).toBe('It is 42.');
    expect(JSON.stringify(r)).not.toContain('signature');
    expect(await gw.record(r._request_id ?? String(claude.requests.at(-1)!.headers['x-request-id']))).toMatchObject({
      status: 200,
      inputTokens: 30,
      outputTokens: 25,
      estimated: false,
    });
  });

  it('a stream: reasoning_content deltas in order before the content, the signature dropped', async () => {
    const stream = await client.chat.completions.create({ model: 'extra-claude', messages: ASK, stream: true });
    let reasoning = '';
    let content = '';
    let reasoningAfterContent = false;
    for await (const c of stream) {
      const delta = c.choices[0]?.delta as (OpenAI.ChatCompletionChunk.Choice.Delta & WithReasoning) | undefined;
      if (delta?.reasoning_content) {
        reasoning += delta.reasoning_content;
        if (content) reasoningAfterContent = true;
      }
      content += delta?.content ?? '';
    }
    expect(reasoning).toBe(THINKING);
    expect(content).toBe('It is 42.');
    expect(reasoningAfterContent).toBe(false);
    expect(claude.requests.at(-1)!.body).toMatchObject({ stream: true });
  });

  it('an overload reported mid-stream: the SDK raises it, the input counts of message_start recorded', async () => {
    const stream = await client.chat.completions.create({ model: 'extra-overloaded', messages: ASK, stream: true });
    let reasoning = '';
    const drain = async () => {
      for await (const c of stream) reasoning += (c.choices[0]?.delta as WithReasoning | undefined)?.reasoning_content ?? '';
    };
    await expect(drain()).rejects.toThrow(/Overloaded/);
    expect(THINKING.startsWith(reasoning) && reasoning.length > 0).toBe(true);
    const rec = await gw.record(String(failing.requests.at(-1)!.headers['x-request-id']));
    expect(rec).toMatchObject({ family: 'chat.completions', inputTokens: 30, estimated: true });
  });
});
