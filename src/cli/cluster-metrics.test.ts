import { describe, expect, it } from 'vitest';
import { type MetricJson, retire } from './cluster-metrics.js';

const counter = (name: string, values: MetricJson['values'], extra: object = {}): MetricJson =>
  ({ name, help: name, type: 'counter', aggregator: 'sum', values, ...extra }) as unknown as MetricJson;

describe('retire', () => {
  it('adds a dead worker’s counters and histogram series into the retired sums, and leaves its gauges out', () => {
    const gauge = { ...counter('g', [{ value: 7, labels: {} }]), type: 'gauge' } as unknown as MetricJson;
    const hist = { ...counter('h', [{ value: 2, labels: { le: 1 }, metricName: 'h_bucket' }]), type: 'histogram' } as unknown as MetricJson;
    const first = retire([], [counter('c', [{ value: 3, labels: { a: 'x', b: 'y' } }]), gauge, hist]);
    const second = retire(first, [
      counter('c', [
        { value: 4, labels: { b: 'y', a: 'x' } },
        { value: 1, labels: { a: 'z' } },
      ]),
      hist,
    ]);
    expect(second.map((m) => m.name)).toEqual(['c', 'h']);
    expect(second[0]!.values).toEqual([
      { value: 7, labels: { a: 'x', b: 'y' } },
      { value: 1, labels: { a: 'z' } },
    ]);
    expect(second[1]!.values).toEqual([{ value: 4, labels: { le: 1 }, metricName: 'h_bucket' }]);
    expect(first[0]!.values[0]!.value).toBe(3); // the earlier sums are not changed in place
  });

  it('keeps a scaled counter’s scale and adds its whole units', () => {
    const cost = (units: number) => counter('cost', [{ value: units / 1e6, units, labels: {} }], { scale: 1e6 });
    const [m] = retire(retire([], [cost(100_000)]), [cost(200_000)]);
    expect(m!.scale).toBe(1e6);
    expect(m!.values[0]!.units).toBe(300_000);
  });
});
