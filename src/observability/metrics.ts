// The Prometheus registry. Label values are bounded sets (family, model from config, group, status class):
// never a raw key or a free-form string from a request.
import { collectDefaultMetrics, Registry } from 'prom-client';

export interface Metrics {
  readonly registry: Registry;
}

export function createMetrics(options: { defaultMetrics?: boolean } = {}): Metrics {
  const registry = new Registry();
  if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: registry });
  return { registry };
}
