// The metrics port's only route: GET /metrics in Prometheus text format. Kept off the API port so scrapes need
// no client key and /metrics is never reachable through the public ingress.
import type { RequestListener } from 'node:http';

/** What the handler needs of a registry: prom-client's Registry, or a cluster aggregator wrapped the same way. */
export interface MetricsSource {
  metrics(): Promise<string>;
  readonly contentType: string;
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
    registry.metrics().then(
      (text) => {
        res.writeHead(200, { 'content-type': registry.contentType });
        res.end(req.method === 'HEAD' ? undefined : text);
      },
      (err: unknown) => {
        res.writeHead(500, { 'content-type': 'text/plain' });
        res.end(`collecting metrics failed: ${(err as Error).message}\n`);
      },
    );
  };
}
