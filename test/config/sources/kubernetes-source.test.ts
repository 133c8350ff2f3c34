// Kubernetes-specific behaviour of the source, against the fake API server with the real client: Secret label
// selection, namespaces, pagination, readiness gating, reconnects, 410 relists, bookmarks, periodic relists.
import { afterEach, describe, expect, it } from 'vitest';
import { KubernetesSource, type KubernetesSourceOptions } from '../../../src/sources/kubernetes/kubernetes-source.js';
import { FakeApiServer, RESOURCE_TYPES, type FakeApiServerOptions } from '../../fake-apiserver/server.js';
import { kubeConfigFor } from '../../fake-apiserver/kubeconfig.js';
import type { KubeObj } from '../../fake-apiserver/store.js';
import { contractObjects, find, SnapshotRecorder } from '../source-contract.js';
import { waitUntil } from '../../support/wait.js';
import { captureLogs } from '../../support/log-capture.js';
import { applyEveryKind, changeEveryKind, comeBack, goDown, type Outage } from './outage.js';

const NS = 'team-a';
const o = contractObjects(NS);
let api: FakeApiServer | undefined;
let source: KubernetesSource | undefined;

afterEach(async () => {
  await source?.stop().catch(() => {});
  await api?.stop();
  source = undefined;
  api = undefined;
});

async function setup(opts: Partial<KubernetesSourceOptions> = {}, apiOpts: FakeApiServerOptions = {}) {
  api = new FakeApiServer(apiOpts);
  await api.start();
  source = new KubernetesSource({
    kubeConfig: kubeConfigFor(api.url),
    namespaces: [NS],
    debounceMs: 10,
    backoff: { initialMs: 20, maxMs: 200 },
    ...opts,
  });
  const rec = new SnapshotRecorder();
  return { api, source, rec };
}

const apply = (x: unknown) => api!.apply(x as KubeObj);
const names = (s: { objects: readonly { object: { kind?: unknown; metadata?: { name?: unknown } } }[] }, kind: string) =>
  s.objects
    .filter((x) => x.object.kind === kind)
    .map((x) => x.object.metadata?.name)
    .sort();

