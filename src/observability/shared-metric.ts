// A metric registered once per registry. Several config pipelines or Kubernetes sources may share one registry
// (tests start many gateways in a process), and prom-client refuses a second registration of a name, so the
// metric already registered under the name is reused.
import type { Counter, Gauge, Histogram, CounterConfiguration, GaugeConfiguration, HistogramConfiguration, Registry } from 'prom-client';
import type { LabelTuple, SeriesCounter, SeriesCounterConfig } from './series-metrics.js';

/** The metric named `config.name` in `registry`, registering `new Metric(config)` there if it has none yet. */
export function sharedMetric<T extends string>(registry: Registry, Metric: typeof Counter, config: CounterConfiguration<T>): Counter<T>;
export function sharedMetric<T extends string>(registry: Registry, Metric: typeof Gauge, config: GaugeConfiguration<T>): Gauge<T>;
export function sharedMetric<T extends string>(registry: Registry, Metric: typeof Histogram, config: HistogramConfiguration<T>): Histogram<T>;
export function sharedMetric<V extends LabelTuple>(registry: Registry, Metric: typeof SeriesCounter, config: SeriesCounterConfig): SeriesCounter<V>;
export function sharedMetric(registry: Registry, Metric: new (config: never) => unknown, config: { name: string }): unknown {
  return registry.getSingleMetric(config.name) ?? new Metric({ ...config, registers: [registry] } as never);
}
