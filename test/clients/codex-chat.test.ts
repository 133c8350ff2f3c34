// Codex CLI through the gateway to a model served by chat completions only (api: chatCompletions): Codex speaks
// nothing but the Responses API, the fake backend nothing but chat completions. Codex calls its shell tool
// (exec_command, a function tool), runs a harmless `echo`, sends the output back and prints the scripted answer; the
// backend sees chat completions requests carrying Codex's tools, its developer instructions as system messages, and
// the call and its output as tool_calls and a tool message; the usage recorded is what the backend reported. Codex's
// multi-agent tools (a `namespace`) are left in its config: the backend gets them flattened, `multi_agent_v1__<tool>`,
// and a call of one comes back to Codex as the namespaced call it offered, which it runs and answers. With Codex's
// default config, its web_search tool is refused by name, with the config line that leaves it out, as
// docs/coding-agents.md says.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ChatTurn, type ScriptedChatUpstream, startScriptedChatUpstream } from '../fakes/scripted-chat-upstream.js';
import { startGateway, type TestGateway, keyManifests } from '../helpers/gateway.js';
import { killAgents } from '../support/agent-process.js';
import { type CodexRun, runCodex, runReport } from '../support/codex.js';
import { waitUntil } from '../support/wait.js';

const CLIENT_KEY = 'sk-codex-chat-client-0123456789';
const MODEL = 'local-coder';
const ANSWER = 'The command printed codex-was-here.';

const turns: ChatTurn[] = [
  {
    reasoning: 'I should run echo.',
    toolCalls: [{ id: 'call_echo_1', name: 'exec_command', arguments: JSON.stringify({ cmd: 'echo codex-was-here' }) }],
    finish: 'tool_calls',
    usage: { prompt_tokens: 3000, completion_tokens: 40, cached_tokens: 1000, reasoning_tokens: 8 },
  },
  { text: ANSWER, finish: 'stop', usage: { prompt_tokens: 3200, completion_tokens: 12, cached_tokens: 2900 } },
];

const manifests = (upstreamBaseURL: string) => `
apiVersion: modelgateway.io/v1alpha1
kind: ModelRoute
metadata: {name: local-coder}
spec:
  model: ${MODEL}
  endpoints: [responses]
  backends:
  - {name: llama, api: chatCompletions, baseURL: "${upstreamBaseURL}", model: qwen-coder}
---
${keyManifests(CLIENT_KEY, [MODEL], { group: 'coders', token: 'codex' })}`;

let upstream: ScriptedChatUpstream;
let gw: TestGateway;
let dir: string;
let run: CodexRun;

