// The gateway loads @kubernetes/client-node's KubeConfig without the generated API barrel (kube-client.ts):
// checked in a fresh process, since a test worker may have loaded the whole client already.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { KubeApiError, kubeRequest } from '../../../src/config/sources/kube-client.js';
import { kubeConfigFor } from '../../fake-apiserver/kubeconfig.js';
import { FakeApiServer } from '../../fake-apiserver/server.js';

const run = promisify(execFile);
const root = join(import.meta.dirname, '..', '..', '..');

let api: FakeApiServer | undefined;
afterEach(async () => {
  await api?.stop();
  api = undefined;
});

describe('kube-client', () => {
  it('loads KubeConfig and Watch without the generated API classes, and KubeConfig still authenticates', async () => {
    const script = `
      import { registerHooks } from 'node:module';
      const loaded = [];
      registerHooks({ resolve(s, c, next) { const r = next(s, c); loaded.push(r.url); return r; } });
      const k = await import('./src/config/sources/kube-client.ts');
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
