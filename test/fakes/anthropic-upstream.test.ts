// The fake Anthropic upstream's answers that Claude Code does not exercise on its happy path: the unstreamed
// message (what Claude Code falls back to when a stream lacks `event:` lines), count_tokens, the turn chosen by
// the history, and errors in Anthropic's shape. The streamed path is proved by Claude Code itself
// (test/clients/claude-code-direct.test.ts).
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type AnthropicTurn, type AnthropicUpstream, countedTokens, startAnthropicUpstream } from './anthropic-upstream.js';

const turns: AnthropicTurn[] = [
  {
    content: [{ type: 'tool_use', id: 'toolu_1', name: 'Write', input: { file_path: '/tmp/x', content: 'x' } }],
    stop_reason: 'tool_use',
    usage: { input_tokens: 11, output_tokens: 7, cache_read_input_tokens: 5, cache_creation_input_tokens: 3 },
  },
  {
    content: [{ type: 'text', text: 'done' }],
    stop_reason: 'end_turn',
    usage: { input_tokens: 13, output_tokens: 2, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 },
  },
];

let upstream: AnthropicUpstream;
beforeAll(async () => {
  upstream = await startAnthropicUpstream(turns);
});
afterAll(() => upstream.close());

const post = async (path: string, body: unknown) => {
  const res = await fetch(upstream.origin + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, json: (await res.json()) as Record<string, any> };
};

it('answers unstreamed with the turn the history has reached, and records the request', async () => {
  const first = [{ role: 'user', content: 'go' }];
  const before = upstream.requests.length;
  const a = await post('/v1/messages?beta=true', { model: 'm', max_tokens: 10, messages: first });
  expect(a).toEqual({
    status: 200,
    json: {
      id: 'msg_fake_1',
      type: 'message',
      role: 'assistant',
      model: 'm',
      content: turns[0]!.content,
      stop_reason: 'tool_use',
      stop_sequence: null,
      usage: turns[0]!.usage,
    },
  });
  const second = [
    ...first,
    { role: 'assistant', content: turns[0]!.content },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'ok' }] },
  ];
  expect((await post('/v1/messages', { model: 'm', max_tokens: 10, messages: second })).json).toMatchObject({
    content: [{ type: 'text', text: 'done' }],
    usage: turns[1]!.usage,
  });
  expect(upstream.requests.slice(before).map((r) => r.path)).toEqual(['/v1/messages?beta=true', '/v1/messages']);
  const past = [...second, { role: 'assistant', content: 'done' }, { role: 'user', content: 'more' }];
  expect(await post('/v1/messages', { model: 'm', max_tokens: 10, messages: past })).toMatchObject({
    status: 400,
    json: { type: 'error', error: { type: 'invalid_request_error' } },
  });
});

it('counts tokens, and answers any other path 404 in Anthropic error shape', async () => {
  const body = { model: 'm', messages: [{ role: 'user', content: 'count me' }] };
  expect(await post('/v1/messages/count_tokens', body)).toEqual({ status: 200, json: { input_tokens: countedTokens(body) } });
  expect(countedTokens(body)).toBeGreaterThan(0);
  expect(await post('/v1/complete', {})).toMatchObject({ status: 404, json: { type: 'error', error: { type: 'not_found_error' } } });
});
