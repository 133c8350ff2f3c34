import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { compile } from '../../compile/compile.js';
import { TableHolder } from '../../model/routing-table.js';
import { BackendHealth } from '../policy/health.js';
import { registerBackendStateGauge } from './backend-metrics.js';

const table = (backends: string[]) =>
  compile([
    {
      object: {
        apiVersion: 'modelgateway.io/v1alpha1',
        kind: 'ModelRoute',
        metadata: { name: 'm', namespace: 'ns' },
        spec: { backends: backends.map((name) => ({ name, baseURL: 'http://127.0.0.1:9/v1' })) },
      },
    },
  ]).table;

describe('model_gateway_backend_state', () => {
  it('shows each configured backend in exactly one state and follows reloads', async () => {
    const registry = new Registry();
    const tables = new TableHolder();
    const health = new BackendHealth({ consecutiveFailures: 1 });
    registerBackendStateGauge(registry, tables, health);
    tables.set(table(['a', 'b']));
    health.recordFailure('ns/m/a');
    let text = await registry.metrics();
    expect(text).toContain('model_gateway_backend_state{backend="ns/m/a",state="ejected"} 1');
    expect(text).toContain('model_gateway_backend_state{backend="ns/m/a",state="healthy"} 0');
    expect(text).toContain('model_gateway_backend_state{backend="ns/m/b",state="healthy"} 1');
    tables.set(table(['b']));
    text = await registry.metrics();
    expect(text).not.toContain('ns/m/a');
    expect(text).toContain('model_gateway_backend_state{backend="ns/m/b",state="healthy"} 1');
  });
});
