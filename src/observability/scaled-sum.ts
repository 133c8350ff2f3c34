// The cluster aggregator of counters kept in whole 1/scale units (series-metrics.ts, `scale`): with --workers N the
// primary sums its workers' values, and prom-client's own `sum` adds them as the doubles they render to
// (0.1 + 0.2 = 0.30000000000000004). A scaled counter also renders its whole units and its scale, so this one has
// prom-client's `sum` add the integers (exact below 2^53), then divides once.
import { aggregators } from 'prom-client';

/** A worker's scaled counter as its registry renders it to JSON: each value is `units / scale`. */
interface ScaledMetric {
  readonly scale: number;
  readonly values: ReadonlyArray<{ readonly value: number; readonly units?: number }>;
}

type Aggregate = (metrics: readonly ScaledMetric[]) => { values: Array<{ value: number }> } | undefined;

declare module 'prom-client' {
  /** prom-client's cluster aggregators by name: exported (for users to add theirs), not in its types. */
  export const aggregators: Record<string, unknown>;
}

/** The `aggregator` a scaled counter names; the primary installs it with installScaledSum(). */
export const SCALED_SUM = 'model_gateway_scaled_sum';

/** Teaches this process's prom-client cluster code (the primary's) to sum scaled counters exactly. */
export function installScaledSum(): void {
  const sum = aggregators.sum as Aggregate;
  aggregators[SCALED_SUM] ??= ((metrics) => {
    const scale = metrics[0]?.scale ?? 1;
    const summed = sum(metrics.map((m) => ({ ...m, values: m.values.map((v) => ({ ...v, value: v.units ?? Math.round(v.value * scale) })) })));
    if (summed) for (const v of summed.values) v.value /= scale;
    return summed;
  }) satisfies Aggregate;
}
