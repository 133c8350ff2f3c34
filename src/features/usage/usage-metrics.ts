// Usage in Prometheus: tokens and cost by group, model, type and whether they were estimated; per token (GatewayToken
// namespace/name) only when the operator opts in, because every token then makes its own series (10,000 tokens
// × models × types would swamp a Prometheus). The OpenTelemetry histogram `gen_ai_client_token_usage` keeps its
// meaning: the per-request counts the upstream reported, now by group as well.
import type { Registry } from 'prom-client';
import type { Routed } from '../../dataplane/exchange/exchange.js';
import type { Metrics } from '../../observability/metrics.js';
import { SeriesCounter } from '../../observability/series-metrics.js';
import { sharedMetric } from '../../observability/shared-metric.js';
import type { Usage } from '../../model/usage.js';

export interface UsageMetricsOptions {
  /** Also count tokens by token (namespace/name): one series per token, model and type. */
  readonly perToken?: boolean;
}

type Type = 'input' | 'output' | 'cached_input' | 'reasoning';

export function usageRecorder(metrics: Metrics, registry: Registry, options: UsageMetricsOptions): (x: Routed, u: Usage) => void {
  const tokens = sharedMetric<readonly [group: string, model: string, type: string, estimated: string]>(registry, SeriesCounter, {
    name: 'model_gateway_tokens_total',
    help: 'Tokens consumed, by group, public model, type (input, output, cached_input, reasoning) and whether the gateway estimated them.',
    labelNames: ['group', 'model', 'type', 'estimated'],
  });
  const byToken = options.perToken
    ? sharedMetric<readonly [token: string, group: string, model: string, type: string, estimated: string]>(registry, SeriesCounter, {
        name: 'model_gateway_token_tokens_total',
        help: 'Tokens consumed per GatewayToken (namespace/name), by group, public model, type and whether estimated. Opt-in.',
        labelNames: ['token', 'group', 'model', 'type', 'estimated'],
      })
    : undefined;
  // Cost by the same bounded labels as tokens (a group and a public model come from the configuration, not from
  // requests). Summed in micro-units, exactly as the records' costs add up, and shown in the currency's units, as
  // Prometheus counts in base units; unknown costs are counted apart, never added as 0.
  const cost = sharedMetric<readonly [group: string, model: string]>(registry, SeriesCounter, {
    name: 'model_gateway_cost_total',
    help: "Cost of requests at their backends' prices, in the gateway's currency (serve --currency), by group and public model. Requests of unknown cost are not in it (model_gateway_cost_unknown_total).",
    labelNames: ['group', 'model'],
    scale: 1e6,
  });
  // A counter never goes down: the credits of failed videos are counted apart, cost less credits is what was billed.
  const credited = sharedMetric<readonly [group: string, model: string]>(registry, SeriesCounter, {
    name: 'model_gateway_cost_credited_total',
    help: "Credits of videos that failed (their creates' cost, given back), in the gateway's currency, by group and public model: billed = model_gateway_cost_total - this.",
    labelNames: ['group', 'model'],
    scale: 1e6,
  });
  const unknown = sharedMetric<readonly [group: string, model: string]>(registry, SeriesCounter, {
    name: 'model_gateway_cost_unknown_total',
    help: 'Requests whose cost is unknown (their backend sets no pricing, or not a price they needed), by group and public model.',
    labelNames: ['group', 'model'],
  });
  return (x, u) => {
    const group = x.token.group.name; // as on the request metrics
    const model = x.route.model;
    if (u.cost?.known) {
      if (u.cost.micros > 0) cost.inc([group, model], u.cost.micros);
      else if (u.cost.micros < 0) credited.inc([group, model], -u.cost.micros);
    } else if (u.cost) unknown.inc([group, model], 1);
    const estimated = u.estimated ? 'true' : 'false';
    const add = (type: Type, n: number) => {
      if (n <= 0) return;
      tokens.inc([group, model, type, estimated], n);
      byToken?.inc([x.token.ref, group, model, type, estimated], n);
    };
    add('input', u.inputTokens);
    add('output', u.outputTokens);
    add('cached_input', u.cachedInputTokens);
    add('reasoning', u.reasoningTokens);
    if (u.estimated) return;
    const exemplar = x.trace?.exemplarId;
    if (u.inputTokens > 0) metrics.tokenUsage.observe([x.family, model, group, 'input'], u.inputTokens, exemplar);
    if (u.outputTokens > 0) metrics.tokenUsage.observe([x.family, model, group, 'output'], u.outputTokens, exemplar);
  };
}
