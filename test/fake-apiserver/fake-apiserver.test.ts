// The fake API server's own protocol behaviour, through the real @kubernetes/client-node API classes, so the
// other tests can trust what it does.
import { CoordinationV1Api, CustomObjectsApi, PatchStrategy, setHeaderOptions, V1MicroTime } from '@kubernetes/client-node';
import { afterEach, describe, expect, it } from 'vitest';
import { parseLabelSelector } from './label-selector.js';
import { kubeConfigFor } from './kubeconfig.js';
import { FakeApiServer } from './server.js';

let api: FakeApiServer;
afterEach(async () => api?.stop());

const group = (name: string, models: string[] = []) => ({
  apiVersion: 'modelgateway.io/v1alpha1',
  kind: 'Group',
  metadata: { name, namespace: 'ns' },
  spec: { models },
});
const ref = { group: 'modelgateway.io', version: 'v1alpha1', namespace: 'ns', plural: 'groups' };
const codeOf = async (p: Promise<unknown>) =>
  p.then(
    () => 200,
    (e: { code?: number }) => e.code,
  );

describe('fake API server', () => {
  it('lists with a resourceVersion and bumps generation on spec changes only', async () => {
    api = new FakeApiServer();
    const crd = kubeConfigFor(await api.start()).makeApiClient(CustomObjectsApi);
    api.apply(group('g'));
    const list = (await crd.listNamespacedCustomObject(ref)) as any;
    expect(list.metadata.resourceVersion).toMatch(/^\d+$/);
    expect(list.items[0].metadata.generation).toBe(1);
    api.apply(group('g', ['x']));
    const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
    const patched = (await crd.patchNamespacedCustomObjectStatus({ ...ref, name: 'g', body: { status: { observedGeneration: 2 } } }, merge)) as any;
    expect(patched.metadata.generation).toBe(2);
    expect(patched.status).toEqual({ observedGeneration: 2 });
    expect(patched.spec).toEqual({ models: ['x'] });
    // A status write with a stale resourceVersion is a conflict; a json-patch content type is refused.
    expect(await codeOf(crd.patchNamespacedCustomObjectStatus({ ...ref, name: 'g', body: { metadata: { resourceVersion: '1' }, status: {} } }, merge))).toBe(
      409,
    );
    expect(await codeOf(crd.patchNamespacedCustomObjectStatus({ ...ref, name: 'g', body: [] }))).toBe(415);
    // Status in a main-resource update is ignored, as with a real status subresource.
    api.apply({ ...group('g', ['y']), status: { observedGeneration: 99 } } as never);
    expect((api.get('Group', 'ns', 'g')!.status as any).observedGeneration).toBe(2);
  });

  it('serves Leases with create conflicts, resourceVersion conflicts and MicroTime checks', async () => {
    api = new FakeApiServer();
    const leases = kubeConfigFor(await api.start()).makeApiClient(CoordinationV1Api);
    const body = { metadata: { name: 'l' }, spec: { holderIdentity: 'a', renewTime: new V1MicroTime() } };
    expect(await codeOf(leases.readNamespacedLease({ name: 'l', namespace: 'ns' }))).toBe(404);
    await leases.createNamespacedLease({ namespace: 'ns', body });
    expect(await codeOf(leases.createNamespacedLease({ namespace: 'ns', body }))).toBe(409);
    const got = await leases.readNamespacedLease({ name: 'l', namespace: 'ns' });
    await leases.replaceNamespacedLease({ name: 'l', namespace: 'ns', body: { ...got, spec: { ...got.spec, holderIdentity: 'b' } } });
    expect(await codeOf(leases.replaceNamespacedLease({ name: 'l', namespace: 'ns', body: { ...got, spec: { holderIdentity: 'c' } } }))).toBe(409);
    const bad = { ...body, metadata: { name: 'm' }, spec: { renewTime: '2026-01-01T00:00:00.123Z' as never } };
    expect(await codeOf(leases.createNamespacedLease({ namespace: 'ns', body: bad }))).toBe(400);
  });

  it("fills in the CRDs' defaults, as a real API server does, and leaves given values alone", () => {
    api = new FakeApiServer();
    const gv = 'modelgateway.io/v1alpha1';
    api.apply({ apiVersion: gv, kind: 'GatewayToken', metadata: { name: 't', namespace: 'ns' }, spec: { group: 'g', sha256: 'a'.repeat(64) } });
    api.apply({ apiVersion: gv, kind: 'GatewayToken', metadata: { name: 'u', namespace: 'ns' }, spec: { group: 'g', sha256: 'b'.repeat(64), disabled: true } });
    api.apply({
      apiVersion: gv,
      kind: 'ModelRoute',
      metadata: { name: 'm', namespace: 'ns' },
      spec: {
        backends: [
          { name: 'a', baseURL: 'http://127.0.0.1:9/v1' },
          { name: 'b', baseURL: 'http://127.0.0.1:10/v1', priority: 1, weight: 3 },
        ],
      },
    });
    expect((api.get('GatewayToken', 'ns', 't')!.spec as any).disabled).toBe(false);
    expect((api.get('GatewayToken', 'ns', 'u')!.spec as any).disabled).toBe(true);
    expect((api.get('ModelRoute', 'ns', 'm')!.spec as any).backends).toEqual([
      { name: 'a', baseURL: 'http://127.0.0.1:9/v1', priority: 0, weight: 1 },
      { name: 'b', baseURL: 'http://127.0.0.1:10/v1', priority: 1, weight: 3 },
    ]);
  });

  it('parses label selectors as the API server does', () => {
    const m = parseLabelSelector('a=1,b!=2,c in (x, y),!d,e');
    expect(m({ a: '1', c: 'x', e: '' })).toBe(true);
    expect(m({ a: '1', c: 'z', e: '' })).toBe(false);
    expect(m({ a: '1', c: 'x', d: '', e: '' })).toBe(false);
    expect(m({ a: '1', b: '2', c: 'y', e: '' })).toBe(false);
    expect(parseLabelSelector('k notin (v)')({ k: 'w' })).toBe(true);
  });

  it('records every request with its RBAC verb and can fail requests on demand', async () => {
    api = new FakeApiServer();
    const crd = kubeConfigFor(await api.start()).makeApiClient(CustomObjectsApi);
    api.failRequests({ verb: 'list', resource: 'groups' }, 503, 1);
    expect(await codeOf(crd.listNamespacedCustomObject(ref))).toBe(503);
    expect(await codeOf(crd.listNamespacedCustomObject(ref))).toBe(200);
    expect(api.requests.map((r) => [r.verb, r.apiGroup, r.resource, r.namespace])).toEqual([
      ['list', 'modelgateway.io', 'groups', 'ns'],
      ['list', 'modelgateway.io', 'groups', 'ns'],
    ]);
  });
});
