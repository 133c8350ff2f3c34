// openai-python against chat completions answered by an Anthropic backend (api: anthropic, the fake Anthropic API on
// loopback): whole and streamed answers, a tool round trip on the toolu_ id, structured outputs parsed into a pydantic
// model, the stream helpers (a strict pydantic tool whose arguments the SDK parses), Anthropic's 429 retold so the SDK
// raises RateLimitError and its retry succeeds, a refusal as BadRequestError, and a cut stream raising. Its pydantic
// models and stream accumulators are stricter than the node SDK's. The client runs in the virtualenv
// scripts/py-clients.mjs sets up; without it this test fails, it does not skip.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error: a plain .mjs helper shared with scripts/run-tests.mjs
import { ensurePythonClients, PYTHON } from '../../scripts/py-clients.mjs';
import { chatClaudeManifests } from '../chat-claude/manifests.js';
import { claudeTurns, recordedClaude } from '../chat-claude/weather-claude.js';
import { type AnthropicUpstream, startAnthropicUpstream } from '../fakes/anthropic-upstream.js';
import { ALICE_KEY, deadBaseURL, startGateway, type TestGateway } from '../helpers/gateway.js';
import { REPO_ROOT } from '../support/spawn-cli.js';

let claude: AnthropicUpstream;
let structured: AnthropicUpstream;
let throttled: AnthropicUpstream;
let cut: AnthropicUpstream;
let gw: TestGateway;
let seen: Record<string, any>;

beforeAll(async () => {
  expect(ensurePythonClients(), 'the Python clients could not be installed (see the log above)').toBe(true);
  claude = await startAnthropicUpstream(claudeTurns);
  structured = await startAnthropicUpstream([
    { content: [{ type: 'text', text: '{"city":"Paris","celsius":18}' }], stop_reason: 'end_turn', usage: claudeTurns[1]!.usage },
  ]);
  throttled = await startAnthropicUpstream([
    { ...claudeTurns[1]!, error: { status: 429, type: 'rate_limit_error', message: 'rate_limit_error from the fake', retryAfter: '0', times: 2 } },
  ]);
  cut = await startAnthropicUpstream([{ ...claudeTurns[1]!, cut: true }]);
  gw = await startGateway(
    chatClaudeManifests(await deadBaseURL(), {
      'extra-claude': [['anthropic', claude.baseURL]],
      'extra-structured': [['anthropic', structured.baseURL]],
      'extra-throttled': [['anthropic', throttled.baseURL]],
      'extra-cut': [['anthropic', cut.baseURL]],
    }),
  );
  // Asynchronously: the fakes live in this process and must keep answering meanwhile.
  const run = await promisify(execFile)(PYTHON, [join(REPO_ROOT, 'test/clients/openai_python_claude.py'), gw.baseURL, ALICE_KEY], { timeout: 90_000 });
  seen = JSON.parse(run.stdout);
}, 180_000);

afterAll(async () => {
  await gw?.close();
  await Promise.all([claude, structured, throttled, cut].map((u) => u?.close()));
});

/** The value a call returned; fails with what the SDK raised instead. */
function value(name: string): any {
  expect(seen[name], JSON.stringify(seen[name])).toMatchObject({ ok: true });
  return seen[name].value;
}

const sentTo = (u: AnthropicUpstream) => u.requests.map((r) => r.body!);
const FIRST_USAGE = { prompt_tokens: 168, completion_tokens: 30, total_tokens: 198, prompt_tokens_details: { cached_tokens: 40 } };

describe('openai-python on chat completions answered by an Anthropic backend', () => {
  it('a whole tool round trip: the toolu_ call parsed, sent back as a tool_result, usage as the backend reported', async () => {
    const r = value('round_trip');
    expect(r).toMatchObject({ finish: 'tool_calls', finish2: 'stop', answer: 'It is 18°C and sunny in Paris.', usage: FIRST_USAGE });
    expect(r.id).toMatch(/^chatcmpl-/);
    expect(r.call).toMatchObject({ id: 'toolu_weather_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } });
    const [first, second] = sentTo(claude);
    expect(first).toMatchObject({ model: 'upstream-claude', max_tokens: 300, system: 'Be brief.' });
    expect(second!['messages'].slice(1)).toEqual([
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Let me check.' },
          { type: 'tool_use', id: 'toolu_weather_1', name: 'get_weather', input: { city: 'Paris' } },
        ],
      },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_weather_1', content: '18°C, sunny' }] },
    ]);
    expect(await gw.record(String(claude.requests[0]!.headers['x-request-id']))).toMatchObject({ status: 200, ...recordedClaude(0) });
  });

  it('stream=True with include_usage: text, the tool call assembled from its pieces, the usage chunk', () => {
    const s = value('stream');
    expect(s).toMatchObject({ text: 'Let me check.', usage: FIRST_USAGE });
    expect(s.calls).toEqual([{ id: 'toolu_weather_1', name: 'get_weather', arguments: '{"city":"Paris"}' }]);
    expect(s.chunks).toBeGreaterThan(3);
  });

  it('chat.completions.parse with a pydantic model: sent as output_config.format, parsed by the SDK', () => {
    expect(value('parse')).toEqual({ parsed: { city: 'Paris', celsius: 18 }, refusal: null });
    expect(sentTo(structured)[0]!['output_config'].format).toMatchObject({ type: 'json_schema', schema: { required: ['city', 'celsius'] } });
  });

  it('the stream helper with a pydantic response_format: content.done and the final completion parsed', () => {
    expect(value('parse_stream')).toEqual({ done: [{ city: 'Paris', celsius: 18 }], parsed: { city: 'Paris', celsius: 18 } });
    expect(structured.requests[1]!.body).toMatchObject({ stream: true, output_config: { format: { type: 'json_schema' } } });
  });

  it.each(['stream_helper', 'beta_stream_helper'])('%s: get_final_completion with a strict pydantic tool, its arguments parsed', (name) => {
    const s = value(name);
    expect(s).toMatchObject({
      content: 'Let me check.',
      finish: 'tool_calls',
      call_id: 'toolu_weather_1',
      parsed_arguments: { city: 'Paris' },
      usage: FIRST_USAGE,
    });
    expect(s.types).toEqual(expect.arrayContaining(['content.delta', 'tool_calls.function.arguments.done', 'chunk']));
    const tools = sentTo(claude).filter((b) => b['tools']?.[0]?.strict === true);
    expect(tools, 'both helpers sent the strict tool').toHaveLength(2);
    expect(tools[0]!['tools'][0].input_schema).toMatchObject({ additionalProperties: false, required: ['city'] });
  });

  it("Anthropic's 429 retold: RateLimitError with retry-after, and the SDK's retry gets the answer", () => {
    expect(seen['throttled']).toMatchObject({
      ok: false,
      error: 'RateLimitError',
      status: 429,
      retry_after: '0',
      message: expect.stringContaining('from the fake'),
    });
    expect(value('retried')).toBe('It is 18°C and sunny in Paris.');
    expect(throttled.requests).toHaveLength(3);
  });

  it('n=2 refused as BadRequestError naming the parameter, no backend asked', () => {
    expect(seen['n2']).toMatchObject({ ok: false, error: 'BadRequestError', status: 400, param: 'n' });
    expect(claude.requests).toHaveLength(5); // the round trip's two, the stream's and the two helpers'
  });

  it('a stream the backend cuts raises APIError from the iterator', () => {
    expect(seen['cut']).toMatchObject({ ok: false, error: 'APIError' });
    expect(cut.requests).toHaveLength(1);
  });
});
