// The Prometheus registry and the gateway's metrics. Label values are bounded sets (family, model from the
// routing table, group, status class, backend id from config, outcome): never a raw key or a free-form string
// from a request; a model the table does not know is recorded as "unknown". Each createMetrics call makes a
// fresh Registry, so tests can build many apps without double registration.
import { collectDefaultMetrics, type OpenMetricsContentType, Registry } from 'prom-client';
import { SeriesCounter, SeriesHistogram } from './series-metrics.js';

/** OpenTelemetry GenAI semantic-convention bucket boundaries. */
const DURATION_BUCKETS = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92];
const TTFT_BUCKETS = [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10];
/** The gateway's own added time: tens of microseconds to tens of milliseconds. */
const OVERHEAD_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1];
const TOKEN_BUCKETS = [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864];

export const UNKNOWN = 'unknown';
export const NONE = 'none';

type RequestLabels = readonly [family: string, model: string, group: string, status_class: string];

export interface Metrics {
  readonly registry: Registry;
  readonly requests: SeriesCounter<RequestLabels>;
  readonly requestDuration: SeriesHistogram<RequestLabels>;
  readonly upstreamAttempts: SeriesCounter<readonly [backend: string, outcome: string]>;
  readonly timeToFirstToken: SeriesHistogram<readonly [family: string, model: string]>;
  readonly tokenUsage: SeriesHistogram<readonly [family: string, model: string, group: string, type: string]>;
  readonly overhead: SeriesHistogram<readonly [family: string]>;
  /** With exemplars: the registry in the OpenMetrics format, exemplars included (the classic format has none). */
  readonly openMetrics: (() => Promise<string>) | undefined;
}

export interface MetricsOptions {
  readonly defaultMetrics?: boolean;
  /** Keep a trace id per histogram bucket (tracing is on); served to scrapers that ask for OpenMetrics. */
  readonly exemplars?: boolean;
}

// The request path's metrics are series metrics (series-metrics.ts: prom-client's registry renders them, at a
// fraction of its own metrics' cost per observation); the rest of the gateway uses prom-client's metrics.
export function createMetrics(options: MetricsOptions = {}): Metrics {
  const registry = new Registry();
  if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: registry });
  const registers = [registry];
  const exemplars = options.exemplars ?? false;
  return {
    registry,
    openMetrics: exemplars ? () => openMetricsText(registry) : undefined,
    requests: new SeriesCounter({
      name: 'model_gateway_requests_total',
      help: 'Requests answered by the gateway, by API family, public model, group and status class.',
      labelNames: ['family', 'model', 'group', 'status_class'],
      registers,
    }),
    requestDuration: new SeriesHistogram({
      name: 'gen_ai_server_request_duration_seconds',
      help: 'Time from request arrival to the end of the response (streams included).',
      labelNames: ['family', 'model', 'group', 'status_class'],
      buckets: DURATION_BUCKETS,
      exemplars,
      registers,
    }),
    upstreamAttempts: new SeriesCounter({
      name: 'model_gateway_upstream_attempts_total',
      help: 'Upstream attempts by backend id (namespace/route/backend) and outcome (status class or failure kind).',
      labelNames: ['backend', 'outcome'],
      registers,
    }),
    timeToFirstToken: new SeriesHistogram({
      name: 'gen_ai_server_time_to_first_token_seconds',
      help: 'Time from request arrival to the first streamed body chunk of an event-stream response.',
      labelNames: ['family', 'model'],
      buckets: TTFT_BUCKETS,
      exemplars,
      registers,
    }),
    tokenUsage: new SeriesHistogram({
      name: 'gen_ai_client_token_usage',
      help: 'Tokens per request as reported by the upstream usage object, by group and type (input/output).',
      labelNames: ['family', 'model', 'group', 'type'],
      buckets: TOKEN_BUCKETS,
      exemplars,
      registers,
    }),
    overhead: new SeriesHistogram({
      name: 'model_gateway_overhead_seconds',
      help:
        "The gateway's own time per proxied request: time since arrival not spent waiting for upstream response " +
        'headers (summed over attempts); to the end of the response for non-streaming answers, to the headers for streams.',
      labelNames: ['family'],
      buckets: OVERHEAD_BUCKETS,
      registers,
    }),
  };
}

/**
 * The registry in the OpenMetrics text format. prom-client renders a registry in one format, and rendering counters
 * as OpenMetrics renames them (it strips `_total` from the metric's name, which the classic format would then
 * lose): so each counter is rendered through a view of its own (Object.create) that takes the rename instead.
 */
async function openMetricsText(registry: Registry): Promise<string> {
  const view = new Registry<OpenMetricsContentType>();
  view.setContentType(Registry.OPENMETRICS_CONTENT_TYPE);
  for (const m of registry.getMetricsAsArray()) {
    const metric = m as unknown as { type?: string };
    view.registerMetric((metric.type === 'counter' ? Object.create(metric) : metric) as never);
  }
  return view.metrics();
}

/** "2xx", "4xx", ... for a status code. */
export function statusClass(status: number): string {
  return `${Math.floor(status / 100)}xx`;
}
