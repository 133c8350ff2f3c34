// Config pipeline metrics: compile duration, table version and object readiness, registered once per registry
// (sharedMetric), so several pipelines (tests) can share one.
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { sharedMetric } from '../observability/shared-metric.js';
import type { CompileResult } from '../compile/compile.js';
import { isReady } from '../compile/conditions.js';

export interface PipelineMetrics {
  record(seconds: number, result: CompileResult): void;
}

export function pipelineMetrics(registry: Registry): PipelineMetrics {
  const duration = sharedMetric(registry, Histogram, {
    name: 'model_gateway_config_compile_duration_seconds',
    help: 'Time to compile a config snapshot into a routing table.',
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1],
  });
  const reloads = sharedMetric(registry, Counter, {
    name: 'model_gateway_config_reloads_total',
    help: 'Config snapshots compiled and swapped in.',
  });
  const version = sharedMetric(registry, Gauge, {
    name: 'model_gateway_config_version',
    help: 'Version number of the routing table serving (increases with every compile in this process).',
    aggregator: 'max', // --workers: every worker compiles the same config; summing would multiply it
  });
  const objects = sharedMetric(registry, Gauge, {
    name: 'model_gateway_config_objects',
    help: 'Config objects in the latest compile, by kind and readiness.',
    labelNames: ['kind', 'ready'] as const,
    aggregator: 'max',
  });
  const lastReload = sharedMetric(registry, Gauge, {
    name: 'model_gateway_config_last_reload_timestamp_seconds',
    help: 'Unix time of the latest table swap.',
    aggregator: 'max',
  });
  return {
    record(seconds, result) {
      duration.observe(seconds);
      reloads.inc();
      version.set(result.table.version);
      lastReload.set(Date.now() / 1000);
      objects.reset();
      for (const kind of ['ModelRoute', 'Group', 'GatewayToken']) {
        objects.set({ kind, ready: 'true' }, 0);
        objects.set({ kind, ready: 'false' }, 0);
      }
      for (const s of result.statuses) objects.inc({ kind: s.kind, ready: isReady(s) ? 'true' : 'false' });
    },
  };
}
