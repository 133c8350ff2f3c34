// Claude Code reading an image through the gateway, with `--output-format stream-json`: turn 1 is two parallel tool
// calls, its Read tool on a PNG (so Claude Code sends the image back inside a tool_result: offline, the one way it
// sends an image) and its Bash tool running `echo`; turn 2 is the answer. On a native backend the image block must
// reach Anthropic unchanged; on a translated one both tool messages come right after the calls and the image follows
// them as an image_url data URL in a user message (chat has no images in tool messages). Claude Code's stream-json
// lines must show the round trip and the result.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deflateSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AnthropicTurn, type AnthropicUpstream, startAnthropicUpstream } from '../fakes/anthropic-upstream.js';
import { type ChatTurn, type ScriptedChatUpstream, startScriptedChatUpstream } from '../fakes/scripted-chat-upstream.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { KEYS, messagesManifests } from '../messages/manifests.js';
import { killAgents } from '../support/agent-process.js';
import { type ClaudeCodeRun, claudeWorkdir, runClaudeCode } from '../support/claude-code.js';

const ANSWER = 'The image is a red square.';
const PROMPT = 'Look at red.png and tell me what it shows.';

/** A valid 8x8 opaque red PNG (RGB, no filter), made here so no binary fixture is needed. */
function redPng(): Buffer {
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc = (b: Buffer) => {
    let c = 0xffffffff;
    for (const x of b) c = crcTable[(c ^ x) & 0xff]! ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (type: string, data: Buffer) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
    const sum = Buffer.alloc(4);
    sum.writeUInt32BE(crc(body));
    return Buffer.concat([len, body, sum]);
  };
  const ihdr = Buffer.from([0, 0, 0, 8, 0, 0, 0, 8, 8, 2, 0, 0, 0]);
  const row = Buffer.concat([Buffer.from([0]), Buffer.alloc(8 * 3, Buffer.from([255, 0, 0]))]);
  const idat = deflateSync(Buffer.concat(Array.from({ length: 8 }, () => row)));
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', idat),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

let workRoot: string;
let png: Buffer;
let anthropic: AnthropicUpstream;
let chat: ScriptedChatUpstream;
let gw: TestGateway;

beforeAll(async () => {
  workRoot = mkdtempSync(join(tmpdir(), 'mg-claude-img-'));
  png = redPng();
  // Beside the workdir (which each run makes afresh): the Read tool takes an absolute path.
  const file = join(workRoot, 'red.png');
  writeFileSync(file, png);
  const usage = { input_tokens: 900, output_tokens: 20, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 };
  const anthropicTurns: AnthropicTurn[] = [
    {
      content: [
        { type: 'tool_use', id: 'toolu_read_img', name: 'Read', input: { file_path: file } },
        { type: 'tool_use', id: 'toolu_echo', name: 'Bash', input: { command: 'echo parallel-ok', description: 'Echo' } },
      ],
      stop_reason: 'tool_use',
      usage,
    },
    { content: [{ type: 'text', text: ANSWER }], stop_reason: 'end_turn', usage },
  ];
  const chatUsage = { prompt_tokens: 1200, completion_tokens: 20, cached_tokens: 0 };
  const chatTurns: ChatTurn[] = [
    {
      toolCalls: [
        { id: 'call_read_img', name: 'Read', arguments: JSON.stringify({ file_path: file }) },
        { id: 'call_echo', name: 'Bash', arguments: JSON.stringify({ command: 'echo parallel-ok', description: 'Echo' }) },
      ],
      finish: 'tool_calls',
      usage: chatUsage,
    },
    { text: ANSWER, finish: 'stop', usage: chatUsage },
  ];
  anthropic = await startAnthropicUpstream(anthropicTurns);
  chat = await startScriptedChatUpstream(chatTurns);
  gw = await startGateway(messagesManifests({ anthropic: anthropic.baseURL, chat: chat.baseURL }));
}, 30_000);

afterAll(async () => {
  killAgents();
  await gw?.close();
  await Promise.all([anthropic?.close(), chat?.close()]);
  if (workRoot) rmSync(workRoot, { recursive: true, force: true });
});

async function runThrough(model: string): Promise<ClaudeCodeRun> {
  rmSync(join(workRoot, 'home'), { recursive: true, force: true });
  rmSync(claudeWorkdir(workRoot), { recursive: true, force: true });
  return runClaudeCode({ dir: workRoot, baseURL: gw.origin, key: KEYS.alice, model, prompt: PROMPT, streamJson: true, timeoutMs: 20_000 });
}

const failure = (r: ClaudeCodeRun) => `claude exited ${r.code} after ${r.ms} ms\nstdout:\n${r.stdout}\nstderr:\n${r.stderr}`;

describe.each([
  ['native', 'claude-native'],
  ['translated', 'claude-translated'],
] as const)('Claude Code reads an image through the gateway, %s backend', (kind, model) => {
  let r: ClaudeCodeRun;
  let seen: Record<string, any>[];

  beforeAll(async () => {
    const requests = () => (kind === 'native' ? anthropic.requests : chat.requests);
    const before = requests().length;
    r = await runThrough(model);
    seen = requests()
      .slice(before)
      .map((q) => q.body ?? {});
  }, 30_000);

  it('streams its messages as JSON lines: both tool uses, their results (one an image), then the scripted answer', () => {
    expect(
      r.messages.filter((m) => m['unparsed']),
      failure(r),
    ).toEqual([]);
    expect(
      r.messages.map((m) => m['type']),
      failure(r),
    ).toEqual(['system', 'assistant', 'assistant', 'user', 'user', 'assistant', 'result']);
    // One line per content block: both parallel calls, then both results, then the answer.
    const [read, echo, image, echoed] = r.messages.slice(1, 5).map((m) => m['message']['content'][0]);
    const id = (name: string) => (kind === 'native' ? `toolu_${name}` : `call_${name}`);
    expect(read).toMatchObject({ type: 'tool_use', name: 'Read', id: id('read_img') });
    expect(echo).toMatchObject({ type: 'tool_use', name: 'Bash', id: id('echo') });
    expect(image).toMatchObject({
      type: 'tool_result',
      tool_use_id: id('read_img'),
      content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png' } }],
    });
    expect(echoed).toMatchObject({ type: 'tool_result', tool_use_id: id('echo'), content: 'parallel-ok' });
    expect(r.output, failure(r)).toMatchObject({ type: 'result', subtype: 'success', is_error: false, result: ANSWER, num_turns: 3 });
    expect(r.code).toBe(0);
  });

  it('the image reached the upstream in its API, its bytes unchanged', () => {
    expect(seen).toHaveLength(2);
    const messages = seen[1]!['messages'] as Record<string, any>[];
    const data = png.toString('base64');
    if (kind === 'native') {
      const last = messages.at(-1)!;
      expect(last['content'][0]).toMatchObject({
        type: 'tool_result',
        tool_use_id: 'toolu_read_img',
        content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data } }],
      });
      expect(last['content'][1]).toMatchObject({ type: 'tool_result', tool_use_id: 'toolu_echo', content: 'parallel-ok' });
    } else {
      // Chat wants every tool message right after the tool calls: the image follows them both, in a user message.
      const at = messages.findIndex((m) => m['role'] === 'tool');
      expect(messages[at - 1]!['tool_calls'].map((c: { id: string }) => c.id)).toEqual(['call_read_img', 'call_echo']);
      expect(messages[at]).toMatchObject({ role: 'tool', tool_call_id: 'call_read_img' });
      expect(messages[at + 1]).toMatchObject({ role: 'tool', tool_call_id: 'call_echo', content: 'parallel-ok' });
      expect(messages[at + 2]).toMatchObject({ role: 'user', content: [{ type: 'image_url', image_url: { url: `data:image/png;base64,${data}` } }] });
    }
  });
});
