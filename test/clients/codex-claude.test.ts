// Codex CLI through the gateway to a model served by Anthropic's Messages API (api: anthropic): Codex speaks nothing
// but the Responses API, the fake backend nothing but Anthropic's Messages API. The request goes through chat to the
// Messages API and the answer back both steps: Codex calls its shell tool (exec_command) on the toolu_ id the
// backend gave, runs a harmless `echo`, sends the output back, which reaches the backend as a tool_result, and
// prints the scripted answer. The usage recorded is what the backend reported, cache reads and writes included.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AnthropicTurn, type AnthropicUpstream, startAnthropicUpstream } from '../fakes/anthropic-upstream.js';
import { startGateway, type TestGateway, keyManifests } from '../helpers/gateway.js';
import { killAgents } from '../support/agent-process.js';
import { type CodexRun, runCodex, runReport } from '../support/codex.js';
import { waitUntil } from '../support/wait.js';

const CLIENT_KEY = 'sk-codex-claude-client-0123456789';
const UPSTREAM_KEY = 'sk-ant-codex-upstream-abcdef';
const MODEL = 'claude-coder';
const ANSWER = 'The command printed codex-was-here.';

const turns: AnthropicTurn[] = [
  {
    content: [{ type: 'tool_use', id: 'toolu_echo_1', name: 'exec_command', input: { cmd: 'echo codex-was-here' } }],
    stop_reason: 'tool_use',
    usage: { input_tokens: 2000, output_tokens: 40, cache_read_input_tokens: 1000, cache_creation_input_tokens: 300 },
  },
  {
    content: [{ type: 'text', text: ANSWER }],
    stop_reason: 'end_turn',
    usage: { input_tokens: 200, output_tokens: 12, cache_read_input_tokens: 3000, cache_creation_input_tokens: 0 },
  },
];

const manifests = (baseURL: string) => `
apiVersion: v1
kind: Secret
metadata: {name: anthropic-key}
stringData: {key: ${UPSTREAM_KEY}}
---
apiVersion: modelgateway.io/v1alpha1
kind: ModelRoute
metadata: {name: claude-coder}
spec:
  model: ${MODEL}
  endpoints: [responses]
  backends:
  - {name: claude, api: anthropic, baseURL: "${baseURL}", model: claude-sonnet-4-5, auth: {header: {name: x-api-key, secretRef: {name: anthropic-key, key: key}}}}
---
${keyManifests(CLIENT_KEY, [MODEL], { group: 'coders', token: 'codex' })}`;

let upstream: AnthropicUpstream;
let gw: TestGateway;
let dir: string;
let run: CodexRun;

beforeAll(async () => {
  upstream = await startAnthropicUpstream(turns);
  gw = await startGateway(manifests(upstream.baseURL));
  dir = mkdtempSync(join(tmpdir(), 'mg-codex-claude-'));
  run = await runCodex({
    dir,
    baseURL: gw.baseURL,
    apiKey: CLIENT_KEY,
    model: MODEL,
    prompt: 'Run echo codex-was-here and tell me what it printed.',
    timeoutMs: 15_000,
    chatOnly: true,
  });
}, 30_000);

afterAll(async () => {
  killAgents();
  await gw?.close();
  await upstream?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const failure = () => runReport(run);

describe('Codex CLI on a Claude model (api: anthropic) through the gateway', () => {
  it('finishes the task with the scripted answer', () => {
    expect(run.stdout.trim(), failure()).toBe(ANSWER);
    expect(run.code, failure()).toBe(0);
  });

  it('the backend got Messages requests: Codex tools as Anthropic tools, its instructions as system, streamed', () => {
    expect(upstream.requests, failure()).toHaveLength(2);
    const first = upstream.requests[0]!;
    expect(first.path).toBe('/v1/messages');
    expect(first.headers['x-api-key']).toBe(UPSTREAM_KEY);
    expect(first.headers['anthropic-version']).toBe('2023-06-01');
    expect(first.body).toMatchObject({ model: 'claude-sonnet-4-5', stream: true });
    expect(typeof first.body!['max_tokens']).toBe('number');
    const tools = (first.body!['tools'] as { name: string; input_schema: unknown }[]).map((t) => t.name);
    expect(tools).toContain('exec_command');
    expect(first.body!['system']).toBeTruthy();
    expect((first.body!['messages'] as { role: string }[]).at(-1)!.role).toBe('user');
  });

  it('ran the command and sent its output back as a tool_result on the toolu_ id', () => {
    const messages = upstream.requests[1]!.body!['messages'] as Record<string, any>[];
    const call = messages.findIndex((m) => m['role'] === 'assistant' && m['content'].some?.((b: any) => b.type === 'tool_use'));
    expect(messages[call]!['content']).toContainEqual({ type: 'tool_use', id: 'toolu_echo_1', name: 'exec_command', input: { cmd: 'echo codex-was-here' } });
    const result = (messages[call + 1]!['content'] as Record<string, any>[]).find((b) => b['type'] === 'tool_result')!;
    expect(result['tool_use_id']).toBe('toolu_echo_1');
    expect(JSON.stringify(result['content'])).toContain('codex-was-here');
  });

  it('recorded the usage each turn reported, cache reads and writes included', async () => {
    const lines = await waitUntil(
      () => {
        const found = gw.logs.filter((l) => l['msg'] === 'request' && l['family'] === 'responses');
        return found.length === 2 ? found : undefined;
      },
      10_000,
      'two responses access lines',
    );
    expect(lines[0]).toMatchObject({ status: 200, inputTokens: 3300, cachedInputTokens: 1000, cacheWriteInputTokens: 300, outputTokens: 40, estimated: false });
    expect(lines[1]).toMatchObject({ status: 200, inputTokens: 3200, cachedInputTokens: 3000, outputTokens: 12, estimated: false });
  });
});
