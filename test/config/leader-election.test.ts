// Leader election on a Lease and "only the leader writes status", with two (or three) simulated replicas sharing
// one fake API server. Timings are shortened (lease 1.2 s, renew deadline 0.8 s, retry 0.1 s).
import { afterEach, describe, expect, it } from 'vitest';
import { LeaderElector } from '../../src/controller/leader-election.js';
import { REQUIRED_RULES, isAllowed } from '../../src/sources/kubernetes/kubernetes-rbac.js';
import { kubeConfigFor } from '../fake-apiserver/kubeconfig.js';
import { FakeApiServer } from '../fake-apiserver/server.js';
import type { KubeObj } from '../fake-apiserver/store.js';
import { startPipeline, type Pipeline } from './kubernetes-pipeline.js';
import { contractObjects } from './source-contract.js';
import { waitUntil } from '../support/wait.js';

const NS = 'gw';
let api: FakeApiServer;
const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
  await api?.stop();
});

async function fake() {
  api = new FakeApiServer();
  await api.start();
}

function elector(identity: string) {
  const e = new LeaderElector({
    kubeConfig: kubeConfigFor(api.url, NS, `token-${identity}`),
    namespace: NS,
    name: 'model-gateway',
    identity,
    leaseDurationMs: 1200,
    renewDeadlineMs: 800,
    retryPeriodMs: 100,
  });
  cleanups.push(() => e.stop());
  return e;
}

const holder = () => api.get('Lease', NS, 'model-gateway')?.spec as { holderIdentity?: string; leaseTransitions?: number; renewTime?: string } | undefined;

describe('LeaderElector', () => {
  it('elects exactly one of several candidates and keeps it (Lease get/create/update)', async () => {
    await fake();
    const es = ['a', 'b', 'c'].map(elector);
    for (const e of es) e.start();
    await waitUntil(() => es.some((e) => e.isLeader()));
    // Several rounds later there is still exactly one leader, and it is the Lease holder.
    for (let i = 0; i < 5; i++) {
      await new Promise((r) => setTimeout(r, 100));
      const leaders = es.filter((e) => e.isLeader());
      expect(leaders).toHaveLength(1);
    }
    const leader = ['a', 'b', 'c'][es.findIndex((e) => e.isLeader())];
    expect(holder()?.holderIdentity).toBe(leader);
    expect(holder()?.renewTime).toMatch(/\.\d{6}Z$/); // MicroTime, as the real API server demands
    const leaseCalls = api.requests.filter((r) => r.resource === 'leases');
    expect(new Set(leaseCalls.map((r) => r.verb))).toEqual(new Set(['get', 'create', 'update']));
  });

  it('hands over at once when the leader stops (it releases the Lease)', async () => {
    await fake();
    const a = elector('a');
    a.start();
    await waitUntil(() => a.isLeader());
    const b = elector('b');
    b.start();
    await new Promise((r) => setTimeout(r, 300));
    expect(b.isLeader()).toBe(false);
    const stoppedAt = Date.now();
    await a.stop();
    expect(a.isLeader()).toBe(false);
    await waitUntil(() => b.isLeader(), 3000);
    expect(Date.now() - stoppedAt).toBeLessThan(1000); // no need to wait for the 1.2 s lease to expire
    expect(holder()?.holderIdentity).toBe('b');
    expect(holder()?.leaseTransitions).toBe(1);
  });

  it('a leader cut off from the API server steps down, and another takes over after the lease expires', async () => {
    await fake();
    const a = elector('a');
    a.start();
    await waitUntil(() => a.isLeader());
    const b = elector('b');
    b.start();
    const changes: boolean[] = [];
    a.onChange((l) => changes.push(l));
    api.failRequests({ user: 'token-a' }, 503, Infinity);
    const cutAt = Date.now();
    await waitUntil(() => !a.isLeader(), 3000);
    await waitUntil(() => b.isLeader(), 5000);
    // b waited for the lease to expire on its own clock (≥ lease duration after a's last renewal).
    expect(Date.now() - cutAt).toBeGreaterThanOrEqual(1000);
    expect(changes).toEqual([false]);
  });
  it('a leader whose renewal hangs stops being leader at its renew deadline, before a standby may take over', async () => {
    await fake();
    const a = elector('a');
    a.start();
    await waitUntil(() => a.isLeader());
    const b = elector('b');
    b.start();
    // a's Lease requests go unanswered (a silent connection): its round never ends, so only the clock can tell.
    const release = api.stallRequests({ user: 'token-a', resource: 'leases' });
    cleanups.push(async () => release());
    const stalledAt = Date.now();
    await waitUntil(() => !a.isLeader(), 3000, 'a to step down');
    expect(Date.now() - stalledAt).toBeLessThan(1200); // within the renew deadline (0.8 s) of its last renewal
    await waitUntil(() => b.isLeader(), 5000, 'b to take over');
    expect(a.isLeader()).toBe(false);
    // Once a's requests are answered again it follows the Lease: b holds it, a stays a standby.
    release();
    await new Promise((r) => setTimeout(r, 300));
    expect([a.isLeader(), b.isLeader()]).toEqual([false, true]);
  });
});

