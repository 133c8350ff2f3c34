// The quick start's follow-up calls: examples/local on the built-in demo backend, through sealed ids (what a
// first-time user does with `serve --config examples/local` and the SDK).
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FileSource } from '../../src/sources/file/file-source.js';
import { startGateway, type GatewayHandle } from '../../src/gateway/main.js';
import { createMetrics } from '../../src/observability/metrics.js';
import { captureLogs } from '../support/log-capture.js';
import { waitUntil } from '../support/wait.js';

const EXAMPLES = fileURLToPath(new URL('../../examples/local/', import.meta.url));
let gw: GatewayHandle;
let client: OpenAI;

beforeAll(async () => {
  gw = await startGateway({
    source: ({ logger }) => new FileSource({ dir: EXAMPLES, logger, resyncMs: 0 }),
    host: '127.0.0.1',
    port: 0,
    metricsPort: null,
    logger: captureLogs('warn').logger,
    metrics: createMetrics({ defaultMetrics: false }),
    idKeys: [randomBytes(32)],
  });
  await gw.ready;
  client = new OpenAI({ baseURL: `${gw.apiURL}/v1`, apiKey: 'mg-demo-key', maxRetries: 0 });
});
afterAll(async () => {
  await gw.close({ timeoutMs: 1_000 });
});

describe('sealed ids on the demo backend', () => {
  it('video: create, poll until completed, download, remix, delete', async () => {
    const v = await client.videos.create({ model: 'demo-media', prompt: 'waves' });
    expect(v.id).toMatch(/^video_/);
    expect(v.id).not.toContain('demo'); // the demo's own id is wrapped
    await waitUntil(async () => (await client.videos.retrieve(v.id)).status === 'completed', 5_000, 'the video to complete');
    const content = await client.videos.downloadContent(v.id);
    expect(content.status).toBe(200);
    expect((await content.arrayBuffer()).byteLength).toBeGreaterThan(0);
    const remix = await client.videos.remix(v.id, { prompt: 'bigger waves' });
    expect(remix.remixed_from_video_id).toBe(v.id);
    expect((await client.videos.delete(v.id)).id).toBe(v.id);
  });

  it('responses: create, retrieve, input items, continue', async () => {
    const r = await client.responses.create({ model: 'demo-chat', input: 'hello' });
    expect((await client.responses.retrieve(r.id)).id).toBe(r.id);
    const items = await client.responses.inputItems.list(r.id);
    expect(items.data.length).toBeGreaterThan(0);
    const next = await client.responses.create({ model: 'demo-chat', input: 'again', previous_response_id: r.id });
    expect(next.previous_response_id).toBe(r.id);
  });
});
