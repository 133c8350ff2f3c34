// Claude Code, the real agent, through the gateway: ANTHROPIC_BASE_URL is the gateway's origin, the key is a
// gateway key (in x-api-key as ANTHROPIC_API_KEY, or as a bearer token as ANTHROPIC_AUTH_TOKEN), and --model names a
// route. The scripted task (as in claude-code-direct.test.ts): turn 1 is a tool_use of Claude Code's Write tool
// creating a file, turn 2 (after Claude Code sends the tool_result) the final answer. Played by a fake Anthropic
// upstream behind a native backend (the body passes through), and by a fake chat completions upstream behind a
// translated one (the tool call and the answer translated both ways, streamed), and by the fakes of Claude on Amazon
// Bedrock (InvokeModel, SigV4-signed; its event stream decoded into SSE) and on Vertex AI (rawPredict, a Google access
// token) behind cloud backends. The upstreams get the gateway's upstream credentials only, and the usage the gateway
// records for each request is what the upstream reported.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AnthropicTurn, type AnthropicUpstream, startAnthropicUpstream } from '../fakes/anthropic-upstream.js';
import { type BedrockClaude, startBedrockClaude } from '../fakes/bedrock-claude.js';
import { type GoogleServiceAccount, startGoogleServiceAccount } from '../fakes/google-service-account.js';
import { type ChatTurn, type ScriptedChatUpstream, startScriptedChatUpstream } from '../fakes/scripted-chat-upstream.js';
import { startVertexClaude, type VertexClaude } from '../fakes/vertex-claude.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { KEYS, messagesManifests } from '../messages/manifests.js';
import { killAgents } from '../support/agent-process.js';
import { type ClaudeCodeRun, claudeWorkdir, runClaudeCode } from '../support/claude-code.js';
import { waitUntil } from '../support/wait.js';

const CONTENT = 'written by claude code through the gateway\n';
const ANSWER = 'I created hello.txt.';
const PROMPT = 'Create hello.txt, then tell me what you did.';

type Auth = 'x-api-key' | 'bearer';
type Kind = 'native' | 'translated' | 'bedrock' | 'vertex';
const AWS = { accessKeyId: 'AKIAEXAMPLECLAUDECODE', secretAccessKey: 'claude/code/test/secret/key/0123456789ab' };

interface Run {
  readonly run: ClaudeCodeRun;
  /** The file's content after the run ('' when it was not written). */
  readonly file: string;
}

let anthropic: AnthropicUpstream;
let chat: ScriptedChatUpstream;
let google: GoogleServiceAccount;
let bedrock: BedrockClaude;
let vertex: VertexClaude;
let gw: TestGateway;

/** The Write-then-answer turns for a run in `dir`, in each upstream's API. */
function anthropicTurns(file: string): AnthropicTurn[] {
  return [
    {
      content: [
        { type: 'text', text: 'Creating the file.' },
        { type: 'tool_use', id: 'toolu_gw_write_1', name: 'Write', input: { file_path: file, content: CONTENT } },
      ],
      stop_reason: 'tool_use',
      usage: { input_tokens: 3120, output_tokens: 48, cache_read_input_tokens: 2048, cache_creation_input_tokens: 512 },
    },
    {
      content: [{ type: 'text', text: ANSWER }],
      stop_reason: 'end_turn',
      usage: { input_tokens: 210, output_tokens: 9, cache_read_input_tokens: 3680, cache_creation_input_tokens: 64 },
    },
  ];
}

function chatTurns(file: string): ChatTurn[] {
  return [
    {
      text: 'Creating the file.',
      toolCalls: [{ id: 'call_gw_write_1', name: 'Write', arguments: JSON.stringify({ file_path: file, content: CONTENT }) }],
      finish: 'tool_calls',
      usage: { prompt_tokens: 5210, completion_tokens: 51, cached_tokens: 4096 },
    },
    { text: ANSWER, finish: 'stop', usage: { prompt_tokens: 5420, completion_tokens: 8, cached_tokens: 5120 } },
  ];
}

// One workdir (so one file path) for every run: the fakes' scripts name it; each run starts with it empty.
let workRoot: string;