describe('two gateway instances', () => {
  it('only the leader writes status; the other takes over when the leader stops', async () => {
    await fake();
    const o = contractObjects(NS);
    api.apply(o.group('g', []) as KubeObj);
    api.apply(o.route('r', 'm') as KubeObj);
    const first = await startPipeline(api, { namespace: NS, token: 'token-one', identity: 'one', leaderElection: true });
    let firstStopped = false;
    cleanups.push(async () => void (firstStopped || (await first.stop())));
    await waitUntil(() => first.status.isLeader());
    const second: Pipeline = await startPipeline(api, { namespace: NS, token: 'token-two', identity: 'two', leaderElection: true });
    cleanups.push(() => second.stop());
    const ready = (name: string, kind: 'Group' | 'ModelRoute' = 'Group') =>
      ((api.get(kind, NS, name)?.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions ?? []).find((c) => c.type === 'Ready')
        ?.status;
    await waitUntil(() => ready('g') === 'True' && ready('r', 'ModelRoute') === 'True');
    // Both instances compile and serve the same table...
    await waitUntil(() => second.tables.get()?.routes.has('m') === true);
    // ...but a change is written by the leader only.
    api.apply(o.group('g2', ['m']) as KubeObj);
    await waitUntil(() => ready('g2') === 'True');
    await new Promise((r) => setTimeout(r, 200));
    const writers = () => new Set(api.requests.filter((r) => r.verb === 'patch' && r.subresource === 'status').map((r) => r.user));
    expect(writers()).toEqual(new Set(['token-one']));
    expect(second.status.isLeader()).toBe(false);

    await first.stop();
    firstStopped = true;
    await waitUntil(() => second.status.isLeader(), 3000);
    api.apply(o.group('g3', ['m']) as KubeObj);
    await waitUntil(() => ready('g3') === 'True', 3000);
    const g3Writers = new Set(api.requests.filter((r) => r.verb === 'patch' && r.subresource === 'status' && r.name === 'g3').map((r) => r.user));
    expect(g3Writers).toEqual(new Set(['token-two']));
  });

  it('every request the gateway made is covered by REQUIRED_RULES', async () => {
    await fake();
    const o = contractObjects(NS);
    api.apply(o.secret('k', 'v') as KubeObj);
    api.apply(o.group('g', []) as KubeObj);
    api.apply(o.token('t', 'g', 'k') as KubeObj);
    api.failRequests({ verb: 'patch', subresource: 'status', name: 't' }, 409, 1); // exercise the conflict re-read
    // The group past a money limit's warnAt, so the leader creates its budget Event.
    const budget = {
      kind: 'Group',
      namespace: NS,
      name: 'g',
      field: 'costPerDay',
      model: undefined,
      window: 'day',
      windowStart: 0,
      spent: 9,
      limit: 10,
      warnAt: 80,
    } as const;
    const p = await startPipeline(api, { namespace: NS, leaderElection: true, budgets: async () => [budget] });
    cleanups.push(() => p.stop());
    await waitUntil(() => api.get('GatewayToken', NS, 't')?.status !== undefined, 5000);
    await waitUntil(() => api.get('Event', NS, 'g.budget-group-costperday-19700101') !== undefined, 5000);
    api.sendWatchError(410);
    api.dropWatches();
    await waitUntil(() => api.recorded('list').length > 4);
    await p.stop();
    cleanups.pop();
    const verbs = new Set(api.requests.map((r) => `${r.apiGroup}/${r.resource}${r.subresource ? `/${r.subresource}` : ''}:${r.verb}`));
    // The scenario exercised every rule (so the check below is not vacuous).
    for (const rule of REQUIRED_RULES) {
      for (const res of rule.resources) {
        for (const verb of rule.verbs) {
          if (res.startsWith('groups') || res.startsWith('modelroutes')) continue; // same code path as gatewaytokens
          expect(verbs, `${rule.apiGroups[0]}/${res}:${verb}`).toContain(`${rule.apiGroups[0]}/${res}:${verb}`);
        }
      }
    }
    const uncovered = api.requests.filter((r) => !isAllowed(REQUIRED_RULES, r));
    expect(uncovered.map((r) => `${r.method} ${r.path}`)).toEqual([]);
    expect(api.requests.filter((r) => r.resource === 'secrets').every((r) => r.labelSelector === 'modelgateway.io/secret=true')).toBe(true);
  });
});
