// Request metrics and access logs through the real stack: labels from the table (never from the request),
// one log line per request with the agreed fields and nothing secret.
import { waitUntil } from '../support/wait.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRecordingUpstream, type RecordingUpstream } from '../fakes/recording-upstream.js';
import { ALICE_KEY, standardManifests, startGateway, type TestGateway } from '../helpers/gateway.js';

let upstream: RecordingUpstream;
let gw: TestGateway;

beforeAll(async () => {
  upstream = await startRecordingUpstream();
  gw = await startGateway(standardManifests(upstream.baseURL));
});
afterAll(async () => {
  await gw?.close();
  await upstream?.close();
});

async function metricValue(name: string, labels: Record<string, string>): Promise<number | undefined> {
  const metric = await gw.metrics.registry.getSingleMetric(name)?.get();
  const v = metric?.values.find((x) => Object.entries(labels).every(([k, val]) => x.labels[k] === val));
  return v?.value;
}

describe('metrics', () => {
  it('a request increments the counter with family, model, group and status class', async () => {
    const labels = { family: 'chat.completions', model: 'gpt-4o-mini', group: 'team-a', status_class: '2xx' };
    const before = (await metricValue('model_gateway_requests_total', labels)) ?? 0;
    await gw.client().chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'm' }] });
    // The counter is written when the exchange ends, just after the client has its answer.
    await waitUntil(async () => (await metricValue('model_gateway_requests_total', labels)) === before + 1, 2_000, 'the request counter');
    expect(await metricValue('model_gateway_requests_total', labels)).toBe(before + 1);
    expect(await metricValue('model_gateway_upstream_attempts_total', { backend: 'default/chat/primary', outcome: '2xx' })).toBeGreaterThanOrEqual(1);
    const text = await gw.metrics.registry.metrics();
    expect(text).toMatch(
      /gen_ai_server_request_duration_seconds_count\{family="chat.completions",model="gpt-4o-mini",group="team-a",status_class="2xx"\} [1-9]/,
    );
    expect(text).toMatch(/gen_ai_client_token_usage_sum\{family="chat.completions",model="gpt-4o-mini",group="team-a",type="input"\} 11\b/);
    expect(text).toMatch(/gen_ai_client_token_usage_sum\{family="chat.completions",model="gpt-4o-mini",group="team-a",type="output"\} 7\b/);
  });

  it('an unknown model is labelled "unknown", never with the name the client sent', async () => {
    await fetch(`${gw.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ALICE_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'attacker-chosen-name', messages: [] }),
    });
    const unknown = { family: 'chat.completions', model: 'unknown', status_class: '4xx' };
    await waitUntil(async () => (await metricValue('model_gateway_requests_total', unknown)) !== undefined, 2_000, 'the request counter');
    expect(await metricValue('model_gateway_requests_total', unknown)).toBe(1);
    expect(await gw.metrics.registry.metrics()).not.toContain('attacker-chosen-name');
  });

  it('usage of the responses API (input_tokens/output_tokens) is metered', async () => {
    await gw.client().responses.create({ model: 'gpt-4o-mini', input: 'x' });
    const usage = /gen_ai_client_token_usage_count\{family="responses",model="gpt-4o-mini",group="team-a",type="output"\} 1\b/;
    await waitUntil(async () => usage.test(await gw.metrics.registry.metrics()), 2_000, 'the usage histogram');
    expect(await gw.metrics.registry.metrics()).toMatch(usage);
  });

  it('createMetrics can be called many times (fresh registry each)', async () => {
    const { createMetrics } = await import('../../src/observability/metrics.js');
    const a = createMetrics({ defaultMetrics: false });
    const b = createMetrics({ defaultMetrics: false });
    a.requests.inc(['x', 'm', 'g', '2xx']);
    expect(await a.registry.metrics()).toContain('model_gateway_requests_total{family="x",model="m",group="g",status_class="2xx"} 1');
    expect(await b.registry.metrics()).not.toContain('family="x"');
  });
});

describe('access log', () => {
  it('one line per request with the request id and routing fields, no headers or bodies', async () => {
    const { response } = await gw.client().embeddings.create({ model: 'text-embedding-3-small', input: 'secret prompt text' }).withResponse();
    const id = response.headers.get('x-request-id');
    await waitUntil(() => gw.logs.some((l) => l['reqId'] === id), 2_000, 'the access-log line');
    const lines = gw.logs.filter((l) => l['reqId'] === id);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      msg: 'request',
      method: 'POST',
      path: '/v1/embeddings',
      status: 200,
      family: 'embeddings',
      model: 'text-embedding-3-small',
      group: 'team-a',
      backend: 'primary',
      attempts: 1,
    });
    expect(typeof lines[0]!['durationMs']).toBe('number');
    const text = gw.logText();
    expect(text).not.toContain('secret prompt text');
    expect(text).not.toContain(ALICE_KEY);
    expect(text).not.toMatch(/authorization/i);
  });
});
