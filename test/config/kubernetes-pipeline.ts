// Test wiring of the Kubernetes config path without HTTP: source → compile → table, statuses → status writer,
// optionally behind leader election. One instance per simulated gateway replica.
import { compile, type CompileResult } from '../../src/compile/compile.js';
import { KubernetesStatus } from '../../src/controller/kubernetes-status.js';
import { KubernetesSource } from '../../src/sources/kubernetes/kubernetes-source.js';
import { TableHolder } from '../../src/model/routing-table.js';
import { kubeConfigFor } from '../fake-apiserver/kubeconfig.js';
import type { FakeApiServer } from '../fake-apiserver/server.js';
import type { BudgetUse } from '../../src/model/money-limits.js';

export interface PipelineOptions {
  readonly namespace: string;
  /** Bearer token of this replica (tells replicas apart in the fake API server's request log). */
  readonly token?: string;
  readonly identity?: string;
  readonly leaderElection?: boolean;
  readonly qps?: number;
  readonly burst?: number;
  /** Money limits for the budget Events, read in each (50 ms) usage round; absent: no usage rounds. */
  readonly budgets?: () => Promise<readonly BudgetUse[]>;
}

export interface Pipeline {
  readonly source: KubernetesSource;
  readonly status: KubernetesStatus;
  readonly tables: TableHolder;
  latest(): CompileResult;
  stop(): Promise<void>;
}

export async function startPipeline(api: FakeApiServer, o: PipelineOptions): Promise<Pipeline> {
  const kubeConfig = kubeConfigFor(api.url, o.namespace, o.token ?? 'fake-service-account-token');
  const source = new KubernetesSource({ kubeConfig, namespaces: [o.namespace], debounceMs: 10, backoff: { initialMs: 20, maxMs: 200 } });
  const status = new KubernetesStatus({
    kubeConfig,
    source,
    leaderElection: o.leaderElection ?? false,
    leaseNamespace: o.namespace,
    leaseName: 'model-gateway',
    identity: o.identity ?? 'gateway-0',
    qps: o.qps ?? 200,
    burst: o.burst ?? 50,
    election: { leaseDurationMs: 1200, renewDeadlineMs: 800, retryPeriodMs: 100 },
    ...(o.budgets ? { usage: async () => ({ objects: [], budgets: await o.budgets!() }), usageIntervalMs: 50 } : {}),
  });
  const tables = new TableHolder();
  let latest: CompileResult | undefined;
  let version = 0;
  status.start();
  await source.start((snapshot) => {
    latest = compile(snapshot.objects, { version: ++version });
    tables.set(latest.table);
    status.update(latest.statuses);
  });
  return {
    source,
    status,
    tables,
    latest: () => latest!,
    stop: async () => {
      await status.stop();
      await source.stop();
    },
  };
}
