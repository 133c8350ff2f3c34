import { describe, expect, it, vi } from 'vitest';
import { captureLogs } from '../../test/support/log-capture.js';
import { createMetrics } from '../observability/metrics.js';
import { ConfigPipeline } from './pipeline.js';
import { readinessCause } from '../compile/conditions.js';
import type { SourcedObject } from '../compile/resources.js';
import { TableHolder } from '../model/routing-table.js';

const GV = 'modelgateway.io/v1alpha1';
const objects = (withToken = true): SourcedObject[] => [
  { object: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'k' }, stringData: { token: 'client-secret-value' } }, source: { file: 's.yaml', line: 1 } },
  {
    object: { apiVersion: GV, kind: 'ModelRoute', metadata: { name: 'demo-chat' }, spec: { backends: [{ name: 'demo', baseURL: 'demo://' }] } },
    source: { file: 'r.yaml', line: 1 },
  },
  { object: { apiVersion: GV, kind: 'Group', metadata: { name: 'devs' }, spec: { models: ['demo-*'] } }, source: { file: 'g.yaml', line: 1 } },
  ...(withToken
    ? [
        {
          object: { apiVersion: GV, kind: 'GatewayToken', metadata: { name: 'alice' }, spec: { group: 'devs', secretRef: { name: 'k', key: 'token' } } },
          source: { file: 't.yaml', line: 1 },
        },
      ]
    : []),
  // Not ready: its group does not exist.
  {
    object: { apiVersion: GV, kind: 'GatewayToken', metadata: { name: 'bob' }, spec: { group: 'nobody', sha256: 'a'.repeat(64) } },
    source: { file: 't.yaml', line: 9 },
  },
];

