// Codex CLI on a multi-turn task through the gateway, as a demanding user runs it: its shell tool
// (`exec_command`, a function call) runs a harmless `echo` and Codex sends the output back; reasoning items with
// encrypted content (store: false, include reasoning.encrypted_content) travel back to the upstream byte for byte;
// a 429 with retry-after on the way is retried by Codex and answered. Then two turns that fail mid-stream (the
// upstream's response.failed, and a stream the upstream drops) are retried by Codex as against OpenAI itself.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScriptedResponsesUpstream, type ScriptedResponsesUpstream, type ScriptedTurn } from '../fakes/scripted-responses-upstream.js';
import { startGateway, type TestGateway, keyManifests } from '../helpers/gateway.js';
import { killAgents } from '../support/agent-process.js';
import { type CodexRun, runCodex, runReport } from '../support/codex.js';
import { waitUntil } from '../support/wait.js';

const CLIENT_KEY = 'sk-codex-tools-client-0123456789';
const MODEL = 'gpt-5.5';
const ENC_1 = 'gAAAAB-encrypted-reasoning-one==';
const ENC_2 = 'gAAAAB-encrypted-reasoning-two==';
const ANSWER = 'The command printed codex-was-here.';
const usage = (inputTokens: number, outputTokens: number) => ({ inputTokens, cachedInputTokens: 0, outputTokens, reasoningTokens: 5 });

const turns: ScriptedTurn[] = [
  {
    output: [
      { type: 'reasoning', summary: 'I should run echo.', encryptedContent: ENC_1 },
      { type: 'function_call', name: 'exec_command', callId: 'call_echo_1', arguments: JSON.stringify({ cmd: 'echo codex-was-here' }) },
    ],
    usage: usage(3000, 40),
  },
  { output: [], usage: usage(0, 0), refuse: { status: 429, retryAfter: '1', code: 'rate_limit_exceeded', message: 'Rate limit reached, try again in 1s.' } },
  {
    output: [
      { type: 'reasoning', summary: 'The output is there.', encryptedContent: ENC_2 },
      { type: 'message', text: ANSWER },
    ],
    usage: usage(3200, 12),
  },
];

const manifests = (upstreamBaseURL: string) => `
apiVersion: modelgateway.io/v1alpha1
kind: ModelRoute
metadata: {name: codex-model}
spec:
  model: ${MODEL}
  endpoints: [responses]
  backends:
  - {name: scripted, baseURL: "${upstreamBaseURL}", model: upstream-codex}
---
${keyManifests(CLIENT_KEY, [MODEL], { group: 'coders', token: 'codex' })}`;

let upstream: ScriptedResponsesUpstream;
let gw: TestGateway;
let dir: string;
let run: CodexRun;

beforeAll(async () => {
  upstream = await startScriptedResponsesUpstream(turns);
  gw = await startGateway(manifests(upstream.baseURL));
  dir = mkdtempSync(join(tmpdir(), 'mg-codex-tools-'));
  run = await runCodex({
    dir,
    baseURL: gw.baseURL,
    apiKey: CLIENT_KEY,
    model: MODEL,
    prompt: 'Run echo codex-was-here and tell me what it printed.',
    timeoutMs: 15_000,
  });
}, 30_000);

