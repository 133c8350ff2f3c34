// The budget Event on a real API server, made by the gateway as the chart's ServiceAccount with exactly the chart's
// RBAC: a Group's costPerDay spent past its warnAt gets one Warning Event, reason BudgetThresholdCrossed, on the Group.
// Later rounds of the same leader, and a second replica that takes the Lease over (sharing the spend through Redis),
// do not duplicate it: the second one's create is answered 409. No request of the gateway was answered 403.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type FaultyUpstream, startFaultyUpstream } from '../fakes/faulty-upstream.js';
import { startRedis, type TestRedis } from '../support/redis-server.js';
import { waitUntil } from '../support/wait.js';
import { describeEnvtest, type Envtest, sharedEnvtest } from './envtest.js';
import {
  adminGet,
  type ChartGateway,
  clientKey,
  deployChartRelease,
  getResource,
  installCrds,
  leaseHolder,
  type Obj,
  scratch,
  serviceAccountUser,
  startChartGateway,
} from './gateway-cluster.js';

const NS = 'gw-budget';
const GV = 'modelgateway.io/v1alpha1';
const MODEL = 'envtest-budget';
const LABEL = { 'modelgateway.io/secret': 'true' };

/**
 * Output at 0.10 per output token and input free, so a request with max_tokens 2 reserves exactly what it costs
 * (the fake answers 2 completion tokens): 0.20 each against a 1.00 day, warnAt 50. The third request crosses.
 */
function objects(upstreamBaseURL: string): Obj[] {
  const meta = (name: string, labels?: Record<string, string>) => ({ name, namespace: NS, ...(labels ? { labels } : {}) });
  return [
    { apiVersion: 'v1', kind: 'Secret', metadata: meta('upstream', LABEL), stringData: { apiKey: 'sk-upstream-envtest' } },
    { apiVersion: 'v1', kind: 'Secret', metadata: meta('client-key', LABEL), stringData: { token: clientKey(NS) } },
    {
      apiVersion: GV,
      kind: 'ModelRoute',
      metadata: meta(MODEL),
      spec: {
        model: MODEL,
        backends: [
          {
            name: 'fake',
            baseURL: upstreamBaseURL,
            apiKeySecretRef: { name: 'upstream', key: 'apiKey' },
            pricing: { inputPerMTok: '0', outputPerMTok: '100000' },
          },
        ],
      },
    },
    { apiVersion: GV, kind: 'Group', metadata: meta('team'), spec: { models: [MODEL], limits: { tokensPerDay: 1_000_000, costPerDay: '1.00', warnAt: 50 } } },
    { apiVersion: GV, kind: 'GatewayToken', metadata: meta('client'), spec: { group: 'team', secretRef: { name: 'client-key', key: 'token' } } },
  ];
}

