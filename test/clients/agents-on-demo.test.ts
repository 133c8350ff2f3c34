// Coding agents on the quick start's own config (examples/local, `npm start`), as docs/coding-agents.md tells a new
// user to try them with no key and no network: Anthropic's SDK, Claude Code and Codex against the demo route
// `demo-chat`, whose demo backend echoes the prompt. The Messages API reaches it translated to chat completions.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killAgents } from '../support/agent-process.js';
import { runClaudeCode } from '../support/claude-code.js';
import { runCodex } from '../support/codex.js';
import { runCli, type CliRun } from '../support/spawn-cli.js';

const EXAMPLE_KEY = 'mg-demo-key';
const MODEL = 'demo-chat';
let gateway: CliRun;
let origin: string;
let workRoot: string;

beforeAll(async () => {
  workRoot = mkdtempSync(join(tmpdir(), 'mg-agents-demo-'));
  gateway = runCli(['serve', '--config', 'examples/local', '--host', '127.0.0.1', '--port', '0', '--metrics-port', '0']);
  origin = String((await gateway.waitForLog((l) => l.msg === 'model-gateway listening')).api);
  await gateway.waitForLog((l) => l.msg === 'first config loaded; ready');
}, 30_000);

afterAll(async () => {
  killAgents();
  gateway?.child.kill('SIGTERM');
  await gateway?.exited;
  if (workRoot) rmSync(workRoot, { recursive: true, force: true });
});

describe('coding agents on the demo backend', () => {
  const anthropic = () => new Anthropic({ baseURL: origin, apiKey: EXAMPLE_KEY, maxRetries: 0 });

  it("answers Anthropic's Messages API, with usage", async () => {
    const m = await anthropic().messages.create({ model: MODEL, max_tokens: 100, messages: [{ role: 'user', content: 'Hello, Claude!' }] });
    expect(m).toMatchObject({ type: 'message', role: 'assistant', model: MODEL, stop_reason: 'end_turn' });
    expect(m.content).toEqual([expect.objectContaining({ type: 'text', text: expect.stringContaining('You said: Hello, Claude!') })]);
    expect(m.usage.output_tokens).toBeGreaterThan(0);
  });

  it('streams it: the SDK assembles the final message from the events', async () => {
    const stream = anthropic().messages.stream({ model: MODEL, max_tokens: 100, messages: [{ role: 'user', content: 'stream it' }] });
    let deltas = 0;
    stream.on('text', () => deltas++);
    const m = await stream.finalMessage();
    expect(deltas).toBeGreaterThan(3);
    expect(m.content[0]).toMatchObject({ type: 'text', text: expect.stringContaining('You said: stream it') });
    expect(m.stop_reason).toBe('end_turn');
  });

  it('runs Claude Code with the example key as a bearer token', async () => {
    const dir = mkdtempSync(join(workRoot, 'claude-'));
    const run = await runClaudeCode({ dir, baseURL: origin, key: EXAMPLE_KEY, auth: 'bearer', model: MODEL, prompt: 'Say hello' });
    const failure = `claude exited ${run.code}\nstdout:\n${run.stdout}\nstderr:\n${run.stderr}`;
    expect(run.output, failure).toMatchObject({ is_error: false, subtype: 'success' });
    expect(run.output!.result, failure).toContain('You said: Say hello');
    expect(run.code, failure).toBe(0);
  }, 150_000);

  it('runs Codex on the Responses API', async () => {
    const dir = mkdtempSync(join(workRoot, 'codex-'));
    const run = await runCodex({ dir, baseURL: `${origin}/v1`, apiKey: EXAMPLE_KEY, model: MODEL, prompt: 'Say hello' });
    const failure = `codex exited ${run.code}\nstdout:\n${run.stdout}\nstderr:\n${run.stderr}`;
    expect(run.stdout.trim(), failure).toBe(`Hello from the model-gateway demo backend (${MODEL}). You said: Say hello`);
    expect(run.code, failure).toBe(0);
  }, 150_000);
});
