// Status conditions written back through the status subresource, against the fake API server with the real client.
import { afterEach, describe, expect, it } from 'vitest';
import { FakeApiServer } from '../fake-apiserver/server.js';
import type { KubeObj } from '../fake-apiserver/store.js';
import { startPipeline, type Pipeline } from './kubernetes-pipeline.js';
import { contractObjects } from './source-contract.js';
import { waitUntil } from '../support/wait.js';

const NS = 'team-a';
const o = contractObjects(NS);
let api: FakeApiServer;
let pipes: Pipeline[] = [];

afterEach(async () => {
  for (const p of pipes) await p.stop();
  pipes = [];
  await api?.stop();
});

async function setup(opts: { qps?: number; burst?: number } = {}) {
  api = new FakeApiServer();
  await api.start();
  const apply = (x: unknown) => api.apply(x as KubeObj);
  const start = async () => {
    const p = await startPipeline(api, { namespace: NS, ...opts });
    pipes.push(p);
    return p;
  };
  return { apply, start };
}

type Cond = { type: string; status: string; reason: string; message: string; observedGeneration?: number; lastTransitionTime: string };
const statusOf = (kind: 'ModelRoute' | 'Group' | 'GatewayToken', name: string) =>
  api.get(kind, NS, name)?.status as { observedGeneration?: number; conditions?: Cond[]; warnings?: string[] } | undefined;
const cond = (kind: 'ModelRoute' | 'Group' | 'GatewayToken', name: string, type: string) => statusOf(kind, name)?.conditions?.find((c) => c.type === type);
const statusPatches = () => api.requests.filter((r) => r.verb === 'patch' && r.subresource === 'status');

describe('status writer', () => {
  it('writes Accepted, ResolvedRefs and Ready with reasons, observedGeneration and lastTransitionTime', async () => {
    const { apply, start } = await setup();
    apply(o.secret('alice-key', 'sk-alice-secret-value'));
    apply(o.route('r', 'model-r'));
    apply(o.group('g', ['model-*', 'nothing-*']));
    apply(o.token('alice', 'g', 'alice-key'));
    apply(o.token('bob', 'g', 'missing-key'));
    apply(o.token('carol', 'no-such-group', 'alice-key'));
    await start();
    await waitUntil(() => ['alice', 'bob', 'carol'].every((n) => cond('GatewayToken', n, 'Ready')));
    await waitUntil(() => cond('Group', 'g', 'Ready') !== undefined && cond('ModelRoute', 'r', 'Ready') !== undefined);
    expect(cond('ModelRoute', 'r', 'Ready')).toMatchObject({ status: 'True', reason: 'Ready', observedGeneration: 1 });
    expect(cond('ModelRoute', 'r', 'Accepted')).toMatchObject({ status: 'True', reason: 'Accepted' });
    expect(statusOf('ModelRoute', 'r')?.observedGeneration).toBe(1);
    expect(cond('GatewayToken', 'alice', 'Ready')).toMatchObject({ status: 'True', reason: 'Ready' });
    expect(cond('GatewayToken', 'bob', 'ResolvedRefs')).toMatchObject({ status: 'False', reason: 'SecretNotFound' });
    expect(cond('GatewayToken', 'bob', 'Ready')).toMatchObject({ status: 'False', reason: 'RefsNotResolved' });
    expect(cond('GatewayToken', 'carol', 'ResolvedRefs')).toMatchObject({ status: 'False', reason: 'GroupNotFound' });
    expect(statusOf('Group', 'g')?.warnings).toEqual(['model pattern "nothing-*" matches no served model']);
    expect(cond('GatewayToken', 'alice', 'Ready')!.lastTransitionTime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    // Secret values never reach a status.
    for (const r of statusPatches()) expect(JSON.stringify(r.body)).not.toContain('sk-alice-secret-value');
    // Every write went through the status subresource as a merge patch, guarded by resourceVersion.
    for (const r of statusPatches()) expect((r.body as { metadata?: { resourceVersion?: string } }).metadata?.resourceVersion).toMatch(/^\d+$/);
  });

  it('writes only when something changed, and keeps lastTransitionTime while the status holds', async () => {
    const { apply, start } = await setup();
    apply(o.route('r', 'model-r'));
    apply(o.group('g', ['model-r']));
    const p = await start();
    await waitUntil(() => cond('Group', 'g', 'Ready') !== undefined && cond('ModelRoute', 'r', 'Ready') !== undefined);
    await p.status.writer.idle();
    const writes = statusPatches().length;
    expect(writes).toBe(2);
    const ltt = cond('Group', 'g', 'Ready')!.lastTransitionTime;
    // An unrelated change recompiles everything; nothing about r or g changed, so nothing is written.
    apply(o.group('other', ['model-r']));
    await waitUntil(() => cond('Group', 'other', 'Ready') !== undefined);
    await p.status.writer.idle();
    expect(statusPatches().filter((r) => r.name !== 'other')).toHaveLength(writes);
    // A spec change with the same outcome: new observedGeneration, same lastTransitionTime.
    await new Promise((r) => setTimeout(r, 1100)); // so a moved lastTransitionTime would show
    apply(o.group('g', ['model-r', 'model-*']));
    await waitUntil(() => cond('Group', 'g', 'Ready')?.observedGeneration === 2);
    expect(cond('Group', 'g', 'Ready')!.lastTransitionTime).toBe(ltt);
  });

  it('retries a 409 conflict after re-reading the object', async () => {
    const { apply, start } = await setup();
    apply(o.group('g', []));
    api.failRequests({ verb: 'patch', subresource: 'status', name: 'g' }, 409, 1);
    const p = await start();
    await waitUntil(() => cond('Group', 'g', 'Ready')?.status === 'True');
    expect(p.status.writer.stats.conflicts).toBe(1);
    expect(api.requests.some((r) => r.verb === 'get' && r.resource === 'groups' && r.name === 'g')).toBe(true);
  });

  it('retries later when the API server fails a write', async () => {
    const { apply, start } = await setup();
    apply(o.group('g', []));
    api.failRequests({ verb: 'patch', subresource: 'status' }, 503, 1);
    const p = await start();
    await waitUntil(() => cond('Group', 'g', 'Ready')?.status === 'True', 5000);
    expect(p.status.writer.stats.errors).toBe(1);
  });

  it('drains thousands of changes through a rate-limited queue, each object once', async () => {
    const { apply, start } = await setup({ qps: 100, burst: 10 });
    const n = 120;
    for (let i = 0; i < n; i++) apply(o.group(`g${i}`, []));
    const p = await start();
    await waitUntil(() => statusPatches().length >= n, 10_000);
    await p.status.writer.idle();
    const patches = statusPatches();
    expect(patches).toHaveLength(n);
    expect(new Set(patches.map((r) => r.name)).size).toBe(n);
    // Never more than burst + rate × elapsed writes in any window.
    const times = patches.map((r) => r.at).sort((a, b) => a - b);
    for (let i = 0; i < times.length; i++) {
      for (let j = i; j < times.length; j++) {
        const allowed = 10 + Math.ceil(((times[j]! - times[i]!) / 1000) * 100) + 1;
        expect(j - i + 1).toBeLessThanOrEqual(allowed);
      }
    }
    expect(times.at(-1)! - times[0]!).toBeGreaterThanOrEqual(((n - 10) / 100) * 1000 * 0.9);
  });
});