beforeAll(async () => {
  upstream = await startScriptedChatUpstream(turns);
  gw = await startGateway(manifests(upstream.baseURL));
  dir = mkdtempSync(join(tmpdir(), 'mg-codex-chat-'));
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

describe('Codex CLI on a chat completions model through the gateway', () => {
  it('finishes the task with the scripted answer', () => {
    expect(run.stdout.trim(), failure()).toBe(ANSWER);
    expect(run.code, failure()).toBe(0);
  });

  it('the backend got chat completions: Codex tools as functions, its instructions as system messages, streamed with usage', () => {
    expect(upstream.requests, failure()).toHaveLength(2);
    const first = upstream.requests[0]!;
    expect(first.path).toBe('/v1/chat/completions');
    expect(first.body).toMatchObject({ model: 'qwen-coder', stream: true, stream_options: { include_usage: true }, tool_choice: 'auto' });
    const tools = (first.body['tools'] as { type: string; function: { name: string } }[]).map((t) => `${t.type}:${t.function.name}`);
    expect(tools).toContain('function:exec_command');
    // The multi-agent namespace, flattened: each tool under a name that carries the namespace.
    expect(tools).toEqual(expect.arrayContaining(['function:multi_agent_v1__spawn_agent', 'function:multi_agent_v1__close_agent']));
    expect(tools.some((t) => !/^function:[a-zA-Z0-9_-]{1,64}$/.test(t))).toBe(false);
    const roles = (first.body['messages'] as { role: string }[]).map((m) => m.role);
    expect(roles[0]).toBe('system');
    expect(roles.at(-1)).toBe('user');
    expect(roles).not.toContain('developer');
  });

  it('ran the command and sent its output back as a tool message after the call', () => {
    const messages = upstream.requests[1]!.body['messages'] as Record<string, any>[];
    const call = messages.findIndex((m) => m['role'] === 'assistant' && m['tool_calls']);
    expect(messages[call]!['tool_calls']).toEqual([
      { id: 'call_echo_1', type: 'function', function: { name: 'exec_command', arguments: JSON.stringify({ cmd: 'echo codex-was-here' }) } },
    ]);
    expect(messages[call + 1]).toMatchObject({ role: 'tool', tool_call_id: 'call_echo_1' });
    expect(messages[call + 1]!['content']).toContain('codex-was-here');
  });

  it('recorded the usage each turn reported', async () => {
    const lines = await waitUntil(
      () => {
        const found = gw.logs.filter((l) => l['msg'] === 'request' && l['family'] === 'responses');
        return found.length === 2 ? found : undefined;
      },
      10_000,
      'two responses access lines',
    );
    expect(lines[0]).toMatchObject({ status: 200, inputTokens: 3000, cachedInputTokens: 1000, outputTokens: 40, reasoningTokens: 8, estimated: false });
    expect(lines[1]).toMatchObject({ status: 200, inputTokens: 3200, cachedInputTokens: 2900, outputTokens: 12, estimated: false });
  });
});

describe('Codex CLI with its default config on a chat completions model', () => {
  let d: string;
  let r: CodexRun;
  const before = () => upstream.requests.length;
  let sent: number;
  beforeAll(async () => {
    sent = before();
    d = mkdtempSync(join(tmpdir(), 'mg-codex-chat-default-'));
    r = await runCodex({ dir: d, baseURL: gw.baseURL, apiKey: CLIENT_KEY, model: MODEL, prompt: 'Say hi.', timeoutMs: 15_000 });
  }, 30_000);
  afterAll(() => {
    if (d) rmSync(d, { recursive: true, force: true });
  });

  it('is told that its web_search tool cannot be offered to this model, and how to leave it out; nothing reaches the backend', () => {
    const why = runReport(r);
    expect(r.code, why).not.toBe(0);
    expect(r.stderr, why).toContain('web_search = \\"disabled\\"');
    expect(r.stderr, why).not.toContain('(`namespace`)');
    expect(upstream.requests.length).toBe(sent);
  });
});

describe('Codex CLI calling one of its multi-agent tools through a chat completions model', () => {
  const CLOSED = 'Closing agent-nobody answered.';
  const closeCall = { id: 'call_close_1', name: 'multi_agent_v1__close_agent', arguments: JSON.stringify({ target: 'agent-nobody' }) };
  let multi: ScriptedChatUpstream;
  let mgw: TestGateway;
  let d: string;
  let r: CodexRun;
  beforeAll(async () => {
    multi = await startScriptedChatUpstream([
      { toolCalls: [closeCall], finish: 'tool_calls', usage: { prompt_tokens: 3000, completion_tokens: 20, cached_tokens: 0 } },
      { text: CLOSED, finish: 'stop', usage: { prompt_tokens: 3100, completion_tokens: 6, cached_tokens: 0 } },
    ]);
    mgw = await startGateway(manifests(multi.baseURL));
    d = mkdtempSync(join(tmpdir(), 'mg-codex-chat-ns-'));
    r = await runCodex({
      dir: d,
      baseURL: mgw.baseURL,
      apiKey: CLIENT_KEY,
      model: MODEL,
      prompt: 'Close the agent agent-nobody.',
      timeoutMs: 15_000,
      chatOnly: true,
    });
  }, 30_000);
  afterAll(async () => {
    await mgw?.close();
    await multi?.close();
    if (d) rmSync(d, { recursive: true, force: true });
  });

  it("runs the namespaced call and sends it back with its namespace: the backend gets the call under the name it offered, and close_agent's output", () => {
    const why = `${runReport(r)}\nrequests: ${JSON.stringify(multi.requests.at(-1)?.body['messages']?.slice(-2))}`;
    expect(r.stdout.trim(), why).toBe(CLOSED);
    expect(multi.requests, why).toHaveLength(2);
    const messages = multi.requests[1]!.body['messages'] as Record<string, any>[];
    const call = messages.findIndex((m) => m['role'] === 'assistant' && m['tool_calls']);
    expect(messages[call]!['tool_calls'], why).toEqual([
      { id: closeCall.id, type: 'function', function: { name: closeCall.name, arguments: closeCall.arguments } },
    ]);
    expect(messages[call + 1], why).toMatchObject({ role: 'tool', tool_call_id: closeCall.id });
    // close_agent's own answer (the id is not one of its agents): Codex ran the call as the namespaced tool it offered.
    expect(messages[call + 1]!['content'], why).toContain('invalid agent id agent-nobody');
  });
});
