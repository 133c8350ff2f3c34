// Claude Code, the real agent, against the fake Anthropic upstream directly (no gateway): proves the harness
// (test/support/claude-code.ts) and the fake (test/fakes/anthropic-upstream.ts) before the gateway is put between
// them. The scripted task: turn 1 is a tool_use of Claude Code's Write tool creating a file, turn 2 (after Claude
// Code sends the tool_result) the final answer. It runs with non-essential traffic off, so these two messages
// requests are all it makes.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AnthropicTurn, type AnthropicUpstream, startAnthropicUpstream } from '../fakes/anthropic-upstream.js';
import { killAgents } from '../support/agent-process.js';
import { type ClaudeCodeRun, claudeWorkdir, runClaudeCode } from '../support/claude-code.js';

const KEY = 'sk-ant-fake-key-0123456789';
const CONTENT = 'written by claude code\n';
const ANSWER = 'I created hello.txt.';
const PROMPT = 'Create hello.txt, then tell me what you did.';

let upstream: AnthropicUpstream;
let dir: string;
let file: string;
let turns: AnthropicTurn[];
let run: ClaudeCodeRun;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mg-claude-'));
  file = join(claudeWorkdir(dir), 'hello.txt');
  turns = [
    {
      content: [
        { type: 'text', text: 'Creating the file.' },
        { type: 'tool_use', id: 'toolu_fake_write_1', name: 'Write', input: { file_path: file, content: CONTENT } },
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
  upstream = await startAnthropicUpstream(turns);
  run = await runClaudeCode({ dir, baseURL: upstream.origin, key: KEY, prompt: PROMPT });
}, 180_000);

afterAll(async () => {
  killAgents();
  await upstream?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const failure = () => `claude exited ${run.code} after ${run.ms} ms\nstdout:\n${run.stdout}\nstderr:\n${run.stderr}`;

describe('Claude Code against the fake Anthropic upstream', () => {
  it('completes the task: the file is written and the JSON result is the scripted answer', () => {
    expect(existsSync(file), failure()).toBe(true);
    expect(readFileSync(file, 'utf8')).toBe(CONTENT);
    expect(run.output, failure()).toMatchObject({ type: 'result', subtype: 'success', is_error: false, result: ANSWER, num_turns: 2 });
    expect(run.code).toBe(0);
  });

  it('made exactly the two streamed messages requests, key in x-api-key', () => {
    expect(upstream.requests.map((r) => `${r.method} ${r.path}`)).toEqual(['POST /v1/messages?beta=true', 'POST /v1/messages?beta=true']);
    for (const r of upstream.requests) {
      expect(r.headers['x-api-key']).toBe(KEY);
      expect(r.headers['authorization']).toBeUndefined();
      expect(r.headers['anthropic-version']).toBe('2023-06-01');
      expect(r.headers['anthropic-beta']).toContain('claude-code-');
      expect(r.body).toMatchObject({ stream: true, model: expect.any(String), max_tokens: expect.any(Number) });
      expect((r.body!['tools'] as { name: string }[]).map((t) => t.name)).toContain('Write');
    }
  });

  it('the second request carries the whole history: the tool_use as sent and its tool_result', () => {
    const second = upstream.requests[1]!.body!['messages'] as { role: string; content: any[] }[];
    expect(JSON.stringify(second[0])).toContain(PROMPT);
    const assistant = second.find((m) => m.role === 'assistant');
    expect(assistant?.content).toContainEqual(expect.objectContaining(turns[0]!.content[1]));
    const results = second.flatMap((m) => (m.role === 'user' ? m.content : [])).filter((b) => b.type === 'tool_result');
    expect(results).toEqual([expect.objectContaining({ tool_use_id: 'toolu_fake_write_1' })]);
  });

  it("its reported usage adds up the fake's two turns", () => {
    const sum = (k: keyof AnthropicTurn['usage']) => turns.reduce((n, t) => n + t.usage[k], 0);
    expect(run.output?.['usage']).toMatchObject({
      input_tokens: sum('input_tokens'),
      output_tokens: sum('output_tokens'),
      cache_read_input_tokens: sum('cache_read_input_tokens'),
      cache_creation_input_tokens: sum('cache_creation_input_tokens'),
    });
  });
});

describe('Claude Code with ANTHROPIC_AUTH_TOKEN', () => {
  it('sends the key as Authorization: Bearer instead of x-api-key', async () => {
    const answer = { content: [{ type: 'text' as const, text: 'hi' }], stop_reason: 'end_turn' as const, usage: turns[1]!.usage };
    const bearerUpstream = await startAnthropicUpstream([answer]);
    const bearerDir = mkdtempSync(join(tmpdir(), 'mg-claude-bearer-'));
    try {
      const r = await runClaudeCode({ dir: bearerDir, baseURL: bearerUpstream.origin, key: KEY, auth: 'bearer', prompt: 'say hi' });
      expect(r.output?.['result'], r.stderr).toBe('hi');
      expect(bearerUpstream.requests.map((q) => [q.headers['authorization'], q.headers['x-api-key']])).toEqual([[`Bearer ${KEY}`, undefined]]);
    } finally {
      await bearerUpstream.close();
      rmSync(bearerDir, { recursive: true, force: true });
    }
  }, 180_000);
});
