// The gateway against the real API server, as the chart's ServiceAccount with exactly the chart's RBAC, in each
// namespace mode the chart offers (its own namespace, a list, every namespace): it serves a chat request, writes
// Ready conditions and status.usage on the custom resources, holds the Lease, and the server (audit log) answered
// none of its requests with 403. The modes share one API server (one other envtest files use before or after); each has
// its own release namespace and ServiceAccount, and runs after the previous mode's gateway has stopped.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
  type Obj,
  readyAtGeneration,
  scratch,
  serviceAccountUser,
  startChartGateway,
  tenantObjects,
} from './gateway-cluster.js';

const MODES = [
  { mode: 'its own namespace (watchNamespaces: [])', release: 'gw-own', watchNamespaces: [], watched: ['gw-own'] },
  { mode: 'a list of namespaces', release: 'gw-list', watchNamespaces: ['list-a', 'list-b'], watched: ['list-a', 'list-b'] },
  { mode: 'every namespace ("*")', release: 'gw-all', watchNamespaces: ['*'], watched: ['all-a', 'all-b'] },
];
const KINDS = ['modelroutes', 'groups', 'gatewaytokens'] as const;

describeEnvtest('the chart-configured gateway on a real API server, as its ServiceAccount', () => {
  let server: Envtest;
  let upstream: FaultyUpstream;
  const files = scratch();
  beforeAll(async () => {
    server = sharedEnvtest();
    installCrds(server);
    upstream = await startFaultyUpstream('upstream');
  }, 120_000);
  afterAll(async () => {
    server?.stop(); // hands the shared server back (each mode's gateway has stopped)
    await upstream?.close();
    files.remove();
  });

  for (const { mode, release, watchNamespaces, watched } of MODES) {
    describe(`watching ${mode}`, () => {
      let gateway: ChartGateway | undefined;
      let rendered: Obj[];
      let leaseName: string;
      beforeAll(async () => {
        const objects = watched.flatMap((ns) => tenantObjects(ns, upstream.baseURL));
        const deployed = deployChartRelease(server, files.dir, release, { gateway: { watchNamespaces } }, { watched, objects });
        ({ rendered, leaseName } = deployed);
        // The mode's RBAC shape: a ClusterRole only for "*", else a Role in every watched namespace.
        const roles = deployed.rbac.filter((o) => o.kind === 'Role' && !o.metadata.name.endsWith('-leader-election'));
        if (watchNamespaces[0] === '*') expect(deployed.rbac.filter((o) => o.kind === 'ClusterRole')).toHaveLength(1);
        else expect(roles.map((r) => r.metadata.namespace).sort()).toEqual([...watched].sort());
        gateway = await startChartGateway(files.dir, rendered, deployed.kubeconfig, `${release}-pod-0`, { MG_USAGE_STATUS_INTERVAL: '1s' });
      }, 90_000);
      afterAll(async () => {
        await gateway?.stop();
      });

      it('serves a chat request through the openai SDK in every watched namespace', async () => {
        for (const ns of watched) {
          const reply = await gateway!.client(clientKey(ns)).chat.completions.create({ model: `envtest-${ns}`, messages: [{ role: 'user', content: 'hi' }] });
          expect(reply.choices[0]?.message.content).toBe('from upstream');
        }
      });

      it('holds the Lease in its release namespace', async () => {
        expect(await waitUntil(async () => (await leaseHolder(server, release, leaseName)) === `${release}-pod-0`, 15_000, 'lease holder')).toBe(true);
      });

      it('writes Ready for the current generation on every ModelRoute, Group and GatewayToken', { timeout: 20_000 }, async () => {
        for (const ns of watched) {
          for (const [plural, name] of [
            ['modelroutes', `envtest-${ns}`],
            ['groups', 'team'],
            ['gatewaytokens', 'client'],
          ] as const) {
            await waitUntil(async () => readyAtGeneration(await getResource(server, plural, ns, name)), 15_000, `Ready on ${plural}/${ns}/${name}`);
          }
        }
      });

      it('writes status.usage on the Group and the GatewayToken after a request', { timeout: 20_000 }, async () => {
        for (const ns of watched) {
          for (const [plural, name] of [
            ['groups', 'team'],
            ['gatewaytokens', 'client'],
          ] as const) {
            const usage = await waitUntil(
              async () => {
                // Tokens per day, not requests per minute: a minute's window may roll over between request and write.
                const u = (await getResource(server, plural, ns, name))?.status?.usage;
                return u?.tokensPerDay?.used >= 1 ? u : undefined;
              },
              15_000,
              `status.usage on ${plural}/${ns}/${name}`,
            );
            expect(usage.requestsPerMinute.limit).toBe(plural === 'groups' ? 1000 : 100);
            expect(typeof usage.updatedAt).toBe('string');
          }
        }
      });

      it('was never answered 403 by the API server (audit log), across lists, watches, status and Lease writes', () => {
        const user = serviceAccountUser(rendered);
        const events = server.auditEvents().filter((e) => e.user.username === user);
        const uri = (e: { requestURI: string }) => e.requestURI.split('?')[0]!;
        // Enough traffic that "no 403" means something: every kind listed, status patched, the Lease written.
        for (const kind of [...KINDS, 'secrets'])
          expect(
            events.some((e) => e.verb === 'list' && uri(e).endsWith(`/${kind}`)),
            `list ${kind}`,
          ).toBe(true);
        expect(events.some((e) => e.verb === 'watch')).toBe(true);
        expect(events.some((e) => e.verb === 'patch' && uri(e).endsWith('/status') && e.responseStatus?.code === 200)).toBe(true);
        expect(events.some((e) => uri(e).includes('/leases') && e.responseStatus?.code !== undefined && e.responseStatus.code < 300)).toBe(true);
        const forbidden = events.filter((e) => e.responseStatus?.code === 403).map((e) => `${e.verb} ${e.requestURI}`);
        expect(forbidden).toEqual([]);
      });
    });
  }
});
