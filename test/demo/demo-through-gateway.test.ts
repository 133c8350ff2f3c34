// Every POST family of examples/local/ through the real gateway onto the built-in demo backend: what the quick
// start and the benchmarks rely on.
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FileSource } from '../../src/sources/file/file-source.js';
import { startGateway, type GatewayHandle } from '../../src/gateway/main.js';
import { createMetrics } from '../../src/observability/metrics.js';
import { captureLogs, type LogCapture } from '../support/log-capture.js';

const EXAMPLES = fileURLToPath(new URL('../../examples/local/', import.meta.url));
let gw: GatewayHandle;
let logs: LogCapture;
let client: OpenAI;

beforeAll(async () => {
  logs = captureLogs('info');
  gw = await startGateway({
    source: ({ logger }) => new FileSource({ dir: EXAMPLES, logger, resyncMs: 0 }),
    host: '127.0.0.1',
    port: 0,
    metricsPort: 0,
    logger: logs.logger,
    metrics: createMetrics({ defaultMetrics: false }),
    // A configured sealed-id key: without one the gateway (rightly) warns, and this test wants a warning-free start.
    idKeys: [randomBytes(32)],
  });
  await gw.ready;
  client = new OpenAI({ baseURL: `${gw.apiURL}/v1`, apiKey: 'mg-demo-key', maxRetries: 0 });
});
afterAll(async () => {
  await gw.close({ timeoutMs: 1_000 });
});

describe('examples/local through the gateway onto the demo backend', () => {
  it('loads every example object as Ready', () => {
    const statuses = gw.pipeline.last?.statuses ?? [];
    expect(statuses.length).toBe(6);
    expect(logs.records.filter((r) => r.level === 40 || r.level === 50)).toEqual([]);
  });

  it('responses: create and stream', async () => {
    const r = await client.responses.create({ model: 'demo-chat', input: 'hi there' });
    expect(r.output_text).toContain('You said: hi there');
    const stream = client.responses.stream({ model: 'demo-chat', input: 'streamed' });
    const final = await stream.finalResponse();
    expect(final.output_text).toContain('You said: streamed');
  });

  it('images: generations and edits', async () => {
    const gen = await client.images.generate({ model: 'demo-media', prompt: 'a boat' });
    expect(Buffer.from(gen.data![0]!.b64_json!, 'base64').subarray(1, 4).toString()).toBe('PNG');
    const edit = await client.images.edit({ model: 'demo-media', prompt: 'red', image: await toFile(Buffer.alloc(100, 3), 'a.png', { type: 'image/png' }) });
    expect(edit.data?.[0]?.b64_json).toBeTruthy();
  });

  it('audio: transcriptions, translations and speech', async () => {
    const t = await client.audio.transcriptions.create({ model: 'demo-media', file: await toFile(Buffer.alloc(4321, 1), 'talk.wav') });
    expect(t.text).toBe('Demo transcription of talk.wav (4321 bytes).'); // the upload reached the backend intact in size
    const tr = await client.audio.translations.create({ model: 'demo-media', file: await toFile(Buffer.alloc(10), 'x.mp3') });
    expect(tr.text).toContain('translation');
    const speech = await client.audio.speech.create({ model: 'demo-media', voice: 'alloy', input: 'hello' });
    expect(speech.headers.get('content-type')).toBe('audio/wav');
    expect(Buffer.from(await speech.arrayBuffer()).toString('latin1', 0, 4)).toBe('RIFF');
  });

  it('videos: create', async () => {
    const v = await client.videos.create({ model: 'demo-media', prompt: 'waves' });
    expect(v).toMatchObject({ object: 'video', status: 'queued', model: 'demo-media' });
  });

  it('a model outside a family is refused before reaching the demo backend', async () => {
    await expect(client.embeddings.create({ model: 'demo-chat', input: 'x' })).rejects.toMatchObject({ status: 404 });
  });
});
