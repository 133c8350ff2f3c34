// Claude's thinking through the Responses API (openai SDK): the thinking block (its signature dropped) becomes a
// reasoning item before the message, whole and streamed (reasoning_text deltas); an overload Anthropic reports
// mid-stream ends the Responses stream with its `error` event, which the SDK raises, and the request is recorded
// estimated with the input counts message_start reported.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chatClaudeManifests } from '../chat-claude/manifests.js';
import { OVERLOADED, THINKING, thinkingTurn } from '../chat-claude/weather-claude.js';
import { type AnthropicUpstream, startAnthropicUpstream } from '../fakes/anthropic-upstream.js';
import { ALICE_KEY, deadBaseURL, startGateway, type TestGateway } from '../helpers/gateway.js';

let claude: AnthropicUpstream;
let failing: AnthropicUpstream;
let gw: TestGateway;
let client: OpenAI;

beforeAll(async () => {
  claude = await startAnthropicUpstream([thinkingTurn]);
  failing = await startAnthropicUpstream([{ ...thinkingTurn, streamError: OVERLOADED }]);
  const routes = { 'extra-claude': [['anthropic', claude.baseURL]], 'extra-overloaded': [['anthropic', failing.baseURL]] } as const;
  gw = await startGateway(chatClaudeManifests(await deadBaseURL(), routes, undefined, ['responses']));
  client = new OpenAI({ apiKey: ALICE_KEY, baseURL: gw.baseURL, maxRetries: 0, timeout: 10_000 });
});

afterAll(async () => {
  await gw?.close();
  await Promise.all([claude, failing].map((u) => u?.close()));
});

const ASK = { model: 'extra-claude', input: 'What is six by seven?' };
const reasoningOf = (r: OpenAI.Responses.Response) => r.output.filter((o) => o.type === 'reasoning');

describe("Claude's thinking through the Responses API", () => {
  it('a whole answer: a reasoning item with the thinking, then the message; no signature; the usage recorded', async () => {
    const r = await client.responses.create(ASK);
    expect(r.output.map((o) => o.type)).toEqual(['reasoning', 'message']);
    expect(reasoningOf(r)[0]!.content).toEqual([{ type: 'reasoning_text', text: THINKING }]);
    expect(r.output_text).toBe('It is 42.');
    expect(JSON.stringify(r)).not.toContain('signature');
    expect(await gw.record(String(claude.requests.at(-1)!.headers['x-request-id']))).toMatchObject({
      status: 200,
      family: 'responses',
      inputTokens: 30,
      outputTokens: 25,
      estimated: false,
    });
  });

  it('a stream: reasoning_text deltas, then the text; the final Response holds the reasoning item', async () => {
    const stream = client.responses.stream(ASK);
    let reasoning = '';
    let text = '';
    stream.on('response.reasoning_text.delta', (e) => {
      expect(text).toBe('');
      reasoning += e.delta;
    });
    stream.on('response.output_text.delta', (e) => {
      text += e.delta;
    });
    const done = await stream.finalResponse();
    expect(reasoning).toBe(THINKING);
    expect(text).toBe('It is 42.');
    expect(reasoningOf(done)[0]!.content).toEqual([{ type: 'reasoning_text', text: THINKING }]);
    expect(claude.requests.at(-1)!.body).toMatchObject({ stream: true });
  });

  it('an overload reported mid-stream: the Responses error event, which the SDK raises; the input recorded as reported', async () => {
    const stream = await client.responses.create({ ...ASK, model: 'extra-overloaded', stream: true });
    const seen: string[] = [];
    const drain = async () => {
      for await (const e of stream) seen.push(e.type);
    };
    await expect(drain()).rejects.toThrow(/Overloaded/);
    expect(seen).toContain('response.reasoning_text.delta');
    expect(seen).not.toContain('response.completed');
    const rec = await gw.record(String(failing.requests.at(-1)!.headers['x-request-id']));
    expect(rec).toMatchObject({ family: 'responses', inputTokens: 30, estimated: true });
  });
});
