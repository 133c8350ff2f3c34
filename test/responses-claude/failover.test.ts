// Failover on one Responses route between an anthropic backend and a chat completions one, each answering through
// its own translation: Claude overloaded (529, which the route retries on) hands the request to the chat backend;
// a chat backend that refuses connections hands it to Claude. The client gets one good Response (whole, and
// streamed), and the access line names the backend that answered, with that backend's reported usage.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chatClaudeManifests } from '../chat-claude/manifests.js';
import { claudeTurns, recordedClaude } from '../chat-claude/weather-claude.js';
import { type AnthropicUpstream, startAnthropicUpstream } from '../fakes/anthropic-upstream.js';
import { type ScriptedChatUpstream, startScriptedChatUpstream } from '../fakes/scripted-chat-upstream.js';
import { ALICE_KEY, deadBaseURL, startGateway, type TestGateway } from '../helpers/gateway.js';
import { ANSWER, recorded, weatherTurns } from '../responses-chat/weather-chat.js';

let overloaded: AnthropicUpstream;
let claude: AnthropicUpstream;
let chat: ScriptedChatUpstream;
let gw: TestGateway;
let client: OpenAI;

beforeAll(async () => {
  overloaded = await startAnthropicUpstream([{ ...claudeTurns[1]!, error: { status: 529, type: 'overloaded_error', message: 'Overloaded' } }]);
  claude = await startAnthropicUpstream([claudeTurns[1]!]);
  chat = await startScriptedChatUpstream([weatherTurns[1]!]);
  const dead = await deadBaseURL();
  const routes = {
    'extra-claude-then-chat': [
      ['anthropic', overloaded.baseURL],
      ['chatCompletions', chat.baseURL],
    ],
    'extra-chat-then-claude': [
      ['chatCompletions', dead],
      ['anthropic', claude.baseURL],
    ],
  } as const;
  gw = await startGateway(chatClaudeManifests(dead, routes, undefined, ['responses']));
  client = new OpenAI({ apiKey: ALICE_KEY, baseURL: gw.baseURL, maxRetries: 0, timeout: 10_000 });
});

afterAll(async () => {
  await gw?.close();
  await Promise.all([overloaded, claude, chat].map((u) => u?.close()));
});

const ASK = { input: 'Weather in Paris?' };

describe('failover on a Responses route between an anthropic backend and a chat completions one', () => {
  it('Claude overloaded (529): the chat backend answers its chat body, told as one Response; the access line names it', async () => {
    const asked = overloaded.requests.length;
    const { data, response } = await client.responses.create({ model: 'extra-claude-then-chat', ...ASK }).withResponse();
    expect(overloaded.requests.length).toBe(asked + 1);
    expect(chat.requests.at(-1)!.body).toMatchObject({ model: 'upstream-chat', messages: [{ role: 'user', content: 'Weather in Paris?' }] });
    expect(data.status).toBe('completed');
    expect(data.output_text).toBe(ANSWER);
    const line = await gw.record(response.headers.get('x-request-id')!);
    expect(line).toMatchObject({ status: 200, family: 'responses', backend: 'chat1', attempts: 2, ...recorded(1) });
  });

  it('the same, streamed: one Response stream, from the chat backend', async () => {
    const { data: stream, response } = await client.responses.create({ model: 'extra-claude-then-chat', ...ASK, stream: true }).withResponse();
    const types: string[] = [];
    let text = '';
    for await (const e of stream) {
      types.push(e.type);
      if (e.type === 'response.output_text.delta') text += e.delta;
    }
    expect(text).toBe(ANSWER);
    expect(types.filter((t) => t === 'response.created')).toHaveLength(1);
    expect(types.at(-1)).toBe('response.completed');
    const line = await gw.record(response.headers.get('x-request-id')!);
    expect(line).toMatchObject({ status: 200, backend: 'chat1', attempts: 2, ...recorded(1) });
  });

  it('the chat backend refusing connections: Claude answers its Messages body, told as one Response; the access line names it', async () => {
    const { data, response } = await client.responses.create({ model: 'extra-chat-then-claude', ...ASK }).withResponse();
    expect(claude.requests.at(-1)!.body).toMatchObject({ model: 'upstream-claude', max_tokens: 4096, messages: [{ role: 'user' }] });
    expect(data.output_text).toBe('It is 18°C and sunny in Paris.');
    const line = await gw.record(response.headers.get('x-request-id')!);
    expect(line).toMatchObject({ status: 200, family: 'responses', backend: 'claude1', attempts: 2, ...recordedClaude(1) });
  });

  it('the same, streamed: one Response stream, from Claude', async () => {
    const stream = client.responses.stream({ model: 'extra-chat-then-claude', ...ASK });
    const done = await stream.finalResponse();
    expect(done.output_text).toBe('It is 18°C and sunny in Paris.');
    expect(claude.requests.at(-1)!.body).toMatchObject({ stream: true });
    const line = await gw.record(String(claude.requests.at(-1)!.headers['x-request-id']));
    expect(line).toMatchObject({ status: 200, backend: 'claude1', attempts: 2, ...recordedClaude(1) });
  });
});
