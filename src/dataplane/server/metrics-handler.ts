// The metrics port's only route: GET /metrics in Prometheus text format. Kept off the API port so scrapes need
// no client key and /metrics is never reachable through the public ingress. When the source can render
// OpenMetrics (tracing on: histograms carry trace ids as exemplars), a scraper that asks for it in Accept
// (Prometheus does) gets that format; every other scraper keeps the classic text format.
import type { RequestListener } from 'node:http';
import { Registry } from 'prom-client';

/** What the handler needs of a registry: prom-client's Registry, or a cluster aggregator wrapped the same way. */
export interface MetricsSource {
  metrics(): Promise<string>;
  readonly contentType: string;
  /** The same metrics in the OpenMetrics format, with exemplars; absent: classic text only. */
  readonly openMetrics?: (() => Promise<string>) | undefined;
}

/** True when an Accept header lists the OpenMetrics text format (with a non-zero weight). */
export function acceptsOpenMetrics(accept: string | undefined): boolean {
  if (!accept) return false;
  return accept.split(',').some((part) => {
    const [type, ...params] = part.split(';').map((p) => p.trim().toLowerCase());
    if (type !== 'application/openmetrics-text') return false;
    const q = params.find((p) => p.startsWith('q='));
    return q === undefined || Number(q.slice(2)) > 0;
  });
}

export function metricsHandler(registry: MetricsSource): RequestListener {
  return (req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/metrics') {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          error: { message: `no route ${path} on the metrics port; try /metrics`, type: 'invalid_request_error', param: null, code: 'unknown_url' },
        }),
      );
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { 'content-type': 'application/json', allow: 'GET, HEAD' });
      res.end(JSON.stringify({ error: { message: 'use GET /metrics', type: 'invalid_request_error', param: null, code: 'method_not_allowed' } }));
      return;
    }
    const open = registry.openMetrics !== undefined && acceptsOpenMetrics(req.headers.accept);
    (open ? registry.openMetrics!() : registry.metrics()).then(
      (text) => {
        res.writeHead(200, { 'content-type': open ? Registry.OPENMETRICS_CONTENT_TYPE : registry.contentType });
        res.end(req.method === 'HEAD' ? undefined : text);
      },
      (err: unknown) => {
        res.writeHead(500, { 'content-type': 'text/plain' });
        res.end(`collecting metrics failed: ${(err as Error).message}\n`);
      },
    );
  };
}
