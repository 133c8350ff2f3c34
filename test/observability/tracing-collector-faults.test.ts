// A collector that hangs, under load: the gateway as `serve` runs it (startGateway, its drain) with tracing always on,
// the official openai SDK as the client, and a loopback OTLP receiver that takes every export and never answers.
// Requests must not wait for the exporter, its queue must stay bounded (what does not fit is dropped and counted),
// and shutdown must not wait for the exporter's timeout past the drain deadline.
import { afterEach, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import type { GatewayHandle } from '../../src/gateway/main.js';
import { startFaultyUpstream, type FaultyUpstream } from '../fakes/faulty-upstream.js';
import { startOtlpReceiver, type OtlpReceiver } from '../fakes/otlp-receiver.js';
import { startServedGateway } from '../hardening/served-gateway.js';
import { tracingWith } from '../helpers/tracing.js';
import { waitUntil } from '../support/wait.js';

const KEY = 'sk-collector-faults-client-0123456789';

function manifests(upstream: string): string {
  return `
apiVersion: v1
kind: Secret
metadata: {name: keys, namespace: ns}
stringData: {client: ${KEY}, upstream: sk-collector-faults-upstream-0123}
---
apiVersion: modelgateway.io/v1alpha1
kind: ModelRoute
metadata: {name: chat, namespace: ns}
spec:
  model: gpt-4o-mini
  backends:
  - {name: primary, baseURL: "${upstream}", apiKeySecretRef: {name: keys, key: upstream}}
---
apiVersion: modelgateway.io/v1alpha1
kind: Group
metadata: {name: team, namespace: ns}
spec: {models: [gpt-4o-mini]}
---
apiVersion: modelgateway.io/v1alpha1
kind: GatewayToken
metadata: {name: alice, namespace: ns}
spec: {group: team, secretRef: {name: keys, key: client}}
`;
}

function counter(text: string, name: string): number {
  return Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(text)?.[1] ?? Number.NaN);
}

describe('a collector that never answers', () => {
  let upstream: FaultyUpstream | undefined;
  let receiver: OtlpReceiver | undefined;
  let gateway: (GatewayHandle & { logLines: string[] }) | undefined;

  afterEach(async () => {
    await gateway?.close({ timeoutMs: 0 });
    await receiver?.close();
    await upstream?.close();
  });

  it('slows no request, keeps its queue bounded (counting what it drops), and holds the exit no longer than the drain deadline', async () => {
    upstream = await startFaultyUpstream('primary');
    receiver = await startOtlpReceiver({ hang: true });
    const queue = 64;
    const batch = 16;
    // An export timeout far beyond the test's: only the drain deadline can end the shutdown in time.
    const tracing = tracingWith(receiver, {
      OTEL_TRACES_SAMPLER: 'always_on',
      OTEL_BSP_MAX_QUEUE_SIZE: String(queue),
      OTEL_BSP_MAX_EXPORT_BATCH_SIZE: String(batch),
      OTEL_EXPORTER_OTLP_TIMEOUT: '120000',
    });
    gateway = await startServedGateway(manifests(upstream.baseURL), { tracing, drainTimeoutMs: 500 });
    const client = new OpenAI({ apiKey: KEY, baseURL: `${gateway.apiURL}/v1`, maxRetries: 0 });

    const requests = 1000;
    const slowest: number[] = [];
    let next = 0;
    const worker = async () => {
      while (next < requests) {
        next++;
        const started = performance.now();
        await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] });
        slowest.push(performance.now() - started);
      }
    };
    await Promise.all(Array.from({ length: 8 }, worker));
    // An export in flight holds no request: none waited anywhere near the export timeout (a generous bound for a
    // busy machine).
    expect(Math.max(...slowest)).toBeLessThan(5_000);
    await waitUntil(() => receiver!.requests.length > 0, 5_000, 'the first export');

    // Two spans per request: at most one batch in flight and a full queue kept, every other span dropped and counted.
    const text = await gateway.metrics.registry.metrics();
    const dropped = counter(text, 'model_gateway_trace_spans_dropped_total');
    expect(dropped).toBeGreaterThanOrEqual(2 * requests - queue - batch);
    expect(counter(text, 'model_gateway_trace_spans_exported_total')).toBe(0);
    expect(gateway.logLines.some((l) => l.includes('trace export queue full'))).toBe(true);

    // The drain has nothing to wait for; the last spans get what is left of its deadline (or a moment), not 120 s.
    const closing = performance.now();
    await gateway.close();
    expect(performance.now() - closing).toBeLessThan(10_000);
    const lines = gateway.logLines
      .join('')
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    // Every drop is in the log by the exit: the first at once, the rest in the line written at shutdown.
    const reported = lines.filter((l) => String(l.msg).startsWith('trace export queue full')).reduce((n, l) => n + Number(l.queueFullSpans), 0);
    expect(reported).toBe(dropped);
    expect(lines.find((l) => l.msg === 'exporting the last spans failed')).toMatchObject({ error: expect.stringContaining('did not take the last spans') });
    gateway = undefined;
  }, 60_000);
});
