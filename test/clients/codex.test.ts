// Codex CLI, a real coding agent, through the gateway: `codex exec` with a model provider at the gateway's /v1
// finishes a two-turn task against a scripted Responses upstream. Turn 1 is Codex's own free-form `apply_patch`
// tool (offered for models it knows) adding a file; turn 2, after Codex sends the patch's output, is the answer.
// Codex is strict about the stream (it needs the `event:` lines and response.completed), so a gateway that
// reshapes or buffers the events wrongly fails here, as would one that loses the custom tool call items.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScriptedResponsesUpstream, type ScriptedResponsesUpstream, type ScriptedTurn } from '../fakes/scripted-responses-upstream.js';
import { startGateway, type TestGateway, keyManifests } from '../helpers/gateway.js';
import { killAgents } from '../support/agent-process.js';
import { type CodexRun, runCodex, runReport } from '../support/codex.js';
import { waitUntil } from '../support/wait.js';

const CLIENT_KEY = 'sk-codex-client-key-0123456789';
const UPSTREAM_KEY = 'sk-codex-upstream-key-abcdef';
// A model Codex knows, so it offers apply_patch; the upstream is asked for another name, which proves the route.
const MODEL = 'gpt-5.5';
const CONTENT = 'written by codex through the gateway\n';
const PATCH = `*** Begin Patch\n*** Add File: hello.txt\n+${CONTENT}*** End Patch\n`;
const ANSWER = 'I added hello.txt.';

const turns: ScriptedTurn[] = [
  {
    output: [{ type: 'custom_tool_call', name: 'apply_patch', callId: 'call_patch_1', input: PATCH }],
    usage: { inputTokens: 4123, cachedInputTokens: 1024, outputTokens: 57, reasoningTokens: 12 },
  },
  {
    output: [{ type: 'message', text: ANSWER }],
    usage: { inputTokens: 4310, cachedInputTokens: 4096, outputTokens: 9, reasoningTokens: 0 },
  },
];

const manifests = (upstreamBaseURL: string) => `
apiVersion: v1
kind: Secret
metadata: {name: upstream}
stringData: {apiKey: ${UPSTREAM_KEY}}
---
apiVersion: modelgateway.io/v1alpha1
kind: ModelRoute
metadata: {name: codex-model}
spec:
  model: ${MODEL}
  endpoints: [responses]
  backends:
  - {name: scripted, baseURL: "${upstreamBaseURL}", apiKeySecretRef: {name: upstream, key: apiKey}, model: upstream-codex}
---
${keyManifests(CLIENT_KEY, [MODEL], { group: 'coders', token: 'codex' })}`;

let upstream: ScriptedResponsesUpstream;
let gw: TestGateway;
let dir: string;
let run: CodexRun;

beforeAll(async () => {
  upstream = await startScriptedResponsesUpstream(turns);
  gw = await startGateway(manifests(upstream.baseURL));
  dir = mkdtempSync(join(tmpdir(), 'mg-codex-'));
  run = await runCodex({ dir, baseURL: gw.baseURL, apiKey: CLIENT_KEY, model: MODEL, prompt: 'Create hello.txt, then tell me what you did.' });
}, 180_000);

afterAll(async () => {
  killAgents();
  await gw?.close();
  await upstream?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const failure = () => runReport(run);

describe('Codex CLI through the gateway', () => {
  it('completes the task: the patch was applied in its workdir and the final answer printed', () => {
    // The file is the proof; the exit code alone is not (a read-only sandbox refuses the patch and still exits 0).
    const file = join(run.workdir, 'hello.txt');
    expect(existsSync(file), failure()).toBe(true);
    expect(readFileSync(file, 'utf8')).toBe(CONTENT);
    expect(run.stdout.trim(), failure()).toBe(ANSWER);
    expect(run.code, failure()).toBe(0);
  });

  it('the upstream saw two streamed turns with the upstream key and the upstream model name, the second with the whole history', () => {
    expect(upstream.requests.map((r) => `${r.method} ${r.path}`)).toEqual(['POST /v1/responses', 'POST /v1/responses']);
    for (const r of upstream.requests) {
      expect(r.headers['authorization']).toBe(`Bearer ${UPSTREAM_KEY}`);
      expect(r.body).toMatchObject({ model: 'upstream-codex', stream: true, store: false });
    }
    const [first, second] = upstream.requests.map((r) => r.body['input'] as Record<string, any>[]);
    expect(first!.some((i) => i['role'] === 'developer')).toBe(true);
    // Stateless (store: false): turn 2 repeats turn 1's input, then the call and its output.
    expect(second!.slice(0, first!.length)).toEqual(first);
    const rest = second!.slice(first!.length);
    expect(rest[0]).toMatchObject({ type: 'custom_tool_call', call_id: 'call_patch_1', name: 'apply_patch', input: PATCH });
    expect(rest[1]).toMatchObject({ type: 'custom_tool_call_output', call_id: 'call_patch_1' });
    expect(JSON.stringify(rest[1])).toContain('hello.txt');
  });

  it("each turn's access-log usage is exactly what the upstream reported", async () => {
    const lines = await waitUntil(
      () => {
        const found = gw.logs.filter((l) => l['msg'] === 'request' && l['family'] === 'responses');
        return found.length === 2 ? found : undefined;
      },
      10_000,
      'two responses access lines',
    );
    const byId = new Map(lines.map((l) => [l['reqId'], l]));
    upstream.requests.forEach((r, i) => {
      const line = byId.get(r.headers['x-request-id']);
      expect(line, `the access line of turn ${i + 1}`).toBeDefined();
      const u = turns[i]!.usage;
      expect(line).toMatchObject({
        status: 200,
        model: MODEL,
        tokenRef: 'default/codex',
        estimated: false,
        inputTokens: u.inputTokens,
        cachedInputTokens: u.cachedInputTokens,
        outputTokens: u.outputTokens,
        reasoningTokens: u.reasoningTokens,
      });
    });
    expect(gw.logText()).not.toContain(CLIENT_KEY);
  });
});
