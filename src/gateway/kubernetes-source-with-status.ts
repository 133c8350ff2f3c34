// Composition of the Kubernetes config source as `serve` runs it: the watching source (sources/), plus status
// reporting (controller/: leader election and the status writer) fed by every compile of the pipeline, plus their
// metrics. One ConfigSource to the gateway: start() resolves on the first complete sync; stop() hands the Lease over.
import { Counter, Gauge, type Registry } from 'prom-client';
import type { Logger } from '../observability/logger.js';
import { sharedMetric } from '../observability/shared-metric.js';
import type { ConfigPipeline } from '../runtime/pipeline.js';
import { type CredentialProblems, withCredentialConditions } from '../controller/credential-conditions.js';
import { KubernetesStatus } from '../controller/kubernetes-status.js';
import type { KubeConfig } from '../sources/kubernetes/kube-client.js';
import type { NamespaceScope } from '../sources/kubernetes/kube-config.js';
import { KubernetesSource, type KubernetesSourceOptions } from '../sources/kubernetes/kubernetes-source.js';
import type { ConfigSnapshot, ConfigSource } from '../sources/source.js';
import type { UsageSnapshot } from '../model/usage-limits.js';

export interface KubernetesSourceWithStatusOptions {
  readonly kubeConfig: KubeConfig;
  readonly namespaces: NamespaceScope;
  readonly secretSelector: string;
  readonly leaderElection: boolean;
  /** Where the Lease lives (the gateway's own namespace). */
  readonly leaseNamespace: string;
  readonly leaseName: string;
  /** Leader identity (POD_NAME, unique per process). */
  readonly identity: string;
  readonly logger: Logger;
  readonly pipeline: ConfigPipeline;
  readonly registry?: Registry;
  /** The usage of limits for status.usage and the budget Events (see KubernetesStatusOptions.usage). */
  readonly usage?: () => Promise<UsageSnapshot>;
  /** Backends whose run-time credential is missing (the data plane's identities), for their routes' status. */
  readonly credentials?: { problems(): CredentialProblems; onChange(listener: () => void): () => void };
  /** Overrides for tests (shorter timings). */
  readonly tuning?: Partial<Pick<KubernetesSourceOptions, 'debounceMs' | 'relistIntervalMs' | 'backoff'>> & {
    readonly election?: { leaseDurationMs?: number; renewDeadlineMs?: number; retryPeriodMs?: number };
    readonly qps?: number;
    readonly burst?: number;
    readonly usageIntervalMs?: number;
  };
}

export class KubernetesSourceWithStatus implements ConfigSource {
  readonly source: KubernetesSource;
  readonly status: KubernetesStatus;
  readonly #unsubscribe: () => void;

  constructor(o: KubernetesSourceWithStatusOptions) {
    const logger = o.logger.child({ component: 'kubernetes' });
    const { election, qps, burst, usageIntervalMs, ...sourceTuning } = o.tuning ?? {};
    this.source = new KubernetesSource({ kubeConfig: o.kubeConfig, namespaces: o.namespaces, secretSelector: o.secretSelector, logger, ...sourceTuning });
    const writes = o.registry ? statusMetrics(o.registry, () => this.status) : undefined;
    this.status = new KubernetesStatus({
      kubeConfig: o.kubeConfig,
      source: this.source,
      leaderElection: o.leaderElection,
      leaseNamespace: o.leaseNamespace,
      leaseName: o.leaseName,
      identity: o.identity,
      logger,
      ...(election ? { election } : {}),
      ...(qps !== undefined ? { qps } : {}),
      ...(burst !== undefined ? { burst } : {}),
      ...(o.usage ? { usage: o.usage } : {}),
      ...(usageIntervalMs !== undefined ? { usageIntervalMs } : {}),
      ...(writes ? { onResult: (r: 'written' | 'conflict' | 'error') => writes.results.inc({ result: r }) } : {}),
    });
    const credentials = o.credentials;
    const update = () => {
      const statuses = o.pipeline.last?.statuses;
      if (statuses) this.status.update(credentials ? withCredentialConditions(statuses, credentials.problems()) : statuses);
    };
    const unsubscribeCompiles = o.pipeline.onCompiled(update);
    const unsubscribeCredentials = credentials?.onChange(update);
    this.#unsubscribe = () => {
      unsubscribeCompiles();
      unsubscribeCredentials?.();
    };
  }

  start(onSnapshot: (snapshot: ConfigSnapshot) => void): Promise<void> {
    this.status.start();
    return this.source.start(onSnapshot);
  }

  async stop(): Promise<void> {
    this.#unsubscribe();
    await this.status.stop();
    await this.source.stop();
  }
}

/** The status reporter a registry's gauges read at scrape time (the latest one registered wins). */
const reporters = new WeakMap<Registry, () => KubernetesStatus>();

function statusMetrics(registry: Registry, status: () => KubernetesStatus) {
  reporters.set(registry, status);
  sharedMetric(registry, Gauge, {
    name: 'model_gateway_leader',
    help: '1 while this process holds the leader Lease and writes status.',
    collect() {
      this.set(reporters.get(registry)?.().isLeader() ? 1 : 0);
    },
  });
  sharedMetric(registry, Gauge, {
    name: 'model_gateway_status_queue_depth',
    help: 'Objects waiting for a status write (rate-limited queue).',
    collect() {
      this.set(reporters.get(registry)?.().writer.pending ?? 0);
    },
  });
  return {
    results: sharedMetric(registry, Counter, {
      name: 'model_gateway_status_writes_total',
      help: 'Status subresource writes by result: written, conflict (retried after re-reading) or error (retried later).',
      labelNames: ['result'] as const,
    }),
  };
}
