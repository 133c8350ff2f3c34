// The shared ConfigSource contract, run against the Kubernetes source and the fake API server.
import { KubernetesSource } from '../../../src/sources/kubernetes/kubernetes-source.js';
import type { RawObject } from '../../../src/compile/resources.js';
import { FakeApiServer, type FakeKind } from '../../fake-apiserver/server.js';
import { kubeConfigFor } from '../../fake-apiserver/kubeconfig.js';
import type { KubeObj } from '../../fake-apiserver/store.js';
import { describeSourceContract } from '../source-contract.js';

describeSourceContract('kubernetes (fake API server)', async () => {
  const api = new FakeApiServer();
  await api.start();
  const namespace = 'team-a';
  const source = new KubernetesSource({ kubeConfig: kubeConfigFor(api.url), namespaces: [namespace], debounceMs: 10, backoff: { initialMs: 20, maxMs: 200 } });
  return {
    source,
    namespace,
    apply: async (o: RawObject) => void api.apply(o as KubeObj),
    delete: async (o: RawObject) => api.remove(o.kind as FakeKind, o.metadata?.namespace as string, o.metadata?.name as string),
    teardown: async () => {
      await source.stop();
      await api.stop();
    },
  };
});