beforeAll(async () => {
  workRoot = mkdtempSync(join(tmpdir(), 'mg-claude-gw-'));
  const file = join(claudeWorkdir(workRoot), 'hello.txt');
  anthropic = await startAnthropicUpstream(anthropicTurns(file));
  chat = await startScriptedChatUpstream(chatTurns(file));
  google = await startGoogleServiceAccount();
  bedrock = await startBedrockClaude({ region: 'us-west-2', credentials: AWS, turns: anthropicTurns(file) });
  vertex = await startVertexClaude({
    basePath: '/v1/projects/my-project/locations/us-east5/publishers/anthropic/models',
    validToken: (t) => google.tokens.valid(t),
    turns: anthropicTurns(file),
  });
  gw = await startGateway(
    messagesManifests({
      anthropic: anthropic.baseURL,
      chat: chat.baseURL,
      clouds: { aws: AWS, googleKeyJson: google.keyJson },
      extra: { 'claude-x-bedrock': ['bedrock', bedrock.origin], 'claude-x-vertex': ['vertex', vertex.baseURL] },
    }),
  );
}, 30_000);

afterAll(async () => {
  killAgents();
  await gw?.close();
  await Promise.all([anthropic, chat, bedrock, vertex].map((u) => u?.close()));
  await google?.close();
  if (workRoot) rmSync(workRoot, { recursive: true, force: true });
});

/** Runs Claude Code through the gateway in the shared workdir, emptied first, and reads the file it wrote. */
async function runThrough(model: string, auth: Auth): Promise<Run> {
  const file = join(claudeWorkdir(workRoot), 'hello.txt');
  rmSync(join(workRoot, 'home'), { recursive: true, force: true });
  rmSync(claudeWorkdir(workRoot), { recursive: true, force: true });
  const run = await runClaudeCode({ dir: workRoot, baseURL: gw.origin, key: KEYS.alice, auth, model, prompt: PROMPT });
  return { run, file: existsSync(file) ? readFileSync(file, 'utf8') : '' };
}

const failure = (r: ClaudeCodeRun) => `claude exited ${r.code} after ${r.ms} ms\nstdout:\n${r.stdout}\nstderr:\n${r.stderr}`;

/** The access lines of the messages requests an upstream saw, in its order (by the x-request-id the gateway sent). */
async function accessLinesOf(requests: { headers: Record<string, unknown> }[]): Promise<Record<string, unknown>[]> {
  const ids = requests.map((r) => r.headers['x-request-id']);
  return waitUntil(
    () => {
      const lines = ids.map((id) => gw.logs.find((l) => l['msg'] === 'request' && l['reqId'] === id));
      return lines.every(Boolean) ? (lines as Record<string, unknown>[]) : undefined;
    },
    10_000,
    'the access lines of the upstream requests',
  );
}

interface Seen {
  /** Method and path (with its query) as the upstream got them. */
  readonly line: string;
  readonly headers: Record<string, unknown>;
  readonly body: Record<string, any> | undefined;
}

const MODEL_PATH = '/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/invoke-with-response-stream';
const VERTEX_PATH = '/v1/projects/my-project/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5@20250929:streamRawPredict';

