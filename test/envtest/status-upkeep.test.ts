// What `kubectl get` shows must stay what the gateway does, also when no spec changes: on a real API server, the
// leader puts back a status someone edited by hand (the status subresource is writable to anyone allowed to), a
// Secret's key renamed shows on the token and stops the key at once, and a token turns Ready=False Expired when
// its expiresAt passes, not only at the next unrelated change.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { sha256Hex } from '../../src/model/digest.js';
import { startGateway, type GatewayHandle } from '../../src/gateway/main.js';
import { KubernetesSourceWithStatus } from '../../src/gateway/kubernetes-source-with-status.js';
import { loadKubeConfig } from '../../src/sources/kubernetes/kube-config.js';
import { createMetrics } from '../../src/observability/metrics.js';
import { captureLogs } from '../support/log-capture.js';
import { waitUntil } from '../support/wait.js';
import { describeEnvtest, type Envtest, kubectlOk, sharedEnvtest } from './envtest.js';
import { apply, clientKey, getResource, installCrds, type Obj, readyAtGeneration, tenantObjects } from './gateway-cluster.js';

const NS = 'status-upkeep';
const GV = 'modelgateway.io/v1alpha1';

const readyOf = (o: Obj | undefined) => (o?.status?.conditions as Obj[] | undefined)?.find((c) => c.type === 'Ready');

describeEnvtest('status kept true to what the gateway does, on a real API server', () => {
  let server: Envtest;
  let gateway: GatewayHandle | undefined;

  beforeAll(async () => {
    server = sharedEnvtest();
    installCrds(server);
    kubectlOk(server, ['create', 'namespace', NS]);
    // The upstream is never called: these tests read status and authenticate only.
    apply(server, tenantObjects(NS, 'http://127.0.0.1:9/v1'));
    const kubeConfig = loadKubeConfig({ kubeconfig: server.env.KUBECONFIG });
    gateway = await startGateway({
      source: ({ logger, metrics, pipeline, usage, credentials }) =>
        new KubernetesSourceWithStatus({
          kubeConfig,
          namespaces: [NS],
          secretSelector: 'modelgateway.io/secret=true',
          leaderElection: true,
          leaseNamespace: NS,
          leaseName: 'model-gateway',
          identity: `${NS}-0`,
          logger,
          pipeline,
          registry: metrics.registry,
          usage,
          credentials,
          tuning: { election: { leaseDurationMs: 3_000, renewDeadlineMs: 2_000, retryPeriodMs: 400 } },
        }),
      host: '127.0.0.1',
      port: 0,
      metricsPort: 0,
      demo: false,
      logger: captureLogs().logger,
      metrics: createMetrics({ defaultMetrics: false }),
    });
    await gateway.ready;
  }, 60_000);
  afterAll(async () => {
    await gateway?.close({ timeoutMs: 0 });
    server?.stop(); // hands the shared server back
  });

  it('puts back a status edited by hand through the status subresource', { timeout: 30_000 }, async () => {
    const ready = await waitUntil(async () => readyAtGeneration(await getResource(server, 'gatewaytokens', NS, 'client')), 15_000, 'Ready on the token');
    const tampered = { type: 'Ready', status: 'False', reason: 'Tampered', message: 'edited by hand', lastTransitionTime: '2020-01-01T00:00:00Z' };
    kubectlOk(server, [
      '-n',
      NS,
      'patch',
      'gatewaytokens.modelgateway.io',
      'client',
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify({ status: { conditions: [tampered] } }),
    ]);
    const back = await waitUntil(
      async () => readyAtGeneration(await getResource(server, 'gatewaytokens', NS, 'client')),
      10_000,
      'the gateway to put Ready=True back',
    );
    expect(back).toMatchObject({ status: 'True', observedGeneration: ready.observedGeneration });
    const conditions = (await getResource(server, 'gatewaytokens', NS, 'client'))!.status.conditions as Obj[];
    expect(conditions.map((c) => c.type).sort()).toEqual(['Accepted', 'Ready', 'ResolvedRefs']);
    // Its own write comes back as a status change too: that one is found equal, and nothing is written again.
    const written = async () =>
      (await gateway!.metrics.registry.getSingleMetric('model_gateway_status_writes_total')!.get()).values.reduce((n, v) => n + v.value, 0);
    const before = await written();
    await new Promise((r) => setTimeout(r, 1_500));
    expect(await written()).toBe(before);
  });

  it("a Secret's key renamed: the token says SecretKeyNotFound and its key is refused at once; renamed back, both recover", { timeout: 30_000 }, async () => {
    const models = async () => (await fetch(`${gateway!.apiURL}/v1/models`, { headers: { authorization: `Bearer ${clientKey(NS)}` } })).status;
    const refs = async () => (await getResource(server, 'gatewaytokens', NS, 'client'))?.status?.conditions?.find((c: Obj) => c.type === 'ResolvedRefs');
    expect(await models()).toBe(200);
    const move = (from: string, to: string) =>
      kubectlOk(server, [
        '-n',
        NS,
        'patch',
        'secret',
        'client-key',
        '--type=json',
        '-p',
        JSON.stringify([{ op: 'move', from: `/data/${from}`, path: `/data/${to}` }]),
      ]);
    move('token', 'renamed');
    await waitUntil(async () => (await models()) === 401, 5_000, 'the key refused');
    const missing = await waitUntil(async () => ((await refs())?.status === 'False' ? refs() : undefined), 10_000, 'ResolvedRefs=False');
    expect(missing).toMatchObject({ reason: 'SecretKeyNotFound', message: 'Secret "client-key" has no key "token"' });
    move('renamed', 'token');
    await waitUntil(async () => (await models()) === 200, 5_000, 'the key accepted again');
    await waitUntil(async () => readyAtGeneration(await getResource(server, 'gatewaytokens', NS, 'client')), 10_000, 'Ready again');
  });

  it('turns a token Ready=False Expired when its expiresAt passes, with nothing else changing', { timeout: 30_000 }, async () => {
    const key = `sk-${NS}-expiring`;
    const expiresAt = new Date(Date.now() + 4_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
    apply(server, [
      { apiVersion: GV, kind: 'GatewayToken', metadata: { name: 'expiring', namespace: NS }, spec: { group: 'team', sha256: sha256Hex(key), expiresAt } },
    ]);
    await waitUntil(async () => readyAtGeneration(await getResource(server, 'gatewaytokens', NS, 'expiring')), 10_000, 'Ready before expiry');
    const expired = await waitUntil(
      async () => {
        const c = readyOf(await getResource(server, 'gatewaytokens', NS, 'expiring'));
        return c?.status === 'False' ? c : undefined;
      },
      15_000,
      'Ready=False after expiresAt',
    );
    expect(expired).toMatchObject({ reason: 'Expired', message: `the token expired at ${expiresAt}` });
    expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(expiresAt));
    // What `kubectl get gwt` prints from it (the CRD's printer columns): READY False, and with -o wide the reason.
    const table = kubectlOk(server, ['-n', NS, 'get', 'gwt', 'expiring', '-o', 'wide']).trim().split('\n');
    const cells = (line: string) => line.split(/\s{2,}/);
    const row = Object.fromEntries(cells(table[0]!).map((h, i) => [h, cells(table[1]!)[i]]));
    expect(row).toMatchObject({ NAME: 'expiring', GROUP: 'team', READY: 'False', EXPIRES: expiresAt, REASON: 'Expired' });
    const models = await fetch(`${gateway!.apiURL}/v1/models`, { headers: { authorization: `Bearer ${key}` } });
    expect(models.status).toBe(401);
  });
});