describeEnvtest('budget Events on a real API server, as the chart ServiceAccount', () => {
  let server: Envtest;
  let upstream: FaultyUpstream;
  let redis: TestRedis;
  let rendered: Obj[];
  let kubeconfig: string;
  let leaseName: string;
  const gateways: ChartGateway[] = [];
  const files = scratch();

  const start = async (pod: string) => {
    const gw = await startChartGateway(files.dir, rendered, kubeconfig, pod, { MG_USAGE_STATUS_INTERVAL: '1s', MG_REDIS_URL: redis.url });
    gateways.push(gw);
    return gw;
  };
  const budgetEvents = async (): Promise<Obj[]> =>
    ((await adminGet(server, `/api/v1/namespaces/${NS}/events?fieldSelector=reason%3DBudgetThresholdCrossed`))?.items ?? []) as Obj[];
  /** The chart ServiceAccount's creates of Events, by response code. */
  const eventCreates = () =>
    server
      .auditEvents()
      .filter((e) => e.user.username === serviceAccountUser(rendered) && e.verb === 'create' && e.requestURI.startsWith(`/api/v1/namespaces/${NS}/events`))
      .map((e) => e.responseStatus?.code);
  const groupTokensUsed = async () => (await getResource(server, 'groups', NS, 'team'))?.status?.usage?.tokensPerDay?.used as number | undefined;

  beforeAll(async () => {
    server = sharedEnvtest();
    installCrds(server);
    [upstream, redis] = await Promise.all([startFaultyUpstream('upstream'), startRedis()]);
    ({ rendered, kubeconfig, leaseName } = deployChartRelease(
      server,
      files.dir,
      NS,
      { gateway: { watchNamespaces: [] } },
      { objects: objects(upstream.baseURL) },
    ));
  }, 120_000);
  afterAll(async () => {
    for (const gw of gateways) await gw.stop();
    server?.stop(); // hands the shared server back, once nothing of this file talks to it
    await Promise.all([upstream?.close(), redis?.stop()]);
    files.remove();
  });

  it('the leader creates one Warning Event on the Group once its costPerDay is past warnAt', { timeout: 60_000 }, async () => {
    const gw = await start(`${NS}-pod-0`);
    await waitUntil(async () => (await leaseHolder(server, NS, leaseName)) === `${NS}-pod-0`, 15_000, 'pod-0 to lead');
    const ask = () => gw.client(clientKey(NS)).chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'hi' }], max_tokens: 2 });
    await ask();
    await ask();
    // 40% spent, and a usage round (status.usage) has passed over it: no Event yet.
    await waitUntil(async () => (await groupTokensUsed()) === 6, 15_000, 'status.usage after two requests');
    expect(await budgetEvents()).toEqual([]);
    await ask(); // 60%
    const [event] = await waitUntil(
      async () => {
        const list = await budgetEvents();
        return list.length > 0 ? list : undefined;
      },
      15_000,
      'the budget Event',
    );
    const group = await getResource(server, 'groups', NS, 'team');
    expect(event).toMatchObject({
      type: 'Warning',
      reason: 'BudgetThresholdCrossed',
      involvedObject: { apiVersion: GV, kind: 'Group', namespace: NS, name: 'team', uid: group?.metadata.uid },
      // 60% spent, exactly: the spend status.usage shows, without the budget a replica holds in a lease.
      message: expect.stringMatching(/^costPerDay is 60% spent \(warnAt 50%\) in the UTC day \d{4}-\d{2}-\d{2}$/),
    });
    expect(event?.metadata.name).toMatch(/^team\.budget-group-costperday-\d{8}$/);
    // status.usage shows the figure the Event judged (both come from one read of the same spend counter).
    await waitUntil(
      async () => (await getResource(server, 'groups', NS, 'team'))?.status?.usage?.costPerDay?.used === '0.60',
      15_000,
      'status.usage to show the spend of 0.60',
    );
  });

  it('later rounds of the same leader do not create it again', { timeout: 30_000 }, async () => {
    const client = gateways[0]!.client(clientKey(NS));
    // Two more writes of status.usage: the round of the first finished its Event pass before the second was written.
    for (const used of [12, 15]) {
      await client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'hi' }], max_tokens: 2 });
      await waitUntil(async () => (await groupTokensUsed()) === used, 15_000, `status.usage ${used}`);
    }
    expect(eventCreates()).toEqual([201]);
    expect(await budgetEvents()).toHaveLength(1);
  });

  it('a second replica taking the Lease over is answered 409 and leaves one Event', { timeout: 60_000 }, async () => {
    await start(`${NS}-pod-1`);
    await gateways[0]!.stop(); // hands the Lease over
    await waitUntil(async () => (await leaseHolder(server, NS, leaseName)) === `${NS}-pod-1`, 20_000, 'pod-1 to lead');
    await waitUntil(() => eventCreates().includes(409), 20_000, "pod-1's create answered 409");
    expect(eventCreates().filter((c) => c === 201)).toHaveLength(1);
    expect(await budgetEvents()).toHaveLength(1);
  });

  it('was never answered 403 by the API server (audit log)', () => {
    const events = server.auditEvents().filter((e) => e.user.username === serviceAccountUser(rendered));
    expect(events.length).toBeGreaterThan(0);
    expect(events.filter((e) => e.responseStatus?.code === 403).map((e) => `${e.verb} ${e.requestURI}`)).toEqual([]);
  });
});
