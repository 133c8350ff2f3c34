// The gateway loads @kubernetes/client-node's KubeConfig without the generated API barrel (kube-client.ts):
// checked in a fresh process, since a test worker may have loaded the whole client already. And kubeRequest keeps
// one connection pool per KubeConfig: connections are counted on the fake API server's side.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { KubeApiError, KubeConfig, kubeRequest } from '../../../src/sources/kubernetes/kube-client.js';
import { kubeConfigFor } from '../../fake-apiserver/kubeconfig.js';
import { FakeApiServer } from '../../fake-apiserver/server.js';
import { writeLoopbackCert } from '../../fake-apiserver/loopback-cert.js';

const run = promisify(execFile);
const root = join(import.meta.dirname, '..', '..', '..');

let api: FakeApiServer | undefined;
let other: FakeApiServer | undefined;
afterEach(async () => {
  await api?.stop();
  await other?.stop();
  api = other = undefined;
});

const GROUPS = '/apis/modelgateway.io/v1alpha1/namespaces/ns/groups';

// undici hands a keep-alive connection back to its pool one event-loop turn after a response ends (it first checks
// that the server did not close it): a request sent in the same turn takes a second connection. So these tests
// pace their requests, as the status writer and the Lease renewal are paced; back to back is checked on its own.
async function paced(n: number, request: (i: number) => Promise<unknown>): Promise<void> {
  for (let i = 0; i < n; i++) {
    await request(i);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

describe('kube-client', () => {
  it('loads KubeConfig and Watch without the generated API classes, and KubeConfig still authenticates', async () => {
    const script = `
      import { registerHooks } from 'node:module';
      const loaded = [];
      registerHooks({ resolve(s, c, next) { const r = next(s, c); loaded.push(r.url); return r; } });
      const k = await import('./src/sources/kubernetes/kube-client.ts');
      const kc = new k.KubeConfig();
      kc.loadFromOptions({ clusters: [{ name: 'c', server: 'https://127.0.0.1:1' }], users: [{ name: 'u', token: 'secret-token' }], contexts: [{ name: 'x', cluster: 'c', user: 'u' }], currentContext: 'x' });
      const opts = {};
      await kc.applyToHTTPSOptions(opts);
      console.log(JSON.stringify({
        slim: k.loadedWithoutGeneratedApis,
        models: loaded.filter((u) => u.includes('/client-node/dist/gen/models/')).length,
        apis: loaded.filter((u) => u.includes('/client-node/dist/gen/apis/')).length,
        watch: typeof k.Watch,
        auth: opts.headers?.Authorization === 'Bearer secret-token',
      }));`;
    const { stdout } = await run(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: root });
    expect(JSON.parse(stdout.trim().split('\n').at(-1)!)).toEqual({ slim: true, models: 0, apis: 0, watch: 'function', auth: true });
  });

  it('kubeRequest: authenticated JSON requests; a failure carries the HTTP status as code, never the body', async () => {
    api = new FakeApiServer({ requireToken: 'tok' });
    await api.start();
    api.apply({ apiVersion: 'modelgateway.io/v1alpha1', kind: 'Group', metadata: { name: 'g', namespace: 'ns' }, spec: { models: ['m'] } } as never);
    const kc = kubeConfigFor(api.url, 'ns', 'tok');
    const g = await kubeRequest<{ spec: { models: string[] } }>(kc, '/apis/modelgateway.io/v1alpha1/namespaces/ns/groups/g');
    expect(g.spec.models).toEqual(['m']);
    const err = await kubeRequest(kc, '/apis/modelgateway.io/v1alpha1/namespaces/ns/groups/missing').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(KubeApiError);
    expect((err as KubeApiError).code).toBe(404);
    expect((err as Error).message).toBe('GET /apis/modelgateway.io/v1alpha1/namespaces/ns/groups/missing: HTTP 404');
    const wrong = kubeConfigFor(api.url, 'ns', 'wrong');
    expect(((await kubeRequest(wrong, '/api/v1/namespaces/ns/secrets').catch((e: unknown) => e)) as KubeApiError).code).toBe(401);
  });
});

describe('kubeRequest connection reuse', () => {
  it('sends 30 sequential requests (hits and 404s) over one connection', async () => {
    api = new FakeApiServer();
    await api.start();
    api.apply({ apiVersion: 'modelgateway.io/v1alpha1', kind: 'Group', metadata: { name: 'g', namespace: 'ns' }, spec: { models: ['m'] } } as never);
    // skipTLSVerify (which the fake's kubeconfig sets for http://) is a TLS option: the client builds an undici Agent for it.
    const kc = kubeConfigFor(api.url, 'ns');
    await paced(30, async (i) => {
      if (i % 3 === 2) {
        const err = await kubeRequest(kc, `${GROUPS}/missing`).catch((e: unknown) => e);
        expect((err as KubeApiError).code).toBe(404);
        expect((err as Error).message).toBe(`GET ${GROUPS}/missing: HTTP 404`);
      } else {
        expect(await kubeRequest<{ metadata: { name: string } }>(kc, `${GROUPS}/g`)).toMatchObject({ metadata: { name: 'g' } });
      }
    });
    expect(api.requests).toHaveLength(30);
    expect(api.connections).toBe(1);
    // Back to back (same event-loop turn, see paced): one more connection at most, then both are reused.
    for (let i = 0; i < 30; i++) await kubeRequest(kc, GROUPS);
    expect(api.connections).toBeLessThanOrEqual(2);
  });

  it('over HTTPS with a CA file: one TLS connection; a rotated CA gets a new pool and the old connection is closed', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mg-kube-client-'));
    try {
      const cert = (name: string) => {
        writeLoopbackCert(join(dir, `${name}.key`), join(dir, `${name}.crt`));
        return readFileSync(join(dir, `${name}.crt`), 'utf8');
      };
      const serving = cert('serving');
      const next = cert('next');
      api = new FakeApiServer({ tls: { key: readFileSync(join(dir, 'serving.key'), 'utf8'), cert: serving }, requireToken: 'tok' });
      await api.start();
      const caFile = join(dir, 'ca.crt');
      writeFileSync(caFile, serving);
      const kc = new KubeConfig();
      kc.loadFromOptions({
        clusters: [{ name: 'c', server: api.url, caFile }],
        users: [{ name: 'u', token: 'tok' }],
        contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
        currentContext: 'x',
      });
      await paced(30, () => kubeRequest(kc, GROUPS));
      expect(api.connections).toBe(1);
      // The client re-reads the CA file on every request, as a pod's mounted CA can be rotated in place.
      writeFileSync(caFile, serving + next);
      await paced(5, () => kubeRequest(kc, GROUPS));
      expect(api.connections).toBe(2);
      await vi.waitFor(() => expect(api!.openConnections).toBe(1));
      expect(api.requests.every((r) => r.user === 'tok')).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a changed server gets a new pool and the old one is closed; a rotated token keeps the pool', async () => {
    api = new FakeApiServer();
    other = new FakeApiServer();
    await api.start();
    await other.start();
    const kc = kubeConfigFor(api.url, 'ns', 'first');
    await paced(3, () => kubeRequest(kc, GROUPS));
    // Bearer tokens are headers, applied per request: a new token needs no new connection.
    kc.loadFromString(kubeConfigFor(api.url, 'ns', 'second').exportConfig());
    await paced(3, () => kubeRequest(kc, GROUPS));
    expect(api.requests.map((r) => r.user)).toEqual(['first', 'first', 'first', 'second', 'second', 'second']);
    expect(api.connections).toBe(1);
    kc.loadFromString(kubeConfigFor(other.url, 'ns', 'second').exportConfig());
    await paced(3, () => kubeRequest(kc, GROUPS));
    expect(other.requests).toHaveLength(3);
    expect(other.connections).toBe(1);
    await vi.waitFor(() => expect(api!.openConnections).toBe(0));
  });
});
