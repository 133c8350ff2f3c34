// Two gateway replicas, one Lease, on the real API server (as the chart's ServiceAccount and RBAC): the leader is
// killed with SIGKILL (no release of the Lease), the other replica takes the Lease over once it expires, and then
// writes the status a change needs (Ready for the Group's new generation), which only a leader writes.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type FaultyUpstream, startFaultyUpstream } from '../fakes/faulty-upstream.js';
import { waitUntil } from '../support/wait.js';
import { describeEnvtest, type Envtest, sharedEnvtest } from './envtest.js';
import {
  type ChartGateway,
  clientKey,
  deployChartRelease,
  getResource,
  installCrds,
  leaseHolder,
  readyAtGeneration,
  scratch,
  startChartGateway,
  tenantObjects,
} from './gateway-cluster.js';

const NS = 'failover';
// A short Lease (the CLI's --lease-duration) so the takeover after a crash takes seconds, not the default 15 s.
const LEASE_DURATION_MS = 3_000;

describeEnvtest('two gateway replicas sharing one Lease on a real API server', () => {
  let server: Envtest;
  let upstream: FaultyUpstream;
  const files = scratch();
  const replicas: ChartGateway[] = [];
  let leaseName: string;

  beforeAll(async () => {
    server = sharedEnvtest();
    installCrds(server);
    upstream = await startFaultyUpstream('upstream');
    const deployed = deployChartRelease(server, files.dir, NS, {}, { objects: tenantObjects(NS, upstream.baseURL) });
    const { rendered, kubeconfig } = deployed;
    leaseName = deployed.leaseName;
    const env = { MG_LEASE_DURATION: `${LEASE_DURATION_MS}ms` };
    replicas.push(...(await Promise.all([0, 1].map((i) => startChartGateway(files.dir, rendered, kubeconfig, `${NS}-pod-${i}`, env)))));
  }, 120_000);
  afterAll(async () => {
    await Promise.all(replicas.map((r) => r.stop('SIGKILL')));
    server?.stop(); // hands the shared server back
    await upstream?.close();
    files.remove();
  });

  it('the standby takes the Lease over from a killed leader and writes the status of a later change', { timeout: 40_000 }, async () => {
    const holder = await waitUntil(() => leaseHolder(server, NS, leaseName), 15_000, 'a Lease holder');
    const leader = replicas.find((r) => r.podName === holder);
    const standby = replicas.find((r) => r.podName !== holder)!;
    expect(leader, `holder ${holder} is one of the replicas`).toBeDefined();
    await waitUntil(async () => readyAtGeneration(await getResource(server, 'groups', NS, 'team')), 15_000, 'Ready on the Group');

    leader!.run.child.kill('SIGKILL');
    await leader!.run.exited;
    const killedAt = Date.now();
    // A spec change: a new generation, whose Ready (observedGeneration) only a leader writes.
    const patched = server.kubectl([
      '-n',
      NS,
      'patch',
      'groups.modelgateway.io',
      'team',
      '--type',
      'merge',
      '-p',
      '{"spec":{"models":["envtest-*","extra-*"]}}',
    ]);
    expect(patched.status, patched.stderr).toBe(0);
    const generation = (await getResource(server, 'groups', NS, 'team'))!.metadata.generation as number;
    expect(generation).toBeGreaterThan(1);

    // The standby serves meanwhile: serving never depends on the Lease.
    const reply = await standby.client(clientKey(NS)).chat.completions.create({ model: `envtest-${NS}`, messages: [{ role: 'user', content: 'hi' }] });
    expect(reply.choices[0]?.message.content).toBe('from upstream');

    await waitUntil(async () => (await leaseHolder(server, NS, leaseName)) === standby.podName, 15_000, 'the standby holding the Lease');
    const tookOverMs = Date.now() - killedAt;
    await standby.run.waitForLog((l) => l.msg === 'became leader', 1_000);
    const ready = await waitUntil(async () => readyAtGeneration(await getResource(server, 'groups', NS, 'team')), 10_000, 'Ready for the new generation');
    expect(ready.observedGeneration).toBe(generation);
    console.info(`leader-failover: the standby held the Lease ${tookOverMs} ms after the leader was killed (lease ${LEASE_DURATION_MS} ms)`);
    // It waited out the Lease (the killed leader never released it), and not much longer.
    expect(tookOverMs).toBeGreaterThan(LEASE_DURATION_MS - 1_000);
    expect(tookOverMs).toBeLessThan(LEASE_DURATION_MS + 5_000);
  });

  it('neither replica was answered 403 by the API server', () => {
    const events = server.auditEvents().filter((e) => e.user.username === `system:serviceaccount:${NS}:model-gateway`);
    expect(events.filter((e) => e.requestURI.includes('/leases')).length).toBeGreaterThan(2);
    expect(events.filter((e) => e.responseStatus?.code === 403).map((e) => `${e.verb} ${e.requestURI}`)).toEqual([]);
  });
});
