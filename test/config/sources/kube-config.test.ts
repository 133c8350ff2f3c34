// Both ways the gateway finds the API server, end to end against the fake API server: a kubeconfig file, and the
// in-cluster service account (HTTPS with the mounted CA, bearer token from the mounted file).
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { KubeConfig } from '../../../src/sources/kubernetes/kube-client.js';
import { loadKubeConfig, resolveWatchScope, SERVICE_ACCOUNT_DIR } from '../../../src/sources/kubernetes/kube-config.js';
import { KubernetesSource } from '../../../src/sources/kubernetes/kubernetes-source.js';
import { FakeApiServer } from '../../fake-apiserver/server.js';
import { kubeConfigYaml } from '../../fake-apiserver/kubeconfig.js';
import type { KubeObj } from '../../fake-apiserver/store.js';
import { contractObjects, find, SnapshotRecorder } from '../source-contract.js';
import { writeLoopbackCert } from '../../fake-apiserver/loopback-cert.js';

let dir: string;
let api: FakeApiServer | undefined;
let source: KubernetesSource | undefined;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'mg-kubeconfig-'));
  return () => rmSync(dir, { recursive: true, force: true });
});

afterEach(async () => {
  await source?.stop();
  await api?.stop();
  source = api = undefined;
});

async function syncsWith(kubeConfig: ReturnType<typeof loadKubeConfig>, namespace: string): Promise<SnapshotRecorder> {
  api!.apply(contractObjects(namespace).group('g', ['m']) as KubeObj);
  source = new KubernetesSource({ kubeConfig, namespaces: [namespace], debounceMs: 10 });
  const rec = new SnapshotRecorder();
  await source.start(rec.onSnapshot);
  expect(find(rec.latest!, 'Group', 'g', namespace)).toBeDefined();
  return rec;
}

describe('loadKubeConfig', () => {
  it('uses --kubeconfig when given, and its context namespace as the default', async () => {
    api = new FakeApiServer({ requireToken: 'fake-service-account-token' });
    await api.start();
    const file = join(dir, 'config');
    writeFileSync(file, kubeConfigYaml(api.url, 'from-context'));
    const kc = loadKubeConfig({ kubeconfig: file, env: {} });
    const scope = resolveWatchScope(undefined, kc, { kubeconfig: file, env: {}, serviceAccountRoot: join(dir, 'none') });
    expect(scope).toEqual({ namespaces: ['from-context'], leaseNamespace: 'from-context' });
    await syncsWith(kc, 'from-context');
    expect(api.requests.every((r) => r.authenticated)).toBe(true);
  });

  it('uses the in-cluster service account over HTTPS with the mounted CA and token', async () => {
    const root = join(dir, 'pod');
    const sa = join(root, SERVICE_ACCOUNT_DIR);
    mkdirSync(sa, { recursive: true });
    writeLoopbackCert(join(root, 'key.pem'), join(sa, 'ca.crt'));
    writeFileSync(join(sa, 'token'), 'projected-sa-token\n');
    writeFileSync(join(sa, 'namespace'), 'gateway-ns');
    api = new FakeApiServer({
      tls: { key: readFileSync(join(root, 'key.pem'), 'utf8'), cert: readFileSync(join(sa, 'ca.crt'), 'utf8') },
      requireToken: 'projected-sa-token',
    });
    await api.start();
    const port = new URL(api.url).port;
    const saved = { host: process.env.KUBERNETES_SERVICE_HOST, port: process.env.KUBERNETES_SERVICE_PORT };
    process.env.KUBERNETES_SERVICE_HOST = '127.0.0.1';
    process.env.KUBERNETES_SERVICE_PORT = port;
    try {
      const kc = loadKubeConfig({ serviceAccountRoot: root });
      expect(kc.getCurrentCluster()?.server).toBe(`https://127.0.0.1:${port}`);
      const scope = resolveWatchScope(undefined, kc, { env: { KUBERNETES_SERVICE_HOST: '127.0.0.1' }, serviceAccountRoot: root });
      expect(scope).toEqual({ namespaces: ['gateway-ns'], leaseNamespace: 'gateway-ns' });
      await syncsWith(kc, 'gateway-ns');
      expect(api.requests.length).toBeGreaterThan(0);
    } finally {
      if (saved.host === undefined) delete process.env.KUBERNETES_SERVICE_HOST;
      else process.env.KUBERNETES_SERVICE_HOST = saved.host;
      if (saved.port === undefined) delete process.env.KUBERNETES_SERVICE_PORT;
      else process.env.KUBERNETES_SERVICE_PORT = saved.port;
    }
  });
});

describe('resolveWatchScope (what serve --source kubernetes watches)', () => {
  const kc = new KubeConfig(); // no context: its namespace is "default"
  const outside = { env: {}, serviceAccountRoot: '/nonexistent' };
  it('"*" is every namespace and a list is those namespaces; the Lease stays in the first or the context one', () => {
    expect(resolveWatchScope('*', kc, outside)).toEqual({ namespaces: 'all', leaseNamespace: 'default' });
    expect(resolveWatchScope(['a', 'b'], kc, outside)).toEqual({ namespaces: ['a', 'b'], leaseNamespace: 'a' });
  });
  it('defaults to POD_NAMESPACE, which also holds the Lease, then outside a pod to the context\'s "default"', () => {
    expect(resolveWatchScope(undefined, kc, { env: { POD_NAMESPACE: 'mine' }, serviceAccountRoot: '/nonexistent' })).toEqual({
      namespaces: ['mine'],
      leaseNamespace: 'mine',
    });
    expect(resolveWatchScope(['a'], kc, { env: { POD_NAMESPACE: 'mine' }, serviceAccountRoot: '/nonexistent' })).toEqual({
      namespaces: ['a'],
      leaseNamespace: 'mine',
    });
    expect(resolveWatchScope(undefined, kc, outside)).toEqual({ namespaces: ['default'], leaseNamespace: 'default' });
  });
  it('in a pod that knows no namespace: nothing, so serve asks for --namespaces instead of guessing', () => {
    expect(resolveWatchScope(undefined, kc, { env: { KUBERNETES_SERVICE_HOST: '10.0.0.1' }, serviceAccountRoot: '/nonexistent' })).toBeUndefined();
  });
});