/** Each upstream kind: what it saw, the request line of each step, and what each request must carry for that upstream. */
const UPSTREAMS: Record<Kind, { seen: () => Seen[]; line: string; check: (q: Seen) => void }> = {
  native: {
    seen: () => anthropic.requests.map((q) => ({ line: `${q.method} ${q.path}`, headers: q.headers, body: q.body })),
    line: 'POST /v1/messages?beta=true',
    check: (q) => {
      expect(q.headers).toMatchObject({ 'x-api-key': KEYS.anthropicUpstream, 'anthropic-version': '2023-06-01' });
      expect(q.headers['authorization']).toBeUndefined();
      expect(q.headers['anthropic-beta']).toContain('claude-code-');
      expect(q.body).toMatchObject({ model: 'upstream-claude', stream: true });
    },
  },
  translated: {
    seen: () => chat.requests.map((q) => ({ line: `${q.method} ${q.path}`, headers: q.headers, body: q.body })),
    line: 'POST /v1/chat/completions',
    check: (q) => {
      expect(q.headers['authorization']).toBe(`Bearer ${KEYS.chatUpstream}`);
      expect(q.body).toMatchObject({ model: 'upstream-chat-model', stream: true, stream_options: { include_usage: true } });
    },
  },
  bedrock: {
    seen: () => bedrock.requests.map((q) => ({ line: `POST ${q.url}`, headers: q.headers, body: q.body })),
    line: `POST ${MODEL_PATH}`,
    // Signed (the fake verified it); the model and stream are the path's. Claude Code's betas are dropped (the route
    // allows none), since Bedrock, like its fake, refuses a flag the model does not support.
    check: (q) => {
      expect(q.headers['authorization']).toMatch(new RegExp(`^AWS4-HMAC-SHA256 Credential=${AWS.accessKeyId}/`));
      expect(q.headers['anthropic-beta']).toBeUndefined();
      expect(q.body!['anthropic_beta']).toBeUndefined();
      expect(q.body).toMatchObject({ anthropic_version: 'bedrock-2023-05-31' });
    },
  },
  vertex: {
    seen: () => vertex.requests.map((q) => ({ line: `POST ${q.url}`, headers: q.headers, body: q.body })),
    line: `POST ${VERTEX_PATH}`,
    check: (q) => {
      expect(q.headers['authorization']).toMatch(/^Bearer ya29\.fake-/);
      expect(q.headers['anthropic-beta']).toContain('claude-code-');
      expect(q.body).toMatchObject({ anthropic_version: 'vertex-2023-10-16', stream: true });
    },
  },
};

describe.each([
  ['native', 'claude-native', 'x-api-key'],
  ['native', 'claude-native', 'bearer'],
  ['translated', 'claude-translated', 'x-api-key'],
  ['translated', 'claude-translated', 'bearer'],
  ['bedrock', 'claude-x-bedrock', 'x-api-key'],
  ['vertex', 'claude-x-vertex', 'bearer'],
] as const)('Claude Code through the gateway, %s backend, key as %s', (kind, model, auth) => {
  let r: Run;
  let seen: Seen[];

  beforeAll(async () => {
    const before = UPSTREAMS[kind].seen().length;
    r = await runThrough(model, auth);
    seen = UPSTREAMS[kind].seen().slice(before);
  }, 180_000);

  it('completes the task: the file is written and the JSON result is the scripted answer', () => {
    expect(r.file, failure(r.run)).toBe(CONTENT);
    expect(r.run.output, failure(r.run)).toMatchObject({ type: 'result', subtype: 'success', is_error: false, result: ANSWER, num_turns: 2 });
    expect(r.run.code).toBe(0);
  });

  it("the upstream got two streamed requests with the gateway's upstream credential, never the client key", () => {
    expect(seen.map((q) => q.line)).toEqual([UPSTREAMS[kind].line, UPSTREAMS[kind].line]);
    for (const q of seen) {
      expect(JSON.stringify(q.headers)).not.toContain(KEYS.alice);
      UPSTREAMS[kind].check(q);
    }
    // The second request carries the tool call and its result.
    const history = JSON.stringify(seen[1]!.body!['messages']);
    expect(history).toContain(kind === 'translated' ? 'call_gw_write_1' : 'toolu_gw_write_1');
  });

  it('the usage recorded for each request is what the upstream reported', async () => {
    const lines = await accessLinesOf(seen);
    lines.forEach((line, i) => {
      if (kind !== 'translated') {
        const u = anthropicTurns('')[i]!.usage;
        expect(line).toMatchObject({
          status: 200,
          family: 'messages',
          model,
          tokenRef: 'default/alice',
          estimated: false,
          inputTokens: u.input_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens,
          cachedInputTokens: u.cache_read_input_tokens,
          cacheWriteInputTokens: u.cache_creation_input_tokens,
          outputTokens: u.output_tokens,
        });
      } else {
        const u = chatTurns('')[i]!.usage;
        expect(line).toMatchObject({
          status: 200,
          family: 'messages',
          model,
          tokenRef: 'default/alice',
          estimated: false,
          inputTokens: u.prompt_tokens,
          cachedInputTokens: u.cached_tokens,
          outputTokens: u.completion_tokens,
        });
      }
    });
    expect(gw.logText()).not.toContain(KEYS.alice);
  });
});
