// model_gateway_buffered_body_bytes: request-body bytes the process holds in memory right now (the body budget's
// use), next to its limit, read at scrape time so there is no bookkeeping beside the budget itself.
import { Gauge, type Registry } from 'prom-client';
import type { BodyBudget } from '../request/body-budget.js';

const BUFFERED_BODY_BYTES = 'model_gateway_buffered_body_bytes';
const BUFFERED_BODY_LIMIT = 'model_gateway_buffered_body_limit_bytes';

export function registerBufferedBodyGauge(registry: Registry, budget: BodyBudget): void {
  // One app per registry in production; when a registry is reused (tests), the newest app's budget is the one shown.
  for (const name of [BUFFERED_BODY_BYTES, BUFFERED_BODY_LIMIT]) if (registry.getSingleMetric(name)) registry.removeSingleMetric(name);
  new Gauge({
    name: BUFFERED_BODY_BYTES,
    help: 'Request-body bytes held in memory by requests in flight (raw bodies and their rewritten copies).',
    registers: [registry],
    collect() {
      this.set(budget.used);
    },
  });
  new Gauge({
    name: BUFFERED_BODY_LIMIT,
    help: 'The budget of buffered request-body bytes (--max-buffered-bytes); bodies beyond it get 503.',
    registers: [registry],
    collect() {
      this.set(budget.limit);
    },
  });
}
