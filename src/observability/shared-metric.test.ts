import { Counter, Gauge, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { sharedMetric } from './shared-metric.js';

describe('sharedMetric', () => {
  it('registers a metric once per registry and hands the registered one back after that', async () => {
    const registry = new Registry();
    const a = sharedMetric(registry, Counter, { name: 'x_total', help: 'x', labelNames: ['k'] as const });
    const b = sharedMetric(registry, Counter, { name: 'x_total', help: 'x', labelNames: ['k'] as const });
    expect(b).toBe(a);
    a.inc({ k: 'v' });
    expect(await registry.metrics()).toContain('x_total{k="v"} 1');
    const other = new Registry();
    expect(sharedMetric(other, Counter, { name: 'x_total', help: 'x' })).not.toBe(a);
    expect(sharedMetric(registry, Gauge, { name: 'y', help: 'y' })).toBeInstanceOf(Gauge);
  });
});
