// A client that leaves a translated stream on Claude (chat completions and the Responses API, openai SDK, aborted
// after the first text delta) while the Anthropic backend keeps its stream open: past the read-on bound the gateway
// closes the upstream connection (no hung upstream), and the request is recorded aborted with the input counts
// message_start reported (cache reads and writes included), only the output estimated.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chatClaudeManifests } from '../chat-claude/manifests.js';
import { claudeTurns, QUESTION } from '../chat-claude/weather-claude.js';
import { type AnthropicUpstream, startAnthropicUpstream } from '../fakes/anthropic-upstream.js';
import { ALICE_KEY, deadBaseURL, startGateway, type TestGateway } from '../helpers/gateway.js';
import { waitUntil } from '../support/wait.js';

const u = claudeTurns[0]!.usage;
const REPORTED_INPUT = u.input_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens;

let forChat: AnthropicUpstream;
let forResponses: AnthropicUpstream;
let chatGw: TestGateway;
let responsesGw: TestGateway;

beforeAll(async () => {
  forChat = await startAnthropicUpstream([{ ...claudeTurns[0]!, hang: true }]);
  forResponses = await startAnthropicUpstream([{ ...claudeTurns[0]!, hang: true }]);
  const dead = await deadBaseURL();
  const readOn = { usage: { readOn: { ms: 300, bytes: 1 << 20 } } };
  chatGw = await startGateway(chatClaudeManifests(dead, { 'extra-hang': [['anthropic', forChat.baseURL]] }), readOn);
  responsesGw = await startGateway(chatClaudeManifests(dead, { 'extra-hang': [['anthropic', forResponses.baseURL]] }, undefined, ['responses']), readOn);
});

afterAll(async () => {
  await Promise.all([chatGw, responsesGw].map((g) => g?.close()));
  await Promise.all([forChat, forResponses].map((f) => f?.close()));
});

const client = (gw: TestGateway) => new OpenAI({ apiKey: ALICE_KEY, baseURL: gw.baseURL, maxRetries: 0, timeout: 10_000 });

describe('a client that leaves a translated stream on Claude', () => {
  it('chat completions: the upstream connection closed, the request recorded aborted with the input message_start reported', async () => {
    const ac = new AbortController();
    const { data: stream, response } = await client(chatGw)
      .chat.completions.create({ model: 'extra-hang', messages: QUESTION, stream: true }, { signal: ac.signal })
      .withResponse();
    for await (const c of stream) if (c.choices[0]?.delta.content) break;
    ac.abort();
    await waitUntil(() => forChat.abandoned() === 1, 5_000, 'the upstream connection closed');
    const line = await chatGw.record(response.headers.get('x-request-id')!);
    expect(line).toMatchObject({
      family: 'chat.completions',
      aborted: true,
      estimated: true,
      inputTokens: REPORTED_INPUT,
      cachedInputTokens: u.cache_read_input_tokens,
    });
    expect(line['outputTokens']).toBeGreaterThan(0);
  });

  it('the Responses API: the upstream connection closed, the request recorded aborted with the input message_start reported', async () => {
    const ac = new AbortController();
    const { data: stream, response } = await client(responsesGw)
      .responses.create({ model: 'extra-hang', input: 'Weather in Paris?', stream: true }, { signal: ac.signal })
      .withResponse();
    for await (const e of stream) if (e.type === 'response.output_text.delta') break;
    ac.abort();
    await waitUntil(() => forResponses.abandoned() === 1, 5_000, 'the upstream connection closed');
    const line = await responsesGw.record(response.headers.get('x-request-id')!);
    expect(line).toMatchObject({
      family: 'responses',
      aborted: true,
      estimated: true,
      inputTokens: REPORTED_INPUT,
      cachedInputTokens: u.cache_read_input_tokens,
    });
    expect(line['outputTokens']).toBeGreaterThan(0);
  });
});
