import { describe, expect, it } from 'vitest';
import type { Routed } from '../../dataplane/exchange/exchange.js';
import type { Usage } from '../../model/usage.js';
import { createMetrics } from '../../observability/metrics.js';
import { usageRecorder } from './usage-metrics.js';

const exchange = { token: { group: { name: 'team-a' }, ref: 'ai/alice' }, route: { model: 'gpt-4o-mini' }, family: 'chat.completions' } as unknown as Routed;
const costing = (micros: number): Usage => ({
  inputTokens: 1,
  outputTokens: 1,
  cachedInputTokens: 0,
  reasoningTokens: 0,
  estimated: false,
  cost: { micros, known: true, currency: 'USD' },
});

describe('model_gateway_cost_total', () => {
  it('is the exact sum of the costs the records show, without binary-fraction artefacts', async () => {
    const metrics = createMetrics({ defaultMetrics: false });
    const record = usageRecorder(metrics, metrics.registry, {});
    // 0.1 + 0.2 as doubles is 0.30000000000000004; the records say 0.1 and 0.2, and their sum is 0.3.
    record(exchange, costing(100_000));
    record(exchange, costing(200_000));
    // A thousand requests of 0.000143 each: 0.143 exactly.
    const other = { ...exchange, route: { model: 'other' } } as unknown as Routed;
    for (let i = 0; i < 1_000; i++) record(other, costing(143));
    const text = await metrics.registry.metrics();
    expect(text).toContain('model_gateway_cost_total{group="team-a",model="gpt-4o-mini"} 0.3\n');
    expect(text).toContain('model_gateway_cost_total{group="team-a",model="other"} 0.143\n');
  });
});
