// The benchmark's own moving parts must be honest: the fake upstream speaks OpenAI's and Anthropic's shapes (the
// official SDKs can use it), the bare proxy passes every family through unchanged, and the upstream's byte counts, which the
// runner uses to reject a run where a proxy lost bodies, are right.
import { readFileSync } from 'node:fs';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { start, type Started } from '../../bench/lib/procs.js';
import { responsesBody, writeWorkload, type Workload } from '../../bench/lib/workload.js';

const ROOT = new URL('../..', import.meta.url).pathname;
let upstream: Started;
let bare: Started;
let dir: string;
let workload: Workload;

async function stats(reset = false): Promise<Record<string, { requests: number; bytes: number }>> {
  const r = await fetch(`http://127.0.0.1:${upstream.port}/__stats`, { method: reset ? 'POST' : 'GET' });
  return (await r.json()) as Record<string, { requests: number; bytes: number }>;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mg-bench-test-'));
  workload = writeWorkload(dir);
  upstream = await start({ name: 'upstream', cmd: process.execPath, args: ['--import', 'tsx', join(ROOT, 'bench/fake-upstream.ts')] });
  bare = await start({
    name: 'bare',
    cmd: process.execPath,
    args: ['--import', 'tsx', join(ROOT, 'bench/bare-proxy.ts'), '--upstream', `http://127.0.0.1:${upstream.port}`],
  });
});

afterAll(async () => {
  await bare?.stop();
  await upstream?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe.each([
  ['the fake upstream', () => upstream.port],
  ['the bare proxy', () => bare.port],
])('%s', (_name, port) => {
  const client = (): OpenAI => new OpenAI({ baseURL: `http://127.0.0.1:${port()}/v1`, apiKey: 'sk-test', maxRetries: 0 });

  it('answers a chat completion of about 600 bytes', async () => {
    const { data, response } = await client()
      .chat.completions.create({ model: 'bench-model-0500', messages: [{ role: 'user', content: 'hi' }] })
      .withResponse();
    expect(data.choices[0]?.message.content).toContain('Latency is what a gateway adds');
    expect(data.usage?.total_tokens).toBe(100);
    const length = Number(response.headers.get('content-length'));
    expect(length).toBeGreaterThan(500);
    expect(length).toBeLessThan(800);
  });

  it('streams 20 SSE events, the last carrying usage', async () => {
    const stream = await client().chat.completions.create({ model: 'bench-model-0500', messages: [{ role: 'user', content: 'hi' }], stream: true });
    const chunks = [];
    for await (const c of stream) chunks.push(c);
    expect(chunks).toHaveLength(20);
    expect(chunks.at(-2)?.choices[0]?.finish_reason).toBe('stop');
    expect(chunks.at(-1)?.usage?.total_tokens).toBe(60);
  });

  it('answers the Messages API whole, and streamed in 20 events with the usage in message_start and message_delta', async () => {
    const anthropic = new Anthropic({ baseURL: `http://127.0.0.1:${port()}`, apiKey: 'sk-test', maxRetries: 0 });
    const request = { model: 'bench-messages', max_tokens: 64, messages: [{ role: 'user' as const, content: 'hi' }] };
    const whole = await anthropic.messages.create(request);
    expect(whole.content[0]?.type === 'text' && whole.content[0].text).toContain('Latency is what a gateway adds');
    expect(whole.usage).toMatchObject({ input_tokens: 42, output_tokens: 58 });
    const stream = anthropic.messages.stream(request);
    let events = 0;
    stream.on('streamEvent', () => events++);
    const final = await stream.finalMessage();
    expect(events).toBe(20);
    expect(final.content[0]?.type === 'text' && final.content[0].text).toBe(Array.from({ length: 15 }, (_, i) => ` token${i}`).join(''));
    expect(final.stop_reason).toBe('end_turn');
    expect(final.usage).toMatchObject({ input_tokens: 42, output_tokens: 15 });
  });

  it("answers the Codex-shaped Responses request whole, and streamed in the 26 events of the chat stream's 18 deltas", async () => {
    const request = JSON.parse(responsesBody('bench-responses')) as OpenAI.Responses.ResponseCreateParamsNonStreaming;
    const whole = await client().responses.create(request);
    expect(whole.output_text).toContain('Latency is what a gateway adds');
    expect(whole.usage).toMatchObject({ input_tokens: 42, output_tokens: 58 });
    const events = [];
    for await (const e of await client().responses.create({ ...request, stream: true })) events.push(e);
    expect(events).toHaveLength(26);
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    const last = events.at(-1);
    const text = Array.from({ length: 18 }, (_, i) => ` token${i}`).join('');
    expect(last?.type === 'response.completed' && last.response.output).toMatchObject([{ type: 'message', content: [{ type: 'output_text', text }] }]);
    expect(last?.type === 'response.completed' && last.response.usage).toMatchObject({ input_tokens: 42, output_tokens: 18 });
  });

  it('takes a 100 KB embeddings body and a 5 MB upload whole', async () => {
    await stats(true);
    const input = JSON.parse(readFileSync(workload.embed.file, 'utf8')).input as string;
    const emb = await client().embeddings.create({ model: 'bench-model-0500', input });
    expect(emb.data[0]?.embedding).toHaveLength(16);
    const audio = Buffer.alloc(5 * 1024 * 1024, 7);
    const tr = await client().audio.transcriptions.create({ model: 'bench-model-0500', file: await toFile(audio, 'speech.wav') });
    expect(tr.text).toContain('quick brown fox');
    const s = await stats();
    expect(s['/v1/embeddings']?.requests).toBe(1);
    expect(s['/v1/embeddings']?.bytes).toBeGreaterThan(100_000);
    expect(s['/v1/audio/transcriptions']?.bytes).toBeGreaterThan(5 * 1024 * 1024);
  });

  it('holds a "bench-hold" stream open after its first event', async () => {
    const ac = new AbortController();
    const stream = await client().chat.completions.create(
      { model: 'bench-hold', messages: [{ role: 'user', content: 'hi' }], stream: true },
      { signal: ac.signal },
    );
    const it = stream[Symbol.asyncIterator]();
    const first = await it.next();
    expect(first.done).toBe(false);
    const second = await Promise.race([it.next().then(() => 'more'), new Promise((r) => setTimeout(() => r('held'), 300))]);
    expect(second).toBe('held');
    ac.abort();
  });
});

describe('the benchmark workload files', () => {
  it('are the sizes the scenarios promise', () => {
    expect(workload.chat.bytes).toBeGreaterThan(250);
    expect(workload.chat.bytes).toBeLessThan(350);
    expect(readFileSync(workload.stream.file, 'utf8')).toContain('"stream":true');
    expect(workload.embed.bytes).toBeGreaterThanOrEqual(100_000);
    expect(workload.upload.bytes).toBeGreaterThan(5 * 1024 * 1024);
    expect(workload.upload.contentType).toMatch(/^multipart\/form-data; boundary=/);
  });
});