afterAll(async () => {
  killAgents();
  await gw?.close();
  await upstream?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const failure = () => runReport(run);

describe('Codex CLI with its shell tool, reasoning and a 429 through the gateway', () => {
  it('finishes the task with the scripted answer', () => {
    expect(run.stdout.trim(), failure()).toBe(ANSWER);
    expect(run.code, failure()).toBe(0);
  });

  it('ran the command and sent its output back with the reasoning item, encrypted content intact', () => {
    expect(upstream.requests, failure()).toHaveLength(3);
    const [first, second, third] = upstream.requests.map((r) => r.body);
    expect(first).toMatchObject({ store: false, include: ['reasoning.encrypted_content'] });
    expect(second).toEqual(third);
    const rest = (third!['input'] as Record<string, any>[]).slice((first!['input'] as unknown[]).length);
    expect(rest[0]).toMatchObject({ type: 'reasoning', encrypted_content: ENC_1 });
    expect(rest[1]).toMatchObject({ type: 'function_call', call_id: 'call_echo_1', name: 'exec_command' });
    expect(rest[2]).toMatchObject({ type: 'function_call_output', call_id: 'call_echo_1' });
    expect(JSON.stringify(rest[2])).toContain('codex-was-here');
  });

  it('the 429 reached Codex with its retry-after, and every turn was logged with its usage', async () => {
    const lines = await waitUntil(
      () => {
        const found = gw.logs.filter((l) => l['msg'] === 'request' && l['family'] === 'responses');
        return found.length === 3 ? found : undefined;
      },
      10_000,
      'three responses access lines',
    );
    expect(lines.map((l) => l['status'])).toEqual([200, 429, 200]);
    expect(lines[0]).toMatchObject({ inputTokens: 3000, outputTokens: 40, estimated: false });
    expect(lines[2]).toMatchObject({ inputTokens: 3200, outputTokens: 12, estimated: false });
  });
});

// A stream that ends in response.failed (the upstream's server_error after a reasoning item): Codex retries the turn
// the way it does against OpenAI, and the gateway relays the failure as the upstream sent it, nothing appended.
describe('Codex CLI and a mid-stream response.failed through the gateway', () => {
  let up: ScriptedResponsesUpstream;
  let g: TestGateway;
  let d: string;
  let r: CodexRun;
  beforeAll(async () => {
    up = await startScriptedResponsesUpstream([
      {
        output: [{ type: 'reasoning', summary: 'Thinking.', encryptedContent: ENC_1 }],
        usage: usage(0, 0),
        failWith: { code: 'server_error', message: 'The model crashed.' },
      },
      { output: [{ type: 'message', text: ANSWER }], usage: usage(2900, 9) },
    ]);
    g = await startGateway(manifests(up.baseURL));
    d = mkdtempSync(join(tmpdir(), 'mg-codex-failed-'));
    r = await runCodex({ dir: d, baseURL: g.baseURL, apiKey: CLIENT_KEY, model: MODEL, prompt: 'Say something.', timeoutMs: 15_000 });
  }, 30_000);
  afterAll(async () => {
    await g?.close();
    await up?.close();
    if (d) rmSync(d, { recursive: true, force: true });
  });

  it('Codex retried the failed turn and printed the answer of the retry; both turns were logged', async () => {
    const why = runReport(r);
    expect(up.requests, why).toHaveLength(2);
    expect(r.stdout.trim(), why).toBe(ANSWER);
    const lines = await waitUntil(
      () => {
        const found = g.logs.filter((l) => l['msg'] === 'request' && l['family'] === 'responses');
        return found.length === 2 ? found : undefined;
      },
      10_000,
      'two responses access lines',
    );
    // The failed stream reported no usage, so its input is estimated; the retry's is the upstream's own.
    expect(lines.map((l) => [l['status'], l['estimated']])).toEqual([
      [200, true],
      [200, false],
    ]);
    expect(lines[1]).toMatchObject({ inputTokens: 2900, outputTokens: 9 });
  });
});

describe('Codex CLI and an upstream that drops a stream through the gateway', () => {
  let up: ScriptedResponsesUpstream;
  let g: TestGateway;
  let d: string;
  let r: CodexRun;
  beforeAll(async () => {
    up = await startScriptedResponsesUpstream([
      { output: [{ type: 'message', text: 'Half an ans' }], usage: usage(0, 0), cut: true },
      { output: [{ type: 'message', text: ANSWER }], usage: usage(2900, 9) },
    ]);
    g = await startGateway(manifests(up.baseURL));
    d = mkdtempSync(join(tmpdir(), 'mg-codex-cut-'));
    r = await runCodex({ dir: d, baseURL: g.baseURL, apiKey: CLIENT_KEY, model: MODEL, prompt: 'Say something.', timeoutMs: 15_000 });
  }, 30_000);
  afterAll(async () => {
    await g?.close();
    await up?.close();
    if (d) rmSync(d, { recursive: true, force: true });
  });

  // The gateway ends the cut stream with its own Responses `error` event; Codex must take it as a retryable
  // disconnect, as it takes a stream OpenAI drops, and not as a fatal answer.
  it('Codex retried the cut turn and printed the answer of the retry', () => {
    const why = runReport(r);
    expect(up.requests, why).toHaveLength(2);
    // Codex prints what streamed before the cut, then the retry's answer as its final message.
    expect(r.stdout.trim().split('\n').at(-1), why).toBe(ANSWER);
    expect(r.code, why).toBe(0);
  });
});
