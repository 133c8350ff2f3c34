// The gateway's Kubernetes source as `serve --source kubernetes` builds it (status reporting, leader election,
// the default Secret selector and Lease name), pointed at a fake API server: for startGateway's `source`.
import { KubernetesSourceWithStatus, type KubernetesSourceWithStatusOptions } from '../../src/gateway/kubernetes-source-with-status.js';
import type { GatewayOptions } from '../../src/gateway/main.js';
import { kubeConfigFor } from './kubeconfig.js';

export function fakeClusterSource(
  serverURL: string,
  namespace: string,
  identity: string,
  tuning?: KubernetesSourceWithStatusOptions['tuning'],
): GatewayOptions['source'] {
  return ({ logger, metrics, pipeline, usage, credentials }) =>
    new KubernetesSourceWithStatus({
      kubeConfig: kubeConfigFor(serverURL, namespace),
      namespaces: [namespace],
      secretSelector: 'modelgateway.io/secret=true',
      leaderElection: true,
      leaseNamespace: namespace,
      leaseName: 'model-gateway',
      identity,
      logger,
      pipeline,
      registry: metrics.registry,
      usage,
      credentials,
      ...(tuning ? { tuning } : {}),
    });
}
