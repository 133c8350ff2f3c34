// The Grafana dashboard is valid JSON whose queries use the gateway's metric names with label names those metrics
// really have, counters through rate() and histograms through their _bucket/_sum/_count series.
import { describe, expect, it } from 'vitest';
import { TableHolder } from '../../src/model/routing-table.js';
import { pipelineMetrics } from '../../src/runtime/pipeline-metrics.js';
import { registerBackendStateGauge } from '../../src/dataplane/observe/backend-metrics.js';
import { createMetrics } from '../../src/observability/metrics.js';
import { BackendHealth } from '../../src/dataplane/policy/health.js';
import { usageRecorder } from '../../src/features/usage/usage-metrics.js';
import { read } from './repo.js';

type MetricInfo = { type: 'counter' | 'histogram' | 'gauge' | 'summary'; labels: string[] };

/** Label names per metric, read from the gateway's own registry (default process metrics included). */
async function gatewayMetrics(): Promise<Record<string, MetricInfo>> {
  const metrics = createMetrics({ defaultMetrics: true });
  const { registry } = metrics;
  // Registered by the app and the config pipeline on the same registry.
  registerBackendStateGauge(registry, new TableHolder(), new BackendHealth());
  pipelineMetrics(registry);
  usageRecorder(metrics, registry, {});
  const out: Record<string, MetricInfo> = {};
  for (const m of registry.getMetricsAsArray() as unknown as { name: string; labelNames?: string[]; get(): Promise<{ type: string }> }[]) {
    out[m.name] = { type: (await m.get()).type as MetricInfo['type'], labels: [...(m.labelNames ?? [])] };
  }
  return out;
}
const METRIC_LABELS = await gatewayMetrics();
const DASHBOARD_METRICS = [
  'model_gateway_requests_total',
  'model_gateway_cost_total',
  'gen_ai_server_request_duration_seconds',
  'model_gateway_upstream_attempts_total',
  'gen_ai_server_time_to_first_token_seconds',
  'gen_ai_client_token_usage',
  'model_gateway_backend_state',
  'model_gateway_config_objects',
  'model_gateway_config_reloads_total',
  'model_gateway_config_compile_duration_seconds',
  'process_resident_memory_bytes',
  'nodejs_eventloop_lag_p99_seconds',
];
/** Labels Prometheus adds to every scraped series (ServiceMonitor target labels). */
const TARGET_LABELS = ['namespace', 'pod', 'container', 'service', 'job', 'instance', 'endpoint'];

interface Panel {
  type: string;
  title: string;
  datasource?: { uid: string };
  targets?: { expr: string; refId: string }[];
}
const dashboard = JSON.parse(read('charts/model-gateway/dashboards/model-gateway.json')) as {
  uid: string;
  title: string;
  panels: Panel[];
  templating: { list: { name: string; type: string; query: unknown }[] };
};
const panels = dashboard.panels.filter((p) => p.type !== 'row');
const exprs = panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr));
const templateQueries = dashboard.templating.list
  .map((v) => (typeof v.query === 'object' && v.query !== null ? (v.query as { query: string }).query : String(v.query)))
  .filter((q) => q.includes('('));

/** Each metric selector in a PromQL expression: base metric name, series suffix and matcher label names. */
function selectors(expr: string) {
  return [...expr.matchAll(/\b([a-z_:][a-z0-9_:]*)\{([^}]*)\}/g)].map((m) => {
    const series = m[1]!;
    const suffix = /_(bucket|sum|count)$/.exec(series)?.[1];
    const base = suffix && METRIC_LABELS[series.slice(0, -suffix.length - 1)] ? series.slice(0, -suffix.length - 1) : series;
    const labels = [...m[2]!.matchAll(/([a-z_][a-z0-9_]*)\s*(=~|!~|!=|=)/g)].map((l) => l[1]!);
    return { series, base, suffix, labels };
  });
}

describe('Grafana dashboard (charts/model-gateway/dashboards/model-gateway.json)', () => {
  it('is a dashboard with a uid, a data source variable and panels bound to it', () => {
    expect(dashboard.uid).toBe('model-gateway');
    expect(dashboard.templating.list.find((v) => v.name === 'datasource')?.type).toBe('datasource');
    expect(panels.length).toBeGreaterThanOrEqual(10);
    for (const p of panels) {
      // biome-ignore lint/suspicious/noTemplateCurlyInString: Grafana's own variable syntax, literally.
      expect(p.datasource?.uid, p.title).toBe('${datasource}');
      expect(p.targets?.length, p.title).toBeGreaterThan(0);
    }
  });

  it('charts each of the gateway metrics', () => {
    const all = exprs.join('\n');
    for (const name of DASHBOARD_METRICS) expect(all, name).toMatch(new RegExp(`\\b${name}(_bucket|_sum|_count)?\\{`));
  });

  it.each(exprs)('%s', (expr) => {
    const found = selectors(expr);
    expect(found.length).toBeGreaterThan(0);
    const allowed = new Set(TARGET_LABELS);
    for (const s of found) {
      const metric = METRIC_LABELS[s.base];
      expect(metric, `unknown metric ${s.series}`).toBeDefined();
      for (const l of metric!.labels) allowed.add(l);
      for (const l of s.labels) expect(metric!.labels.concat(TARGET_LABELS), `${s.series}{${l}}`).toContain(l);
      if (metric!.type === 'histogram') {
        expect(s.suffix, `${s.series}: use _bucket, _sum or _count`).toBeDefined();
        if (s.suffix === 'bucket') expect(expr).toMatch(/histogram_quantile\(/);
      }
      if (metric!.type === 'counter' || s.suffix === 'sum' || s.suffix === 'count')
        expect(expr, `${s.series} needs rate()`).toMatch(new RegExp(`rate\\(${s.series}\\{`));
    }
    if (found.some((s) => s.suffix === 'bucket')) allowed.add('le');
    for (const m of expr.matchAll(/\bby \(([^)]*)\)/g)) for (const l of m[1]!.split(',').map((x) => x.trim())) expect([...allowed], `by (${l})`).toContain(l);
  });

  it.each(templateQueries)('variable query %s names a label the metric has', (query) => {
    const m = /^label_values\(([a-z_:][a-z0-9_:]*)(\{[^}]*\})?,\s*([a-z_][a-z0-9_]*)\)$/.exec(query);
    expect(m, query).not.toBeNull();
    const metric = METRIC_LABELS[m![1]!];
    expect(metric, m![1]).toBeDefined();
    expect(metric!.labels.concat(TARGET_LABELS)).toContain(m![3]);
    for (const s of selectors(query)) for (const l of s.labels) expect(metric!.labels.concat(TARGET_LABELS)).toContain(l);
  });
});
