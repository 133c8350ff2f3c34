// The metrics port of `serve --workers N`: the sum of every worker's registry, and of the counters of workers that
// died. Summing only the live workers made every counter drop when one died (its counts gone, and a sum that goes
// down reads as a counter reset: rate() then counts the survivors' whole totals again). The primary collects each
// worker's metrics (every few seconds, and at each scrape) and keeps a dead worker's last counters and histograms;
// its gauges go with it. Counts a worker made after its last collection are lost with it.
import cluster, { type Cluster } from 'node:cluster';
import { AggregatorRegistry, type MetricObjectWithValues, type MetricValue } from 'prom-client';
import { installScaledSum } from '../observability/scaled-sum.js';

// prom-client's own request and answer (its worker-side listener, installed by reportMetricsToPrimary, answers them).
const GET_METRICS_REQ = 'prom-client:getMetricsReq';
const GET_METRICS_RES = 'prom-client:getMetricsRes';
/** How long a scrape waits for a worker; one that does not answer in time counts with its last collection. */
const ANSWER_TIMEOUT_MS = 2_000;
/** How often the primary collects without a scrape: the most of a crashed worker's counts that can be lost. */
const COLLECT_INTERVAL_MS = 5_000;

/** A metric as a registry renders it to JSON; scaled counters (series-metrics.ts) add `scale` and each value `units`. */
export type MetricJson = MetricObjectWithValues<MetricValue<string> & { units?: number; metricName?: string }> & { scale?: number };

/** Adds a dead worker's counters and histograms (never its gauges) into what the dead have left so far. Pure. */
export function retire(retired: readonly MetricJson[], last: readonly MetricJson[]): MetricJson[] {
  const byName = new Map(retired.map((m) => [m.name, { ...m, values: m.values.map((v) => ({ ...v })) }]));
  for (const metric of last) {
    const type = metric.type as unknown as string; // a string in JSON (prom-client types it as an enum)
    if (type !== 'counter' && type !== 'histogram') continue;
    let kept = byName.get(metric.name);
    if (!kept) byName.set(metric.name, (kept = { ...metric, values: [] }));
    for (const v of metric.values) {
      const key = seriesKey(v);
      const same = kept.values.find((k) => seriesKey(k) === key);
      if (!same) kept.values.push({ ...v });
      else {
        same.value += v.value;
        if (same.units !== undefined && v.units !== undefined) same.units += v.units;
      }
    }
  }
  return [...byName.values()];
}

function seriesKey(v: { metricName?: string; labels: object }): string {
  return `${v.metricName ?? ''}\u0000${JSON.stringify(Object.entries(v.labels).sort(([a], [b]) => (a < b ? -1 : 1)))}`;
}

export class ClusterMetrics {
  readonly contentType = AggregatorRegistry.PROMETHEUS_CONTENT_TYPE;
  /** Each live worker's metrics as last collected. */
  readonly #last = new Map<number, MetricJson[]>();
  #retired: MetricJson[] = [];
  #requests = 0;
  readonly #waiting = new Map<string, (metrics: MetricJson[]) => void>();
  readonly #timer: NodeJS.Timeout;

  readonly #cluster: Pick<Cluster, 'on' | 'workers'>;

  constructor(nodeCluster: Pick<Cluster, 'on' | 'workers'> = cluster) {
    this.#cluster = nodeCluster;
    installScaledSum(); // the cost counter, in micro-units: summed as integers, not as floats
    nodeCluster.on('message', (worker, m: { type?: unknown; requestId?: unknown; metrics?: MetricJson[][] }) => {
      if (m?.type !== GET_METRICS_RES) return;
      this.#waiting.get(`${worker.id}:${String(m.requestId)}`)?.(m.metrics?.flat() ?? []);
    });
    this.#timer = setInterval(() => void this.#collect(), COLLECT_INTERVAL_MS).unref();
  }

  /** A worker exited: what it counted stays in the sums. */
  workerExited(id: number): void {
    const last = this.#last.get(id);
    this.#last.delete(id);
    if (last) this.#retired = retire(this.#retired, last);
  }

  async metrics(): Promise<string> {
    await this.#collect();
    return AggregatorRegistry.aggregate([...this.#last.values(), this.#retired] as never).metrics();
  }

  stop(): void {
    clearInterval(this.#timer);
  }

  async #collect(): Promise<void> {
    const requestId = `mg-${++this.#requests}`;
    const workers = Object.values(this.#cluster.workers ?? {}).filter((w) => w?.isConnected());
    await Promise.all(
      workers.map(
        (w) =>
          new Promise<void>((resolve) => {
            const key = `${w!.id}:${requestId}`;
            const timer = setTimeout(() => done(undefined), ANSWER_TIMEOUT_MS);
            const done = (metrics: MetricJson[] | undefined) => {
              clearTimeout(timer);
              this.#waiting.delete(key);
              // A worker that exited meanwhile was retired already: its answer must not bring it back.
              if (metrics && w!.isConnected()) this.#last.set(w!.id, metrics);
              resolve();
            };
            this.#waiting.set(key, done);
            try {
              w!.send({ type: GET_METRICS_REQ, requestId });
            } catch {
              done(undefined);
            }
          }),
      ),
    );
  }
}
