// The requests the benchmark sends, written once to files the load generators read: a ≈300-byte chat request,
// the same with "stream": true (also to a route whose upstream reports no usage), a Messages API request of the
// same content, a 100 KB embeddings request and a 5 MB multipart transcription upload.
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
