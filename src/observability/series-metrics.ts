// Counters and histograms for the request path, rendered by prom-client's registry like its own metrics.
// prom-client's inc/observe are dear on a path taken eight times per request (labels validated through megamorphic
// keyed loads, a sorted label hash built per call, bucket bounds used as property keys). Here a call takes its
// label values in the metric's label order, finds
// its series through one Map per label, and adds; the registry asks for prom-client's value shapes only
// when it renders (a scrape, or a worker's metrics sent to the primary, summed there by prom-client's cluster code).
//
// The registry duck-types its metrics (name, help, type, aggregator, get, reset). These objects keep their state in
// ordinary properties, not #private fields, because the OpenMetrics view renders counters through Object.create.
import type { Registry, RegistryContentType } from 'prom-client';
import { SCALED_SUM } from './scaled-sum.js';

/** Label values in the order of the metric's label names. */
export type LabelTuple = readonly string[];

interface SeriesMetricConfig {
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly string[];
  readonly registers?: readonly Registry<RegistryContentType>[];
}

export interface SeriesCounterConfig extends SeriesMetricConfig {
  /**
   * Counted in whole 1/scale units and rendered divided by scale (a cost counted in micro-units, shown in units):
   * integer sums are exact, where adding decimal fractions as doubles drifts (0.1 + 0.2 = 0.30000000000000004).
   */
  readonly scale?: number;
}

export interface SeriesHistogramConfig extends SeriesMetricConfig {
  /** Upper bounds, ascending; +Inf is added. */
  readonly buckets: readonly number[];
  /** Keep a trace id per bucket, shown by OpenMetrics scrapes only (the classic format has no exemplars). */
  readonly exemplars?: boolean;
}

interface Exemplar {
  readonly labelSet: { readonly trace_id: string };
  readonly value: number;
  readonly timestamp: number;
}

/** One value as prom-client's registry renders it (and as its cluster aggregator sums it). */
interface RenderedValue {
  readonly labels: Record<string, string | number>;
  readonly value: number;
  readonly metricName?: string;
  readonly exemplar?: Exemplar | null;
  /** A scaled counter's value in whole units, which its cluster aggregator sums (scaled-sum.ts). */
  readonly units?: number;
}

interface Rendered {
  readonly name: string;
  readonly help: string;
  readonly type: 'counter' | 'histogram';
  readonly aggregator: string;
  readonly values: RenderedValue[];
  /** A scaled counter's scale (scaled-sum.ts). */
  readonly scale?: number;
}

/**
 * Series by label values, one Map level per label. The values come from the routing table and fixed words: the same
 * string objects request after request, whose hash V8 keeps in them, so finding a series hashes nothing new and
 * allocates nothing (a key joined from the values would be a fresh string to build and hash on every call).
 */
class SeriesIndex<S extends object> {
  private root = new Map<string, unknown>();
  /** In creation order, as prom-client renders its series. */
  readonly all: S[] = [];

  constructor(private readonly labelNames: readonly string[]) {}

  find(values: LabelTuple): S | undefined {
    if (values.length !== this.labelNames.length)
      throw new TypeError(`expected ${this.labelNames.length} label values (${this.labelNames.join(', ')}), got ${values.length}`);
    let level: Map<string, unknown> | undefined = this.root;
    for (let i = 0; i < values.length - 1 && level !== undefined; i++) level = level.get(values[i]!) as Map<string, unknown> | undefined;
    return level?.get(values[values.length - 1]!) as S | undefined;
  }

  add(values: LabelTuple, series: S): void {
    let level = this.root;
    for (let i = 0; i < values.length - 1; i++) {
      let next = level.get(values[i]!) as Map<string, unknown> | undefined;
      if (next === undefined) level.set(values[i]!, (next = new Map()));
      level = next;
    }
    level.set(values[values.length - 1]!, series);
    this.all.push(series);
  }

  clear(): void {
    this.root = new Map();
    this.all.length = 0;
  }
}

function labelsOf(names: readonly string[], values: LabelTuple): Record<string, string> {
  const labels: Record<string, string> = {};
  for (let i = 0; i < names.length; i++) labels[names[i]!] = values[i]!;
  return labels;
}

function register(metric: { name: string }, registers: readonly Registry<RegistryContentType>[] | undefined): void {
  for (const r of registers ?? []) r.registerMetric(metric as never);
}

