// The requests the benchmark sends, written once to files the load generators read: a ≈300-byte chat request,
// the same with "stream": true (also to a route whose upstream reports no usage), a Messages API request of the
// same content, a 100 KB embeddings request and a 5 MB multipart transcription upload; and (for
// bench/instructions.ts only) a Responses API request shaped like Codex's.
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BENCH_MESSAGES_MODEL, BENCH_MODEL, HOLD_MODEL, NO_USAGE_MODEL } from './manifests.js';

export interface Body {
  readonly path: string;
  readonly file: string;
  readonly contentType: string;
  readonly bytes: number;
}

export interface Workload {
  readonly chat: Body;
  readonly stream: Body;
  /** The same stream from an upstream that reports no usage (it ignores `stream_options`). */
  readonly streamNoUsage: Body;
  readonly messages: Body;
  readonly embed: Body;
  readonly upload: Body;
  readonly hold: Body;
}

const BOUNDARY = '----model-gateway-bench-7MA4YWxkTrZu0gW';

/** The ≈300-byte chat request (also bench/instructions.ts's). */
export function chatBody(model: string, stream: boolean): string {
  const body = {
    model,
    messages: [
      { role: 'system', content: 'You are a terse assistant. Answer in one sentence.' },
      { role: 'user', content: 'Explain in one sentence why a gateway should add as little latency as it can to each request.' },
    ],
    max_tokens: 64,
    temperature: 0,
    ...(stream ? { stream: true } : {}),
  };
  return JSON.stringify(body);
}

/** The chat request's content as a Messages API request (system apart, max_tokens required). */
export function messagesBody(model: string, stream = false): string {
  return JSON.stringify({
    model,
    max_tokens: 64,
    system: 'You are a terse assistant. Answer in one sentence.',
    messages: [{ role: 'user', content: 'Explain in one sentence why a gateway should add as little latency as it can to each request.' }],
    temperature: 0,
    ...(stream ? { stream: true } : {}),
  });
}

/** Codex's instructions, shortened: the real ones are several KB of the same kind of text. */
export const CODEX_INSTRUCTIONS =
  'You are a coding agent running in a terminal. Read the repository before you change it, keep changes small, ' +
  'run the tests that cover what you changed, and say what you did in a few lines.';

/** Two of Codex's function tools, as it declares them. */
export const CODEX_TOOLS = [
  {
    type: 'function',
    name: 'shell',
    description: 'Runs a shell command and returns its output.',
    strict: false,
    parameters: {
      type: 'object',
      properties: { command: { type: 'array', items: { type: 'string' } }, workdir: { type: 'string' }, timeout_ms: { type: 'number' } },
      required: ['command'],
      additionalProperties: false,
    },
  },
  {
    type: 'function',
    name: 'update_plan',
    description: 'Updates the task plan: a list of steps, each pending, in_progress or completed.',
    strict: false,
    parameters: {
      type: 'object',
      properties: {
        explanation: { type: 'string' },
        plan: { type: 'array', items: { type: 'object', properties: { step: { type: 'string' }, status: { type: 'string' } } } },
      },
      required: ['plan'],
      additionalProperties: false,
    },
  },
];

/**
 * A Responses API request shaped like Codex's (≈2 KB): instructions, the environment as a developer message, the
 * user's turn, a shell call and its output, the user's next turn; two function tools; store: false, so nothing is
 * kept upstream (what Codex sends to a model served through chat completions).
 */
export function responsesBody(model: string, stream = false): string {
  const text = (role: string, t: string) => ({ type: 'message', role, content: [{ type: role === 'assistant' ? 'output_text' : 'input_text', text: t }] });
  return JSON.stringify({
    model,
    instructions: CODEX_INSTRUCTIONS,
    input: [
      text(
        'developer',
        '<environment_context>\n  <cwd>/work/repo</cwd>\n  <approval_policy>on-request</approval_policy>\n  <shell>bash</shell>\n</environment_context>',
      ),
      text('user', 'Why does the gateway read each request body whole before it forwards it?'),
      { type: 'function_call', call_id: 'call_bench0001', name: 'shell', arguments: '{"command":["grep","-rn","read the body once","docs/"]}' },
      {
        type: 'function_call_output',
        call_id: 'call_bench0001',
        output: 'docs/architecture.md:27: it authenticates the key against the table, reads the body once,',
      },
      text('assistant', 'It reads the body once to authorize the model it names and to replay it on failover.'),
      text('user', 'Explain in one sentence why a gateway should add as little latency as it can to each request.'),
    ],
    tools: CODEX_TOOLS,
    tool_choice: 'auto',
    parallel_tool_calls: false,
    reasoning: { effort: 'medium', summary: 'auto' },
    store: false,
    ...(stream ? { stream: true } : {}),
    include: ['reasoning.encrypted_content'],
    prompt_cache_key: 'bench-0000-0000-0000-000000000000',
  });
}

function multipart(fields: Record<string, string>, file: { name: string; type: string; data: Buffer }): Buffer {
  const parts: Buffer[] = [];
  for (const [k, v] of Object.entries(fields)) {
    parts.push(Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`));
  }
  parts.push(
    Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="${file.name}"\r\nContent-Type: ${file.type}\r\n\r\n`),
    file.data,
    Buffer.from(`\r\n--${BOUNDARY}--\r\n`),
  );
  return Buffer.concat(parts);
}

export function writeWorkload(dir: string): Workload {
  const write = (name: string, path: string, contentType: string, data: string | Buffer): Body => {
    const file = join(dir, name);
    writeFileSync(file, data);
    return { path, file, contentType, bytes: Buffer.byteLength(data) };
  };
  const json = 'application/json';
  // 100 KB of text input: a realistic batch of sentences rather than one repeated character.
  const sentence = 'Gateways should stream bytes, not buffer them, and add microseconds rather than milliseconds. ';
  const input = sentence.repeat(Math.ceil(100_000 / sentence.length)).slice(0, 100_000);
  const audio = randomBytes(5 * 1024 * 1024);
  return {
    chat: write('chat.json', '/v1/chat/completions', json, chatBody(BENCH_MODEL, false)),
    stream: write('stream.json', '/v1/chat/completions', json, chatBody(BENCH_MODEL, true)),
    streamNoUsage: write('stream-nousage.json', '/v1/chat/completions', json, chatBody(NO_USAGE_MODEL, true)),
    messages: write('messages.json', '/v1/messages', json, messagesBody(BENCH_MESSAGES_MODEL)),
    hold: write('hold.json', '/v1/chat/completions', json, chatBody(HOLD_MODEL, true)),
    embed: write('embed.json', '/v1/embeddings', json, JSON.stringify({ model: BENCH_MODEL, input })),
    upload: write(
      'upload.bin',
      '/v1/audio/transcriptions',
      `multipart/form-data; boundary=${BOUNDARY}`,
      multipart({ model: BENCH_MODEL, response_format: 'json' }, { name: 'speech.wav', type: 'audio/wav', data: audio }),
    ),
  };
}
