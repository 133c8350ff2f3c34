// Status reporting for the Kubernetes source: leader election (optional) + the status writer, fed with the
// statuses of every compile. Serving never waits on any of this.
import type { KubeConfig } from '../sources/kubernetes/kube-client.js';
import type { Logger } from '../observability/logger.js';
import type { ObjectStatus } from '../compile/conditions.js';
import { LeaderElector, type LeaderElectionOptions } from './leader-election.js';
import type { KubernetesSource } from '../sources/kubernetes/kubernetes-source.js';
import { kubernetesStatusApi, StatusWriter, type StatusApi } from './status-writer.js';
import type { UsageSnapshot } from '../model/usage-limits.js';
import { UsageStatusWriter } from './usage-status-writer.js';
import { BudgetEvents, kubernetesEventsApi, type EventsApi } from './budget-events.js';
import { TokenBucket } from './token-bucket.js';

export interface KubernetesStatusOptions {
  readonly kubeConfig: KubeConfig;
  readonly source: KubernetesSource;
  /** false: this replica always writes status (a single replica, or status writing handled elsewhere). */
  readonly leaderElection: boolean;
  readonly leaseNamespace: string;
  readonly leaseName: string;
  readonly identity: string;
  readonly logger?: Logger;
  readonly qps?: number;
  readonly burst?: number;
  /** Lease timings (tests shorten them). */
  readonly election?: Pick<LeaderElectionOptions, 'leaseDurationMs' | 'renewDeadlineMs' | 'retryPeriodMs'>;
  readonly api?: StatusApi;
  readonly onResult?: (result: 'written' | 'conflict' | 'error') => void;
  /** The usage of limits to write to status.usage, and the money limits with a warnAt for the budget Events made
   * after each usage round, read together; absent: neither is written. */
  readonly usage?: () => Promise<UsageSnapshot>;
  /** Between two usage rounds (default 30 s). */
  readonly usageIntervalMs?: number;
  readonly events?: EventsApi;
}

export class KubernetesStatus {
  readonly writer: StatusWriter;
  readonly usage: UsageStatusWriter | undefined;
  readonly elector: LeaderElector | undefined;
  readonly #unsubscribe: () => void;

  constructor(o: KubernetesStatusOptions) {
    this.elector = o.leaderElection
      ? new LeaderElector({
          kubeConfig: o.kubeConfig,
          namespace: o.leaseNamespace,
          name: o.leaseName,
          identity: o.identity,
          ...o.election,
          ...(o.logger ? { logger: o.logger } : {}),
        })
      : undefined;
    const elector = this.elector;
    this.writer = new StatusWriter({
      api: o.api ?? kubernetesStatusApi(o.kubeConfig),
      lookup: (kind, ns, name) => o.source.lookup(kind, ns, name),
      isLeader: () => (elector ? elector.isLeader() : true),
      ...(o.qps !== undefined ? { qps: o.qps } : {}),
      ...(o.burst !== undefined ? { burst: o.burst } : {}),
      ...(o.logger ? { logger: o.logger } : {}),
      ...(o.onResult ? { onResult: o.onResult } : {}),
    });
    const api = o.api ?? kubernetesStatusApi(o.kubeConfig);
    // One budget of writes for status.usage and the budget Events (5 per second, bursts of 10).
    const bucket = new TokenBucket(5, 10);
    const budgets = new BudgetEvents({
      events: o.events ?? kubernetesEventsApi(o.kubeConfig),
      api,
      isLeader: () => this.isLeader(),
      bucket,
      identity: o.identity,
      ...(o.logger ? { logger: o.logger } : {}),
    });
    this.usage = o.usage
      ? new UsageStatusWriter({
          api,
          read: o.usage,
          isLeader: () => this.isLeader(),
          bucket,
          afterRound: (list, signal) => budgets.round(list, signal),
          ...(o.usageIntervalMs !== undefined ? { intervalMs: o.usageIntervalMs } : {}),
          ...(o.logger ? { logger: o.logger } : {}),
        })
      : undefined;
    // A new leader catches up on everything the previous one had not written.
    elector?.onChange((leading) => leading && this.writer.resync());
    // A status changed by anyone but a compile (a hand edit, an older replica) is put back, as an operator would.
    this.#unsubscribe = o.source.onStatusChange((object) =>
      object?.kind ? this.writer.recheck(object.kind, object.metadata.namespace ?? '', object.metadata.name) : this.writer.resync(),
    );
  }

  start(): void {
    this.elector?.start();
    this.usage?.start();
  }

  /** Call with the statuses of each compile. */
  update(statuses: readonly ObjectStatus[]): void {
    this.writer.update(statuses);
  }

  isLeader(): boolean {
    return this.elector ? this.elector.isLeader() : true;
  }

  /** Stops writing and, if leader, hands the Lease over. */
  async stop(): Promise<void> {
    this.#unsubscribe();
    await this.writer.stop();
    await this.usage?.stop();
    await this.elector?.stop();
  }
}
