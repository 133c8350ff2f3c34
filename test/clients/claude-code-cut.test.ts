// Claude Code when the upstream drops its stream mid-answer, through the gateway: the gateway ends the stream with an
// Anthropic `error` event (api_error), and Claude Code must take it as the retryable failure it is, as it takes a
// stream Anthropic drops, and still finish the task, on a native backend (the events relayed) and a translated one.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AnthropicUpstream, startAnthropicUpstream } from '../fakes/anthropic-upstream.js';
import { type ScriptedChatUpstream, startScriptedChatUpstream } from '../fakes/scripted-chat-upstream.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { KEYS, messagesManifests } from '../messages/manifests.js';
import { killAgents } from '../support/agent-process.js';
import { type ClaudeCodeRun, runClaudeCode } from '../support/claude-code.js';

const ANSWER = 'All done, nothing was lost.';

let anthropic: AnthropicUpstream;
let chat: ScriptedChatUpstream;
let gw: TestGateway;
let dir: string;

beforeAll(async () => {
  // Every streamed try of the turn is cut after its first text; an unstreamed one gets the whole answer.
  // Claude Code's prompt is mostly served from the prompt cache, as message_start says before the cut.
  anthropic = await startAnthropicUpstream([
    {
      content: [{ type: 'text', text: ANSWER }],
      stop_reason: 'end_turn',
      cut: true,
      usage: { input_tokens: 3, output_tokens: 8, cache_read_input_tokens: 4000, cache_creation_input_tokens: 100 },
    },
  ]);
  chat = await startScriptedChatUpstream([{ text: ANSWER, finish: 'stop', cut: true, usage: { prompt_tokens: 50, completion_tokens: 8, cached_tokens: 0 } }]);
  gw = await startGateway(messagesManifests({ anthropic: anthropic.baseURL, chat: chat.baseURL }));
  dir = mkdtempSync(join(tmpdir(), 'mg-claude-cut-'));
}, 30_000);

afterAll(async () => {
  killAgents();
  await gw?.close();
  await Promise.all([anthropic?.close(), chat?.close()]);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe.each([
  ['native', 'claude-native'],
  ['translated', 'claude-translated'],
] as const)('Claude Code and a stream cut mid-answer, %s backend', (kind, model) => {
  let r: ClaudeCodeRun;
  let seen: { stream: unknown }[];
  let ids: string[];

  beforeAll(async () => {
    const requests = () =>
      kind === 'native' ? anthropic.requests.filter((q) => q.path.startsWith('/v1/messages?') || q.path === '/v1/messages') : chat.requests;
    const before = requests().length;
    rmSync(join(dir, 'home'), { recursive: true, force: true });
    rmSync(join(dir, 'work'), { recursive: true, force: true });
    r = await runClaudeCode({ dir, baseURL: gw.origin, key: KEYS.alice, model, prompt: 'Finish the job.', timeoutMs: 20_000 });
    seen = requests()
      .slice(before)
      .map((q) => ({ stream: q.body?.['stream'] }));
    ids = requests()
      .slice(before)
      .map((q) => String(q.headers['x-request-id']));
  }, 30_000);

  it('finishes with the whole answer after the cut stream', () => {
    const why = `claude exited ${r.code} after ${r.ms} ms\nstdout:\n${r.stdout}\nstderr:\n${r.stderr}\nupstream saw: ${JSON.stringify(seen)}`;
    expect(r.output, why).toMatchObject({ type: 'result', subtype: 'success', is_error: false, result: ANSWER });
    expect(r.code).toBe(0);
    // Claude Code's way with a failed stream: the same step again, unstreamed, which the fakes answer whole.
    expect(seen.map((q) => q.stream === true)).toEqual([true, false]);
  });

  it("records the cut attempt's usage with what the upstream had reported of it, estimated only beyond that", async () => {
    const [cut, retry] = await Promise.all(ids.map((id) => gw.record(id)));
    if (kind === 'native') {
      // message_start's counts are the upstream's own, cache reads included: they stand, not an estimate of the prompt.
      expect(cut).toMatchObject({ inputTokens: 4103, cachedInputTokens: 4000, cacheWriteInputTokens: 100, estimated: true });
      expect(retry).toMatchObject({ inputTokens: 4103, cachedInputTokens: 4000, outputTokens: 8, estimated: false });
    } else {
      // A chat stream reports nothing before its end: the estimate is all there is.
      expect(cut).toMatchObject({ estimated: true });
      expect(retry).toMatchObject({ inputTokens: 50, outputTokens: 8, estimated: false });
    }
    expect(cut!['outputTokens']).toBeGreaterThan(0);
  });
});
