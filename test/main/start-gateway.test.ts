// startGateway wiring: readiness only after the first complete load, metrics on their own port, orderly close.
import { afterEach, describe, expect, it } from 'vitest';
import type { ConfigSnapshot, ConfigSource } from '../../src/sources/source.js';
import { startGateway, type GatewayHandle } from '../../src/gateway/main.js';
import { createMetrics } from '../../src/observability/metrics.js';
import { captureLogs } from '../support/log-capture.js';

const GV = 'modelgateway.io/v1alpha1';
const snapshot: ConfigSnapshot = {
  objects: [
    { object: { apiVersion: GV, kind: 'ModelRoute', metadata: { name: 'demo-chat' }, spec: { backends: [{ name: 'demo', baseURL: 'demo://' }] } } },
    { object: { apiVersion: GV, kind: 'Group', metadata: { name: 'g' }, spec: { models: ['*'] } } },
  ],
};

/** A source whose first snapshot arrives when the test says so (like a slow first list from the API server). */
class GatedSource implements ConfigSource {
  stopped = false;
  #release: (() => void) | undefined;
  #fail: ((e: Error) => void) | undefined;
  async start(onSnapshot: (s: ConfigSnapshot) => void): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.#release = resolve;
      this.#fail = reject;
    });
    onSnapshot(snapshot);
  }
  async stop(): Promise<void> {
    this.stopped = true;
  }
  release(): void {
    this.#release?.();
  }
  fail(message: string): void {
    this.#fail?.(new Error(message));
  }
}

describe('startGateway', () => {
  let handle: GatewayHandle | undefined;
  afterEach(async () => {
    await handle?.close({ timeoutMs: 0 });
    handle = undefined;
  });

  const start = async (source: ConfigSource, extra: { maxBufferedBytes?: number } = {}) =>
    (handle = await startGateway({
      source: () => source,
      host: '127.0.0.1',
      port: 0,
      metricsPort: 0,
      logger: captureLogs().logger,
      metrics: createMetrics({ defaultMetrics: false }),
      ...extra,
    }));

  it('is live at once but ready only after the first complete config load', async () => {
    const source = new GatedSource();
    const h = await start(source);
    expect((await fetch(`${h.apiURL}/healthz`)).status).toBe(200);
    const before = await fetch(`${h.apiURL}/readyz`);
    expect(before.status).toBe(503);
    expect(await before.json()).toEqual({ status: 'not ready' });
    expect(h.tables.get()).toBeUndefined();

    source.release();
    await h.ready;
    expect((await fetch(`${h.apiURL}/readyz`)).status).toBe(200);
    expect(h.tables.get()?.routes.get('demo-chat')?.backends[0]?.baseURL).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
  });

  it('serves /metrics on the metrics port only', async () => {
    const source = new GatedSource();
    const h = await start(source);
    source.release();
    await h.ready;
    expect(h.metricsAddress?.port).not.toBe(h.apiAddress.port);
    const m = await fetch(`${h.metricsURL}/metrics`);
    expect(m.status).toBe(200);
    expect(m.headers.get('content-type')).toContain('text/plain');
    expect(await m.text()).toMatch(/^model_gateway_config_reloads_total 1$/m);
    expect((await fetch(`${h.apiURL}/metrics`)).status).toBe(404);
    expect((await fetch(`${h.metricsURL}/v1/models`)).status).toBe(404);
  });

  it('passes --max-buffered-bytes to the app, and derives a default without it', async () => {
    const source = new GatedSource();
    const h = await start(source, { maxBufferedBytes: 3 * 1024 * 1024 });
    source.release();
    await h.ready;
    const text = await (await fetch(`${h.metricsURL}/metrics`)).text();
    expect(text).toMatch(/^model_gateway_buffered_body_limit_bytes 3145728$/m);
    expect(text).toMatch(/^model_gateway_buffered_body_bytes 0$/m);
    await h.close({ timeoutMs: 0 });
    const other = new GatedSource();
    const d = await start(other);
    const limit = Number(/^model_gateway_buffered_body_limit_bytes (\d+)$/m.exec(await (await fetch(`${d.metricsURL}/metrics`)).text())?.[1]);
    expect(limit).toBeGreaterThanOrEqual(32 * 1024 * 1024);
    expect(limit).toBeLessThanOrEqual(512 * 1024 * 1024);
    other.release();
  });

  it('reports a source that cannot load: ready rejects and /readyz stays 503', async () => {
    const source = new GatedSource();
    const h = await start(source);
    source.fail('no such directory');
    await expect(h.ready).rejects.toThrow('no such directory');
    expect((await fetch(`${h.apiURL}/readyz`)).status).toBe(503);
  });

  it('close() fails readiness at once, stops the source and frees both ports', async () => {
    const source = new GatedSource();
    const h = await start(source);
    source.release();
    await h.ready;
    expect(h.isReady()).toBe(true);
    const closing = h.close({ timeoutMs: 1_000 });
    expect(h.isReady()).toBe(false);
    expect(await closing).toEqual({ completed: true, cut: 0 });
    expect(source.stopped).toBe(true);
    await expect(fetch(`${h.apiURL}/healthz`)).rejects.toThrow();
    await expect(fetch(`${h.metricsURL}/metrics`)).rejects.toThrow();
    expect(await h.close()).toEqual({ completed: true, cut: 0 }); // idempotent
  });
});
