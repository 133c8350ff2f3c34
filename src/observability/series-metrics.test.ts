import { AggregatorRegistry, Counter, Histogram, Registry, type RegistryContentType } from 'prom-client';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { installScaledSum } from './scaled-sum.js';
import { SeriesCounter, SeriesHistogram } from './series-metrics.js';

// The series metrics must render exactly as prom-client's own metrics fed the same observations: scrapers,
// dashboards and the tests of /metrics read that text, and the cluster primary sums workers' values by it.
const BUCKETS = [0.01, 0.1, 1];
const config = { name: 'x_seconds', help: 'Help with a \\ backslash\nand a newline.', labelNames: ['family', 'model'], buckets: BUCKETS };
const OBSERVATIONS: Array<[family: string, model: string, value: number, trace?: string]> = [
  ['chat', 'gpt "quoted"', 0.005, 'a'.repeat(32)],
  ['chat', 'gpt "quoted"', 0.01],
  ['chat', 'gpt "quoted"', 0.5, 'b'.repeat(32)],
  ['embeddings', 'e\\m', 7, 'c'.repeat(32)],
  ['chat', 'gpt "quoted"', 2],
];

function theirs(registers: Registry<RegistryContentType>[], exemplars: boolean): { h: Histogram<'family' | 'model'>; c: Counter<'family' | 'model'> } {
  const h = new Histogram({ ...config, registers, ...(exemplars ? { enableExemplars: true } : {}) });
  const c = new Counter({ ...config, name: 'x_total', registers });
  for (const [family, model, value, trace] of OBSERVATIONS) {
    if (exemplars) h.observe({ labels: { family, model }, value, exemplarLabels: trace === undefined ? {} : { trace_id: trace } });
    else h.observe({ family, model }, value);
    c.inc({ family, model }, 2);
  }
  return { h, c };
}

function ours(registers: Registry<RegistryContentType>[], exemplars: boolean): void {
  const h = new SeriesHistogram<readonly [string, string]>({ ...config, registers, exemplars });
  const c = new SeriesCounter<readonly [string, string]>({ ...config, name: 'x_total', registers });
  for (const [family, model, value, trace] of OBSERVATIONS) {
    h.observe([family, model], value, trace);
    c.inc([family, model], 2);
  }
}

describe('series metrics', () => {
  beforeEach(() => vi.useFakeTimers({ now: 1_790_000_000_123, toFake: ['Date'] }));
  afterEach(() => vi.useRealTimers());

  it('render as prom-client renders the same observations, in the classic format', async () => {
    const [a, b] = [new Registry(), new Registry()];
    theirs([a], false);
    ours([b], false);
    const text = await b.metrics();
    expect(text).toContain('x_seconds_bucket{le="0.01",family="chat",model="gpt \\"quoted\\""} 2');
    expect(text).toBe(await a.metrics());
  });

  it('render as prom-client renders them in OpenMetrics, exemplars included', async () => {
    const [a, b] = [
      new Registry<'application/openmetrics-text; version=1.0.0; charset=utf-8'>(),
      new Registry<'application/openmetrics-text; version=1.0.0; charset=utf-8'>(),
    ];
    a.setContentType(Registry.OPENMETRICS_CONTENT_TYPE);
    b.setContentType(Registry.OPENMETRICS_CONTENT_TYPE);
    theirs([a], true);
    ours([b], true);
    const text = await b.metrics();
    expect(text).toContain(`x_seconds_bucket{le="1",family="chat",model="gpt \\"quoted\\""} 3 # {trace_id="${'b'.repeat(32)}"} 0.5 1790000000.123`);
    expect(text).toContain(`x_seconds_bucket{le="+Inf",family="embeddings",model="e\\\\m"} 1 # {trace_id="${'c'.repeat(32)}"} 7 1790000000.123`);
    expect(text).toBe(await a.metrics());
  });

  it('are summed across workers by prom-client cluster aggregation as its own metrics are', async () => {
    const workers = async (make: (r: Registry<RegistryContentType>[]) => void) => {
      const regs = [new Registry(), new Registry()];
      for (const r of regs) make([r]);
      return (await AggregatorRegistry.aggregate(await Promise.all(regs.map((r) => r.getMetricsAsJSON())))).metrics();
    };
    const summed = await workers((r) => ours(r, false));
    expect(summed).toContain('x_total{family="chat",model="gpt \\"quoted\\""} 16');
    expect(summed).toBe(await workers((r) => theirs(r, false)));
  });

  it('sum a scaled counter across workers in whole units, not as the decimals each renders', async () => {
    installScaledSum(); // as the primary of --workers does
    // 0.1 in one worker and 0.2 in the other: as doubles, 0.30000000000000004.
    const regs = [100_000, 200_000].map((micros) => {
      const r = new Registry();
      new SeriesCounter<readonly [string]>({ name: 'x_cost_total', help: 'Cost.', labelNames: ['group'], scale: 1e6, registers: [r] }).inc(['a'], micros);
      return r;
    });
    const summed = await AggregatorRegistry.aggregate(await Promise.all(regs.map((r) => r.getMetricsAsJSON()))).metrics();
    expect(summed).toContain('x_cost_total{group="a"} 0.3\n');
    expect(await regs[0]!.metrics()).toContain('x_cost_total{group="a"} 0.1\n'); // one process renders as before
  });

  it('find a series by equal values, however the strings were built, and keep values that join alike apart', async () => {
    const r = new Registry();
    const c = new SeriesCounter<readonly [string, string]>({ name: 'c_total', help: 'c', labelNames: ['a', 'b'], registers: [r] });
    const built = (s: string) => [...s].join('');
    c.inc(['ab', 'c']);
    c.inc([built('ab'), built('c')]);
    c.inc(['a', 'bc']);
    const text = await r.metrics();
    expect(text).toContain('c_total{a="ab",b="c"} 2');
    expect(text).toContain('c_total{a="a",b="bc"} 1');
  });

  it('ignore values a metric cannot hold instead of throwing, and refuse a wrong number of label values', async () => {
    const r = new Registry();
    const h = new SeriesHistogram<readonly [string]>({ name: 'h', help: 'h', labelNames: ['a'], buckets: [1], registers: [r] });
    const c = new SeriesCounter<readonly [string]>({ name: 'c_total', help: 'c', labelNames: ['a'], registers: [r] });
    h.observe(['x'], Number.NaN);
    h.observe(['x'], Number.POSITIVE_INFINITY);
    c.inc(['x'], -1);
    c.inc(['x'], Number.NaN);
    expect(await r.metrics()).not.toContain('a="x"');
    expect(() => c.inc(['x', 'y'] as unknown as readonly [string])).toThrow('expected 1 label values (a), got 2');
    r.resetMetrics();
    h.observe(['y'], 3);
    expect(await r.metrics()).toContain('h_bucket{le="+Inf",a="y"} 1');
  });
});
