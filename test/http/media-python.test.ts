// openai-python, the stricter of the two SDKs, on the media families through the gateway: what it writes in a form
// (`timestamp_granularities[]`, `include[]`, `chunking_strategy[…]`, two `image[]` parts) reaches the upstream with only
// the model changed, and it parses what comes back (a verbose transcription with words, base64 embeddings it decodes
// itself, image URLs, speech events). The fake answers in OpenAI's shapes.
import { execFile } from 'node:child_process';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error: a plain .mjs helper shared with scripts/run-tests.mjs
import { ensurePythonClients, PYTHON } from '../../scripts/py-clients.mjs';
import { listenOnLoopback } from '../fakes/loopback.js';
import { ALICE_KEY, standardManifests, startGateway, type TestGateway } from '../helpers/gateway.js';
import { REPO_ROOT } from '../support/spawn-cli.js';

interface Seen {
  readonly path: string;
  readonly form?: FormData;
  readonly json?: Record<string, unknown>;
}
const seen: Seen[] = [];
let gw: TestGateway;
let closeUpstream: () => Promise<void>;
let results: Record<string, { ok: boolean; value?: any; error?: string; message?: string }>;

function json(res: ServerResponse, body: object): void {
  const text = JSON.stringify(body);
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

async function answer(req: IncomingMessage, res: ServerResponse, body: Buffer): Promise<void> {
  const type = String(req.headers['content-type']);
  const path = req.url ?? '';
  const form = type.startsWith('multipart/') ? await new Response(new Uint8Array(body), { headers: { 'content-type': type } }).formData() : undefined;
  const parsed = type.includes('json') ? (JSON.parse(body.toString()) as Record<string, unknown>) : undefined;
  seen.push({ path, ...(form ? { form } : {}), ...(parsed ? { json: parsed } : {}) });
  if (path === '/v1/audio/transcriptions') {
    return json(res, {
      task: 'transcribe',
      language: 'english',
      duration: 1.5,
      text: 'hi there',
      words: [
        { word: 'hi', start: 0, end: 0.5 },
        { word: 'there', start: 0.6, end: 1.4 },
      ],
      usage: { type: 'duration', seconds: 2 },
    });
  }
  if (path === '/v1/embeddings') {
    const dims = Number(parsed?.['dimensions']);
    const data = ((parsed?.['input'] ?? []) as string[]).map((_, i) => {
      const v = new Float32Array(Array.from({ length: dims }, (_, d) => (i + 1) * 0.25 + d));
      return { object: 'embedding', index: i, embedding: Buffer.from(v.buffer).toString('base64') };
    });
    return json(res, { object: 'list', data, model: 'upstream-embed', usage: { prompt_tokens: 2, total_tokens: 2 } });
  }
  if (path === '/v1/images/edits') return json(res, { created: 1, data: [{ url: 'https://files.example/1.png' }, { url: 'https://files.example/2.png' }] });
  if (path === '/v1/audio/speech') {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(`data: ${JSON.stringify({ type: 'speech.audio.delta', audio: 'AAAA' })}\n\n`);
    res.end(`data: ${JSON.stringify({ type: 'speech.audio.done', usage: { input_tokens: 2, output_tokens: 8, total_tokens: 10 } })}\n\n`);
    return;
  }
  res.writeHead(404).end();
}

beforeAll(async () => {
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    await answer(req, res, Buffer.concat(chunks));
  });
  const upstream = await listenOnLoopback(server);
  closeUpstream = upstream.close;
  gw = await startGateway(standardManifests(`${upstream.origin}/v1`));
  expect(ensurePythonClients(), 'the Python clients could not be installed').toBe(true);
  // Asynchronously: the gateway and the fake live in this process and must answer meanwhile.
  const run = await promisify(execFile)(PYTHON, [join(REPO_ROOT, 'test/clients/openai_python_media.py'), gw.baseURL, ALICE_KEY], { timeout: 30_000 });
  results = JSON.parse(run.stdout);
}, 40_000);
afterAll(async () => {
  await gw?.close();
  await closeUpstream?.();
});

const value = (name: string) => {
  expect(results[name], JSON.stringify(results[name])).toMatchObject({ ok: true });
  return results[name]!.value;
};
const sent = (path: string) => seen.find((s) => s.path === path)!;

describe('openai-python on the media families', () => {
  it('a transcription form with array and object fields: passed on as written, the verbose answer parsed', () => {
    expect(value('transcription')).toEqual({ text: 'hi there', words: ['hi', 'there'], duration: 1.5 });
    const form = sent('/v1/audio/transcriptions').form!;
    expect(form.get('model')).toBe('upstream-whisper');
    expect(form.getAll('timestamp_granularities[]')).toEqual(['word', 'segment']);
    expect(form.getAll('include[]')).toEqual(['logprobs']);
    expect(form.get('chunking_strategy[type]')).toBe('server_vad');
    expect(form.get('chunking_strategy[silence_duration_ms]')).toBe('500');
  });

  it('embeddings: asked as base64 by default, decoded by the SDK, dimensions passed on', () => {
    expect(value('embeddings')).toEqual({
      vectors: [
        [0.25, 1.25, 2.25, 3.25],
        [0.5, 1.5, 2.5, 3.5],
      ],
      tokens: 2,
    });
    expect(sent('/v1/embeddings').json).toMatchObject({ model: 'upstream-embed', encoding_format: 'base64', dimensions: 4 });
  });

  it('an edit of two images answered by URL', () => {
    expect(value('edit')).toEqual(['https://files.example/1.png', 'https://files.example/2.png']);
    const form = sent('/v1/images/edits').form!;
    expect(form.getAll('image[]')).toHaveLength(2);
    expect(form.get('n')).toBe('2');
    expect(form.get('size')).toBe('512x512');
  });

  it('speech as events through with_streaming_response', () => {
    const s = value('speech_events');
    expect(s.type).toBe('text/event-stream');
    expect(s.text).toContain('"speech.audio.done"');
    expect(sent('/v1/audio/speech').json).toMatchObject({ model: 'upstream-tts', stream_format: 'sse' });
  });
});