/** What both kinds share: the fields the registry reads, the series, and reset. */
abstract class SeriesMetric<S extends object> {
  /** How the primary of --workers sums the workers' values: prom-client's `sum`, or SCALED_SUM. */
  readonly aggregator: string;
  // Writable: the registry renames counters when it renders OpenMetrics (on a view of this object).
  name: string;
  readonly help: string;
  readonly labelNames: readonly string[];
  protected readonly series: SeriesIndex<S>;

  constructor(config: SeriesMetricConfig, aggregator = 'sum') {
    this.aggregator = aggregator;
    this.name = config.name;
    this.help = config.help;
    this.labelNames = config.labelNames;
    this.series = new SeriesIndex(config.labelNames);
  }

  reset(): void {
    this.series.clear();
  }
}

interface CounterSeries {
  readonly labels: Record<string, string>;
  value: number;
}

export class SeriesCounter<V extends LabelTuple> extends SeriesMetric<CounterSeries> {
  readonly type = 'counter';
  private readonly scale: number;

  constructor(config: SeriesCounterConfig) {
    super(config, (config.scale ?? 1) === 1 ? 'sum' : SCALED_SUM);
    this.scale = config.scale ?? 1;
    register(this, config.registers);
  }

  inc(values: V, n = 1): void {
    if (!(n >= 0) || n === Infinity) return; // a counter only grows, by a finite amount; a metric never throws
    const s = this.series.find(values);
    if (s === undefined) this.series.add(values, { labels: labelsOf(this.labelNames, values), value: n });
    else s.value += n;
  }

  async get(): Promise<Rendered> {
    const values: RenderedValue[] = [];
    const scale = this.scale;
    if (scale === 1) for (const s of this.series.all) values.push({ labels: { ...s.labels }, value: s.value });
    else for (const s of this.series.all) values.push({ labels: { ...s.labels }, value: s.value / scale, units: s.value });
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values, ...(scale === 1 ? {} : { scale }) };
  }
}

interface HistogramSeries {
  readonly labels: Record<string, string>;
  /** Observations per bucket, not cumulative; the last is +Inf. */
  readonly counts: Float64Array;
  readonly exemplars: Array<Exemplar | null> | undefined;
  sum: number;
  count: number;
}

export class SeriesHistogram<V extends LabelTuple> extends SeriesMetric<HistogramSeries> {
  readonly type = 'histogram';
  private readonly bounds: readonly number[];
  private readonly withExemplars: boolean;

  constructor(config: SeriesHistogramConfig) {
    super(config);
    if (config.labelNames.includes('le')) throw new Error('le is a reserved label name');
    for (let i = 1; i < config.buckets.length; i++) {
      if (!(config.buckets[i]! > config.buckets[i - 1]!)) throw new Error(`buckets must ascend: ${config.buckets.join(', ')}`);
    }
    this.bounds = [...config.buckets];
    this.withExemplars = config.exemplars ?? false;
    register(this, config.registers);
  }

  /** Adds `value` to the series; `traceId`, when exemplars are on, becomes its bucket's exemplar. */
  observe(values: V, value: number, traceId?: string): void {
    if (!Number.isFinite(value)) return;
    let s = this.series.find(values);
    if (s === undefined) {
      const buckets = this.bounds.length + 1;
      s = {
        labels: labelsOf(this.labelNames, values),
        counts: new Float64Array(buckets),
        exemplars: this.withExemplars ? new Array<Exemplar | null>(buckets).fill(null) : undefined,
        sum: 0,
        count: 0,
      };
      this.series.add(values, s);
    }
    const bounds = this.bounds;
    let i = 0;
    while (i < bounds.length && value > bounds[i]!) i++;
    s.counts[i]!++;
    s.sum += value;
    s.count++;
    if (traceId !== undefined && s.exemplars !== undefined) s.exemplars[i] = { labelSet: { trace_id: traceId }, value, timestamp: Date.now() / 1000 };
  }

  async get(): Promise<Rendered> {
    const bucket = `${this.name}_bucket`;
    const values: RenderedValue[] = [];
    for (const s of this.series.all) {
      let cumulative = 0;
      for (let i = 0; i <= this.bounds.length; i++) {
        cumulative += s.counts[i]!;
        const le = i < this.bounds.length ? this.bounds[i]! : '+Inf';
        values.push({ labels: { le, ...s.labels }, value: cumulative, metricName: bucket, exemplar: s.exemplars?.[i] ?? null });
      }
      values.push({ labels: { ...s.labels }, value: s.sum, metricName: `${this.name}_sum` });
      values.push({ labels: { ...s.labels }, value: s.count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }
}
