// The gateway reports its own overhead: a Server-Timing header on every proxied answer (upstream = waiting for
// the upstream's response headers, gateway = the rest) and the model_gateway_overhead_seconds histogram.
// The upstream here waits a known time before answering, so the split can be checked, not just the format.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitUntil } from '../support/wait.js';
import { startRecordingUpstream, type RecordingUpstream } from '../fakes/recording-upstream.js';
import { deadBaseURL, extraRoute, standardManifests, startGateway, type TestGateway } from '../helpers/gateway.js';

const UPSTREAM_DELAY_MS = 120;
const HEADER = /^gateway;dur=(\d+\.\d{3}), upstream;dur=(\d+\.\d{3})$/;

let upstream: RecordingUpstream;
let gw: TestGateway;

beforeAll(async () => {
  upstream = await startRecordingUpstream();
  const slow = `${upstream.origin}/slow/v1`;
  upstream.override('/slow/v1/chat/completions', async (_req, res, body) => {
    await sleep(UPSTREAM_DELAY_MS);
    const stream = (JSON.parse(body.toString()) as { stream?: boolean }).stream === true;
    if (stream) {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const chunk = {
        id: 'c',
        object: 'chat.completion.chunk',
        created: 1,
        model: 'm',
        choices: [{ index: 0, delta: { content: 'hi' }, finish_reason: 'stop' }],
      };
      res.end(`data: ${JSON.stringify(chunk)}\n\ndata: [DONE]\n\n`);
      return;
    }
    const text = JSON.stringify({
      id: 'c',
      object: 'chat.completion',
      created: 1,
      model: 'm',
      choices: [{ index: 0, message: { role: 'assistant', content: 'slow hello' }, finish_reason: 'stop', logprobs: null }],
    });
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  });
  const dead = await deadBaseURL();
  gw = await startGateway(
    standardManifests(
      upstream.baseURL,
      extraRoute('extra-slow', [{ name: 'slow', baseURL: slow }]) +
        // A dead first tier: the second attempt answers, and both attempts count as upstream time.
        extraRoute('extra-failover', [
          { name: 'dead', baseURL: dead, priority: 0 },
          { name: 'slow', baseURL: slow, priority: 1 },
        ]),
    ),
  );
});
afterAll(async () => {
  await gw?.close();
  await upstream?.close();
});

async function overheadCount(family: string): Promise<number> {
  const metric = await gw.metrics.registry.getSingleMetric('model_gateway_overhead_seconds')?.get();
  // Histogram values carry the series name (…_bucket, …_sum, …_count) at runtime; prom-client's type omits it.
  const v = metric?.values.find((x) => (x as { metricName?: string }).metricName === 'model_gateway_overhead_seconds_count' && x.labels['family'] === family);
  return v?.value ?? 0;
}

/** Requests for an unknown model the gateway answered itself (4xx, labelled "unknown"). */
async function refusedCount(): Promise<number> {
  const metric = await gw.metrics.registry.getSingleMetric('model_gateway_requests_total')?.get();
  return metric?.values.filter((x) => x.labels['model'] === 'unknown').reduce((a, x) => a + x.value, 0) ?? 0;
}

function split(header: string | null): { gateway: number; upstream: number } {
  const m = HEADER.exec(header ?? '');
  expect(m, `Server-Timing was ${header}`).not.toBeNull();
  return { gateway: Number(m![1]), upstream: Number(m![2]) };
}

describe('Server-Timing', () => {
  it('splits a non-streaming answer into the upstream wait and the gateway rest', async () => {
    const before = await overheadCount('chat.completions');
    const t0 = performance.now();
    const { data, response } = await gw
      .client()
      .chat.completions.create({ model: 'extra-slow', messages: [{ role: 'user', content: 'hi' }] })
      .withResponse();
    const elapsed = performance.now() - t0;
    expect(data.choices[0]?.message.content).toBe('slow hello');
    const t = split(response.headers.get('server-timing'));
    expect(t.upstream).toBeGreaterThanOrEqual(UPSTREAM_DELAY_MS - 1);
    expect(t.upstream + t.gateway).toBeLessThanOrEqual(elapsed);
    expect(t.gateway).toBeLessThan(t.upstream);
    // Observed when the exchange ends, just after the client has its answer.
    await waitUntil(async () => (await overheadCount('chat.completions')) === before + 1, 2_000, 'the overhead histogram');
    expect(await overheadCount('chat.completions')).toBe(before + 1);
  });

  it('is sent with a stream, before its first event', async () => {
    const before = await overheadCount('chat.completions');
    const { data: stream, response } = await gw
      .client()
      .chat.completions.create({ model: 'extra-slow', messages: [{ role: 'user', content: 'hi' }], stream: true })
      .withResponse();
    const t = split(response.headers.get('server-timing'));
    expect(t.upstream).toBeGreaterThanOrEqual(UPSTREAM_DELAY_MS - 1);
    const chunks = [];
    for await (const c of stream) chunks.push(c);
    expect(chunks).toHaveLength(1);
    expect(await overheadCount('chat.completions')).toBe(before + 1);
  });

  it('counts every attempt as upstream time when a request fails over', async () => {
    const { response } = await gw
      .client()
      .chat.completions.create({ model: 'extra-failover', messages: [{ role: 'user', content: 'hi' }] })
      .withResponse();
    expect(response.headers.get('x-model-gateway-attempts')).toBe('2');
    const t = split(response.headers.get('server-timing'));
    expect(t.upstream).toBeGreaterThanOrEqual(UPSTREAM_DELAY_MS - 1);
  });

  it('exports the histogram with sub-millisecond buckets, by family only', async () => {
    await gw.client().embeddings.create({ model: 'text-embedding-3-small', input: 'x' });
    await waitUntil(async () => (await overheadCount('embeddings')) === 1, 2_000, 'the overhead histogram');
    const text = await gw.metrics.registry.metrics();
    expect(text).toContain('# TYPE model_gateway_overhead_seconds histogram');
    expect(text).toMatch(/model_gateway_overhead_seconds_bucket\{le="0.0005",family="embeddings"\} \d+/);
    expect(text).toMatch(/model_gateway_overhead_seconds_count\{family="embeddings"\} 1\b/);
  });

  it('is not observed for requests the gateway answers itself', async () => {
    const before = await overheadCount('chat.completions');
    const refusedBefore = await refusedCount();
    await expect(gw.client().chat.completions.create({ model: 'no-such-model', messages: [] })).rejects.toThrow();
    // The request counter is written by the same end of the exchange that would observe the overhead.
    await waitUntil(async () => (await refusedCount()) === refusedBefore + 1, 2_000, 'the request counter');
    expect(await overheadCount('chat.completions')).toBe(before);
  });
});