describe('ConfigPipeline', () => {
  it('compiles a snapshot, swaps the table with a counted version, and points demo:// at the demo backend', () => {
    const tables = new TableHolder();
    const logs = captureLogs();
    const pipeline = new ConfigPipeline({ tables, logger: logs.logger, demoBaseURL: 'http://127.0.0.1:4321/v1' });
    expect(pipeline.loaded).toBe(false);
    pipeline.apply({ objects: objects() });
    expect(pipeline.loaded).toBe(true);
    expect(tables.get()?.version).toBe(1);
    expect(tables.get()?.routes.get('demo-chat')?.backends[0]?.baseURL).toBe('http://127.0.0.1:4321/v1');
    expect(tables.get()?.tokensByDigest.size).toBe(1);
    pipeline.apply({ objects: objects(false) });
    expect(tables.get()?.version).toBe(2);
    expect(tables.get()?.tokensByDigest.size).toBe(0);
  });

  it('logs each object that is not Ready with reason, message and file:line, and never a Secret value', () => {
    const logs = captureLogs();
    const pipeline = new ConfigPipeline({ tables: new TableHolder(), logger: logs.logger });
    pipeline.apply({ objects: objects() });
    const bob = logs.records.find((r) => r.object === 'GatewayToken/default/bob');
    expect(bob).toMatchObject({ level: 40, reason: 'GroupNotFound', at: 't.yaml:9' });
    expect(String(bob!.message)).toContain('Group "nobody" not found');
    expect(logs.records.some((r) => r.object === 'GatewayToken/default/alice')).toBe(false);
    const summary = logs.records.find((r) => r.version === 1);
    expect(summary).toMatchObject({ routes: 1, groups: 1, tokens: 1, notReady: 1 });
    expect(logs.text()).not.toContain('client-secret-value');
  });

  it('gives a not-Ready object the reason its status and `check` give: a missing Secret key is SecretKeyNotFound', () => {
    const logs = captureLogs();
    const pipeline = new ConfigPipeline({ tables: new TableHolder(), logger: logs.logger });
    const carol: SourcedObject = {
      object: { apiVersion: GV, kind: 'GatewayToken', metadata: { name: 'carol' }, spec: { group: 'devs', secretRef: { name: 'k', key: 'missing' } } },
      source: { file: 't.yaml', line: 20 },
    };
    const result = pipeline.apply({ objects: [...objects(), carol] });
    const status = result.statuses.find((s) => s.ref === 'GatewayToken/default/carol')!;
    const refs = status.conditions.find((c) => c.type === 'ResolvedRefs');
    expect(refs).toMatchObject({ status: 'False', reason: 'SecretKeyNotFound' });
    expect(readinessCause(status)?.reason).toBe('SecretKeyNotFound'); // what `check` reports (check-report.ts)
    const logged = logs.records.find((r) => r.object === 'GatewayToken/default/carol');
    expect(logged).toMatchObject({ level: 40, reason: 'SecretKeyNotFound', message: refs!.message, at: 't.yaml:20' });
    expect(String(logged!.msg)).toContain('is not ready: SecretKeyNotFound: Secret "k" has no key "missing"');
  });

  it('notifies listeners with each compile result; a failing listener is logged and does not stop the others', () => {
    const logs = captureLogs();
    const pipeline = new ConfigPipeline({ tables: new TableHolder(), logger: logs.logger });
    const seen: number[] = [];
    pipeline.onCompiled(() => {
      throw new Error('listener broke');
    });
    const off = pipeline.onCompiled((result, snapshot) => {
      seen.push(result.table.version);
      expect(snapshot.objects.length).toBeGreaterThan(0);
      expect(result.statuses.map((s) => s.ref)).toContain('GatewayToken/default/bob');
    });
    pipeline.apply({ objects: objects() });
    off();
    pipeline.apply({ objects: objects() });
    expect(seen).toEqual([1]);
    expect(logs.records.some((r) => r.msg === 'a config listener failed' && r.error === 'listener broke')).toBe(true);
    expect(pipeline.last?.table.version).toBe(2);
  });

  it('records compile duration, reloads, version and object readiness in the registry', async () => {
    const metrics = createMetrics({ defaultMetrics: false });
    const logs = captureLogs();
    const pipeline = new ConfigPipeline({ tables: new TableHolder(), logger: logs.logger, metrics });
    pipeline.apply({ objects: objects() });
    pipeline.apply({ objects: objects() });
    // A second pipeline on the same registry reuses the metrics instead of failing to register them.
    new ConfigPipeline({ tables: new TableHolder(), logger: logs.logger, metrics }).apply({ objects: objects() });
    const text = await metrics.registry.metrics();
    expect(text).toMatch(/^model_gateway_config_compile_duration_seconds_count 3$/m);
    expect(text).toMatch(/^model_gateway_config_reloads_total 3$/m);
    expect(text).toMatch(/^model_gateway_config_objects\{kind="GatewayToken",ready="false"\} 1$/m);
    expect(text).toMatch(/^model_gateway_config_objects\{kind="ModelRoute",ready="true"\} 1$/m);
  });

  it('compiles the same snapshot again when a token expires, so its status says Expired without another change', () => {
    vi.useFakeTimers({ now: Date.parse('2030-01-01T00:00:00Z') });
    try {
      const pipeline = new ConfigPipeline({ tables: new TableHolder(), logger: captureLogs().logger });
      const statuses: string[] = [];
      pipeline.onCompiled((r) => statuses.push(String(readinessCause(r.statuses.find((s) => s.name === 'alice')!)?.reason ?? 'Ready')));
      const expiring = objects().map((o) =>
        o.object.metadata?.name === 'alice' ? { ...o, object: { ...o.object, spec: { ...(o.object.spec as object), expiresAt: '2030-01-01T00:00:05Z' } } } : o,
      );
      pipeline.apply({ objects: expiring });
      vi.advanceTimersByTime(4_999);
      expect(statuses).toEqual(['Ready']);
      vi.advanceTimersByTime(1);
      expect(statuses).toEqual(['Ready', 'Expired']);
      // Nothing left to expire: no further compiles.
      vi.advanceTimersByTime(60_000);
      expect(statuses).toEqual(['Ready', 'Expired']);
      // A new snapshot replaces the timer; stop() clears it.
      pipeline.apply({
        objects: objects().map((o) =>
          o.object.metadata?.name === 'alice'
            ? { ...o, object: { ...o.object, spec: { ...(o.object.spec as object), expiresAt: '2030-01-01T00:02:00Z' } } }
            : o,
        ),
      });
      pipeline.stop();
      vi.advanceTimersByTime(120_000);
      expect(statuses).toEqual(['Ready', 'Expired', 'Ready']);
    } finally {
      vi.useRealTimers();
    }
  });
});