describe('KubernetesSource', () => {
  it('reads only Secrets carrying the label selector, and asks the API server for exactly those', async () => {
    const { api, source, rec } = await setup();
    apply(o.secret('labelled', 'v'));
    apply({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'unrelated', namespace: NS }, stringData: { token: 'nope' } });
    await source.start(rec.onSnapshot);
    await waitUntil(() => api.openWatches === 4);
    expect(names(rec.latest!, 'Secret')).toEqual(['labelled']);
    const secretCalls = api.requests.filter((r) => r.resource === 'secrets');
    expect(secretCalls.length).toBeGreaterThanOrEqual(2); // list + watch
    for (const r of secretCalls) expect(r.labelSelector).toBe('modelgateway.io/secret=true');
    // Removing the label makes the Secret disappear (the watch sees it leave the selection).
    api.patch('Secret', NS, 'labelled', { metadata: { labels: { 'modelgateway.io/secret': null } } });
    await rec.waitFor((s) => names(s, 'Secret').length === 0, 3000, 'the unlabelled secret to leave');
  });

  it('honours a custom secret selector', async () => {
    const { source, rec } = await setup({ secretSelector: 'team=a' });
    apply(o.secret('default-label', 'v'));
    apply({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'custom', namespace: NS, labels: { team: 'a' } }, stringData: { token: 'x' } });
    await source.start(rec.onSnapshot);
    expect(names(rec.latest!, 'Secret')).toEqual(['custom']);
  });

  it('watches a list of namespaces, or all of them', async () => {
    const { api, source, rec } = await setup({ namespaces: ['a', 'b'] });
    for (const ns of ['a', 'b', 'c']) apply(contractObjects(ns).group(`g-${ns}`, []));
    await source.start(rec.onSnapshot);
    expect(names(rec.latest!, 'Group')).toEqual(['g-a', 'g-b']);
    expect(new Set(api.requests.map((r) => r.namespace))).toEqual(new Set(['a', 'b']));
    await source.stop();

    const all = new KubernetesSource({ kubeConfig: kubeConfigFor(api.url), namespaces: 'all', debounceMs: 10 });
    const rec2 = new SnapshotRecorder();
    await all.start(rec2.onSnapshot);
    try {
      expect(names(rec2.latest!, 'Group')).toEqual(['g-a', 'g-b', 'g-c']);
      await waitUntil(() => api.requests.some((r) => r.path === '/apis/modelgateway.io/v1alpha1/groups' && r.verb === 'watch'));
    } finally {
      await all.stop();
    }
  });

  it('lists in pages, so a relist of a big namespace is bounded per request', async () => {
    const { api, source, rec } = await setup({ pageSize: 2 });
    for (let i = 0; i < 5; i++) apply(o.group(`g${i}`, []));
    await source.start(rec.onSnapshot);
    expect(names(rec.latest!, 'Group')).toEqual(['g0', 'g1', 'g2', 'g3', 'g4']);
    const lists = api.requests.filter((r) => r.resource === 'groups' && r.verb === 'list');
    expect(lists.map((r) => r.query.limit)).toEqual(['2', '2', '2']);
    expect(lists.filter((r) => r.query.continue).length).toBe(2);
  });

  it('keeps only what compile and the status writer read: no managedFields, no annotations', async () => {
    const { source, rec } = await setup();
    const lastApplied = JSON.stringify(o.group('g', ['m']));
    const bulky = {
      annotations: { 'kubectl.kubernetes.io/last-applied-configuration': lastApplied },
      managedFields: [{ manager: 'kubectl', operation: 'Apply', fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { 'f:models': {} } } }],
      labels: { team: 'a' },
    };
    const group = o.group('g', ['m']) as any;
    apply({ ...group, metadata: { ...group.metadata, ...bulky } });
    const secret = o.secret('s', 'v') as any;
    apply({ ...secret, metadata: { ...secret.metadata, annotations: bulky.annotations, managedFields: bulky.managedFields } });
    await source.start(rec.onSnapshot);
    const check = (x: any) => {
      expect(x.metadata.annotations).toBeUndefined();
      expect(x.metadata.managedFields).toBeUndefined();
      expect(x.metadata.name).toBeDefined();
      expect(x.metadata.resourceVersion).toBeDefined();
      expect(x.metadata.uid).toBeDefined(); // tells a re-created object from the old one
      expect(x.metadata.creationTimestamp).toBeDefined();
    };
    const g = find(rec.latest!, 'Group', 'g', NS) as any;
    check(g);
    expect(g.metadata.generation).toBe(1);
    expect(g.metadata.labels).toBeUndefined();
    expect(g.spec.models).toEqual(['m']);
    const s = find(rec.latest!, 'Secret', 's', NS) as any;
    check(s);
    expect(Object.keys(s.data)).toEqual(['token']);
    // The same through the watch: a MODIFIED event is cut down too.
    api!.patch('Group', NS, 'g', { metadata: { annotations: { extra: 'x' } }, spec: { models: ['m', 'n'] } });
    await rec.waitFor((x) => (find(x, 'Group', 'g', NS) as any)?.spec.models.length === 2, 3000, 'the modified group');
    check(find(rec.latest!, 'Group', 'g', NS));
  });

  it('restarts a paginated list whose continue token expired (410), keeping every object', async () => {
    const { api, source, rec } = await setup({ pageSize: 2 });
    for (let i = 0; i < 5; i++) apply(o.group(`g${i}`, []));
    // The second page (the first request with a continue token) is refused as expired.
    api.failRequests({ resource: 'groups', verb: 'list' }, 410, 0);
    const rule = api.failures.at(-1)!;
    let lists = 0;
    const orig = api.requests.push.bind(api.requests);
    api.requests.push = (...r) => {
      for (const x of r) if (x.resource === 'groups' && x.verb === 'list' && ++lists === 2) rule.remaining = 1;
      return orig(...r);
    };
    await source.start(rec.onSnapshot);
    expect(names(rec.latest!, 'Group')).toEqual(['g0', 'g1', 'g2', 'g3', 'g4']);
    expect(source.stats().find((x) => x.resource.startsWith('groups'))!.stats.errors).toBe(0);
  });

  it('is not synced, and delivers no snapshot, until every initial list has succeeded', async () => {
    const { api, source, rec } = await setup();
    apply(o.group('g', []));
    api.failRequests({ resource: 'gatewaytokens', verb: 'list' }, 500, 3);
    let resolved = false;
    const started = source.start(rec.onSnapshot).then(() => (resolved = true));
    await waitUntil(() => api.requests.filter((r) => r.resource === 'gatewaytokens' && r.verb === 'list').length >= 2);
    expect(source.synced).toBe(false);
    expect(resolved).toBe(false);
    expect(rec.snapshots).toHaveLength(0);
    await started;
    expect(source.synced).toBe(true);
    expect(names(rec.snapshots[0]!, 'Group')).toEqual(['g']);
  });

  it('tells the operator which list its RBAC forbids (403), and that the gateway stays not ready until it succeeds', async () => {
    const logs = captureLogs();
    const { api, source, rec } = await setup({ logger: logs.logger });
    api.failRequests({ resource: 'secrets', verb: 'list' }, 403, 2);
    await source.start(rec.onSnapshot);
    const warnings = logs.records.filter((r) => r.level === 40);
    expect(warnings.length).toBeGreaterThanOrEqual(2);
    expect(warnings[0]).toMatchObject({
      msg: 'kubernetes list failed; not ready until every initial list succeeds; retrying',
      resource: `secrets (modelgateway.io/secret=true) in ${NS}`,
      err: `GET /api/v1/namespaces/${NS}/secrets: HTTP 403`,
      hint: `forbidden: the gateway's RBAC does not allow list and watch of secrets (modelgateway.io/secret=true) in ${NS}`,
    });
  });

  it('keeps the last snapshot while the API server is unreachable, then catches up', async () => {
    const { api, source, rec } = await setup();
    apply(o.route('r', 'm1'));
    await source.start(rec.onSnapshot);
    const before = rec.snapshots.length;
    api.setUnreachable(true);
    await waitUntil(() => source.stats().some((s) => s.stats.errors > 0));
    expect(rec.snapshots.length).toBe(before); // nothing replaced the last good snapshot
    expect(source.lookup('ModelRoute', NS, 'r')).toBeDefined();
    apply(o.route('r', 'm2')); // changed while the gateway could not see it
    api.setUnreachable(false);
    await rec.waitFor((s) => (find(s, 'ModelRoute', 'r', NS) as any)?.spec.model === 'm2', 5000, 'the change made during the outage');
  });

  it('resumes a dropped watch from its last resourceVersion without relisting', async () => {
    const { api, source, rec } = await setup();
    await source.start(rec.onSnapshot);
    await waitUntil(() => api.openWatches === 4);
    apply(o.group('g1', []));
    await rec.waitFor((s) => names(s, 'Group').includes('g1'));
    const listsBefore = api.recorded('list').length;
    const rv = api.get('Group', NS, 'g1')!.metadata.resourceVersion;
    expect(api.dropWatches()).toBe(4);
    apply(o.group('g2', []));
    await rec.waitFor((s) => names(s, 'Group').includes('g2'));
    expect(api.recorded('list').length).toBe(listsBefore);
    const rewatch = api.requests.filter((r) => r.resource === 'groups' && r.verb === 'watch').at(-1)!;
    expect(rewatch.query.resourceVersion).toBe(rv);
    expect(rewatch.query.allowWatchBookmarks).toBe('true');
  });

  for (const mode of ['event', 'http'] as const) {
    it(`410 Gone (${mode === 'event' ? 'ERROR event in the stream' : 'HTTP 410'}) → relist without losing objects`, async () => {
      const { api, source, rec } = await setup({}, { expiredWatch: mode });
      for (const n of ['a', 'b', 'c']) apply(o.group(n, []));
      await source.start(rec.onSnapshot);
      // Changes the gateway misses, then compaction: the history it would resume from is gone.
      api.dropWatches();
      api.setUnreachable(true);
      await waitUntil(() => source.stats().some((s) => s.stats.errors > 0));
      apply(o.group('d', []));
      api.remove('Group', NS, 'a');
      api.store.compact();
      const seen = rec.snapshots.length;
      api.setUnreachable(false);
      await rec.waitFor((s) => names(s, 'Group').join() === 'b,c,d', 5000, 'the relisted state');
      expect(source.stats().find((s) => s.resource.startsWith('groups'))!.stats.expired).toBeGreaterThanOrEqual(1);
      // No snapshot in between lost the objects that never went away.
      for (const s of rec.snapshots.slice(seen)) expect(names(s, 'Group')).toEqual(expect.arrayContaining(['b', 'c']));
    });
  }

  it('a relist after 410 sees an object deleted and created again (same generation, new spec) while it was away', async () => {
    const { api, source, rec } = await setup({}, { expiredWatch: 'http' });
    apply(o.group('g', ['old-*']));
    await source.start(rec.onSnapshot);
    api.dropWatches();
    api.setUnreachable(true);
    await waitUntil(() => source.stats().some((s) => s.stats.errors > 0));
    // kubectl replace --force, or delete and apply: a new object with the same name, again at generation 1.
    api.remove('Group', NS, 'g');
    apply(o.group('g', ['new-*']));
    expect(api.get('Group', NS, 'g')!.metadata.generation).toBe(1);
    api.store.compact();
    api.setUnreachable(false);
    await rec.waitFor((s) => (find(s, 'Group', 'g', NS) as any)?.spec.models[0] === 'new-*', 5000, "the re-created Group's spec");
  });

  it('gives up on a list left unanswered (a silent connection) and lists again, instead of waiting for minutes', async () => {
    const { api, source, rec } = await setup({ requestTimeoutMs: 500 });
    apply(o.group('a', []));
    await source.start(rec.onSnapshot);
    await waitUntil(() => api.openWatches === 4);
    // The Groups relist after a 410 goes unanswered; the connection it went out on is never heard from again.
    const unstall = api.stallRequests({ resource: 'groups', verb: 'list' });
    const lists = api.recorded('list').length;
    api.sendWatchError(410, 'Group');
    await waitUntil(() => api.recorded('list').length > lists);
    apply(o.group('b', []));
    await new Promise((r) => setTimeout(r, 100));
    unstall(false);
    await rec.waitFor((s) => names(s, 'Group').join() === 'a,b', 5000, 'the Group applied while the list hung');
  });

  it('an ERROR 410 event on a live watch triggers a relist', async () => {
    const { api, source, rec } = await setup();
    apply(o.group('a', []));
    await source.start(rec.onSnapshot);
    await waitUntil(() => api.openWatches === 4);
    const lists = api.recorded('list').length;
    api.sendWatchError(410, 'Group');
    await waitUntil(() => api.recorded('list').length > lists);
    expect(api.requests.filter((r) => r.verb === 'list').at(-1)!.resource).toBe('groups');
    expect(names(rec.latest!, 'Group')).toEqual(['a']);
  });

  it('honours bookmarks: a watch resumed after a bookmark survives compaction without a relist', async () => {
    const { api, source, rec } = await setup({}, { bookmarkIntervalMs: 0 });
    await source.start(rec.onSnapshot);
    await waitUntil(() => api.openWatches === 4);
    // Activity elsewhere moves the resourceVersion on; only a bookmark tells this watch about it.
    for (let i = 0; i < 3; i++) apply(contractObjects('elsewhere').group(`x${i}`, []));
    api.bookmark();
    const rv = String(api.store.resourceVersion);
    // The Groups watch has read the bookmark (it resumes from its resourceVersion) before the history is compacted.
    const bookmarks = () => source.stats().find((s) => s.resource.startsWith('groups'))!.stats.bookmarks;
    await waitUntil(() => bookmarks() >= 1, 5000, 'the Groups watch to read the bookmark');
    api.store.compact();
    const lists = api.recorded('list').length;
    api.dropWatches();
    await waitUntil(() => api.recorded('watch').filter((r) => r.resource === 'groups').length >= 2);
    apply(o.group('after', []));
    await rec.waitFor((s) => names(s, 'Group').includes('after'));
    expect(api.recorded('list').length).toBe(lists);
    expect(api.requests.filter((r) => r.resource === 'groups' && r.verb === 'watch').at(-1)!.query.resourceVersion).toBe(rv);
  });

  it('relists periodically, and an unchanged relist delivers no snapshot', async () => {
    const { api, source, rec } = await setup({ relistIntervalMs: 150 });
    apply(o.group('a', []));
    await source.start(rec.onSnapshot);
    const count = rec.snapshots.length;
    await waitUntil(() => api.recorded('list').filter((r) => r.resource === 'groups').length >= 3, 5000);
    expect(rec.snapshots.length).toBe(count);
  });

  it('does not deliver a snapshot for status-only changes (its own status writes)', async () => {
    const { api, source, rec } = await setup();
    apply(o.group('a', []));
    await source.start(rec.onSnapshot);
    const count = rec.snapshots.length;
    api.store.mergePatch(RESOURCE_TYPES.Group, NS, 'a', { status: { observedGeneration: 1 } }, 'status');
    await waitUntil(() => (source.lookup('Group', NS, 'a') as any)?.status?.observedGeneration === 1);
    await new Promise((r) => setTimeout(r, 100));
    expect(rec.snapshots.length).toBe(count);
  });

  it('rejects start() when stopped before the first sync', async () => {
    const { api, source, rec } = await setup();
    api.setUnreachable(true);
    const started = source.start(rec.onSnapshot);
    await source.stop();
    await expect(started).rejects.toThrow(/before its first complete sync/);
  });

  // Issue 12, item 18: after a long outage some kinds were not due to retry for 18-22 s after the server returned,
  // and a change made then took 6-16 s to show; the target is 2 s. The outage lasts until every reflector's backoff
  // has grown past the target (here up to 8 s instead of production's 30 s, to keep it short) and ends just after
  // the last reflector failed, when its own next retry is at least 3.2 s away: without a shared "server is back"
  // signal its kind cannot show within 2 s. The probe and wake-up timings are the production defaults. The backoff
  // starts at 1.6 s without jitter, so that two failures get there (from 100 ms it took seven, and twice as long).
  describe.each<Outage>(['refused', '503'])('after an outage (connections %s)', (how) => {
    const FAILURES = 2; // 1.6 s doubling, no jitter: the 2nd failure's delay is 3.2 s
    it("a change to every kind made at the server's return shows within 2 s", async () => {
      const { api, source, rec } = await setup({ backoff: { initialMs: 1600, maxMs: 8000, jitter: 0 } });
      applyEveryKind(api, NS);
      await source.start(rec.onSnapshot);
      await waitUntil(() => api.openWatches === 4, 5000, 'four open watches');
      await goDown(api, how);
      await waitUntil(() => source.stats().every((s) => s.stats.errors >= FAILURES), 30_000, `${FAILURES} failures of every reflector`);
      await comeBack(api, how);
      const seen = await changeEveryKind(api, rec, NS, 15_000);
      console.info(`after an outage (${how}) every kind's change showed within ${Math.max(...Object.values(seen))} ms: ${JSON.stringify(seen)}`);
      expect(Math.max(...Object.values(seen))).toBeLessThanOrEqual(2000);
    }, 60_000);
  });

  // Found against a real kube-apiserver (test/envtest/outage.test.ts): restarted, it answered one list 403 before
  // its RBAC authorizer had synced. That 403 is not an outage error, so the reflector waited out the delay its
  // outage failures had grown to, and its kind stayed stale for seconds after the server was back.
  it('a 403 from a server just back from an outage is retried after the first delay, not the outage-grown one', async () => {
    // Without jitter, six failures grow every reflector's next delay to 3.2 s, past the 2 s target.
    const { api, source, rec } = await setup({ backoff: { initialMs: 100, maxMs: 8000, jitter: 0 } });
    applyEveryKind(api, NS);
    await source.start(rec.onSnapshot);
    await waitUntil(() => api.openWatches === 4, 5000, 'four open watches');
    await goDown(api, 'refused');
    await waitUntil(() => source.stats().every((s) => s.stats.errors >= 6), 30_000, '6 failures of every reflector');
    // The first request after the return (a probe, before any success has woken the others) gets the 403.
    const forbidden = api.failRequests({}, 403, 1);
    await comeBack(api, 'refused');
    const seen = await changeEveryKind(api, rec, NS, 15_000);
    expect(forbidden.remaining).toBe(0); // the 403 was given
    expect(Math.max(...Object.values(seen))).toBeLessThanOrEqual(2000);
  }, 60_000);
});
