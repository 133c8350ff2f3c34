// anthropic-python, Anthropic's official Python SDK, against the gateway's Messages API: the weather conversation's
// two steps (tool_use, then the answer after the tool's result), plain and through its stream helper, on a route
// whose backend speaks the Messages API (passed through) and on one whose backend speaks chat completions
// (translated); count_tokens; the gateway's refusals as its error classes; and streams an upstream cuts. The client
// runs in the virtualenv scripts/py-clients.mjs sets up; without it this test fails, it does not skip.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error: a plain .mjs helper shared with scripts/run-tests.mjs
import { ensurePythonClients, PYTHON } from '../../scripts/py-clients.mjs';
import { type AnthropicUpstream, countedTokens, startAnthropicUpstream } from '../fakes/anthropic-upstream.js';
import { type ScriptedChatUpstream, startScriptedChatUpstream } from '../fakes/scripted-chat-upstream.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { KEYS, messagesManifests } from '../messages/manifests.js';
import { anthropicTurns, chatTurns, QUESTION } from '../messages/weather-conversation.js';
import { REPO_ROOT } from '../support/spawn-cli.js';

let anthropic: AnthropicUpstream;
let chat: ScriptedChatUpstream;
let cutAnthropic: AnthropicUpstream;
let cutChat: ScriptedChatUpstream;
let gw: TestGateway;
let seen: Record<string, any>;

beforeAll(async () => {
  expect(ensurePythonClients(), 'the Python clients could not be installed (see the log above)').toBe(true);
  anthropic = await startAnthropicUpstream(anthropicTurns);
  chat = await startScriptedChatUpstream(chatTurns);
  cutAnthropic = await startAnthropicUpstream([{ ...anthropicTurns[0]!, cut: true }]);
  cutChat = await startScriptedChatUpstream([{ ...chatTurns[0]!, cut: true }]);
  gw = await startGateway(
    messagesManifests({
      anthropic: anthropic.baseURL,
      chat: chat.baseURL,
      extra: { 'claude-x-cut-native': ['anthropic', cutAnthropic.baseURL], 'claude-x-cut-translated': ['openai', cutChat.baseURL] },
    }),
  );
  // Asynchronously: the fakes and the gateway live in this process and must keep answering meanwhile.
  const script = join(REPO_ROOT, 'test/clients/anthropic_python_client.py');
  const run = await promisify(execFile)(PYTHON, [script, gw.origin, KEYS.alice, KEYS.limited], { timeout: 90_000 });
  seen = JSON.parse(run.stdout);
}, 180_000);

afterAll(async () => {
  await gw?.close();
  await Promise.all([anthropic, chat, cutAnthropic, cutChat].map((u) => u?.close()));
});

/** The value a call returned; fails with what the SDK raised instead. */
function value(name: string): any {
  expect(seen[name], JSON.stringify(seen[name])).toMatchObject({ ok: true });
  return seen[name].value;
}

// A native answer is relayed byte for byte, so it names the backend's model; a translated one the route's.
describe.each([
  { name: 'passed through to a Messages API backend', model: 'claude-native', answeredBy: 'upstream-claude' },
  { name: 'translated to a chat completions backend', model: 'claude-translated', answeredBy: 'claude-translated' },
])('anthropic-python, $name', ({ model, answeredBy }) => {
  for (const how of ['create', 'stream']) {
    it(`${how}: the tool_use step, then the answer after the tool's result, with usage`, () => {
      const [first, second] = value(`${how}_${model}`);
      expect(first).toMatchObject({ model: answeredBy, stop_reason: 'tool_use' });
      expect(first.id).toMatch(/^msg_/);
      expect(first.content).toEqual([
        { type: 'text', text: 'Let me check.' },
        { type: 'tool_use', id: expect.any(String), name: 'get_weather', input: { city: 'Paris' } },
      ]);
      expect(second).toMatchObject({ stop_reason: 'end_turn', content: [{ type: 'text', text: 'It is sunny in Paris.' }] });
      expect(first.usage.output_tokens).toBe(30);
      expect(second.usage.output_tokens).toBe(9);
    });
  }

  it("the tool's result reached the backend in its own API's shape", () => {
    const results =
      model === 'claude-native'
        ? anthropic.requests.flatMap((r) => (r.body?.['messages'] ?? []).flatMap((m: any) => (Array.isArray(m.content) ? m.content : [])))
        : chat.requests.flatMap((r) => ((r.body as { messages?: any[] } | undefined)?.messages ?? []).filter((m) => m.role === 'tool'));
    const sunny = results.filter((b: any) => JSON.stringify(b).includes('Sunny, 24 °C'));
    // Once for the plain conversation, once for the streamed one.
    expect(sunny).toHaveLength(2);
    expect(sunny[0]).toMatchObject(model === 'claude-native' ? { type: 'tool_result', tool_use_id: 'toolu_w1' } : { role: 'tool', tool_call_id: 'call_w1' });
  });

  it('the stream helper saw the whole event sequence', () => {
    const events: string[] = seen[`events_${model}`];
    expect(events[0]).toBe('message_start');
    expect(events.at(-1)).toBe('message_stop');
    expect(events).toContain('content_block_delta');
    expect(events).toContain('message_delta');
  });

  it('count_tokens answers a count', () => {
    const counted = value(`count_${model}`);
    expect(Number.isInteger(counted) && counted > 0).toBe(true);
    // A native backend counts itself (its fake: a quarter of the counted JSON); a translated one gets the gateway's estimate.
    if (model === 'claude-native') expect(counted).toBe(countedTokens({ messages: [QUESTION] }));
  });
});

describe("anthropic-python: the gateway's refusals and cut streams", () => {
  it('map to the SDK error classes with their Anthropic error types', () => {
    expect(seen['bad_key']).toMatchObject({ ok: false, error: 'AuthenticationError', status: 401, type: 'authentication_error' });
    expect(seen['unknown_model']).toMatchObject({ ok: false, error: 'NotFoundError', status: 404, type: 'not_found_error' });
    expect(seen['forbidden_model']).toMatchObject({ ok: false, error: 'PermissionDeniedError', status: 403, type: 'permission_error' });
    expect(seen['no_max_tokens']).toMatchObject({ ok: false, error: 'BadRequestError', status: 400, type: 'invalid_request_error' });
  });

  it('a group over its requests per minute is RateLimitError with retry-after', () => {
    expect(value('limited_first')).toBe('message');
    expect(seen['limited_second']).toMatchObject({ ok: false, error: 'RateLimitError', status: 429, type: 'rate_limit_error' });
    expect(Number(seen['limited_second'].retry_after)).toBeGreaterThan(0);
  });

  it("an upstream that dies mid-stream ends in the stream's error event, which the SDK raises, native and translated", () => {
    for (const model of ['claude-x-cut-native', 'claude-x-cut-translated']) {
      // The SDK raises an `error` event as APIStatusError (with the stream's 200), its body the event's.
      expect(seen[`cut_${model}`], model).toMatchObject({ ok: false, error: 'APIStatusError', type: 'api_error', message: expect.stringMatching(/upstream/) });
    }
  });
});
