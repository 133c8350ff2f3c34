import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { compile } from '../../compile/compile.js';
import { sha256Hex } from '../../model/digest.js';
import type { RawObject } from '../../compile/resources.js';
import type { RoutingTable } from '../../model/routing-table.js';
import { sealId } from './id-rewrite.js';
import { continuationBackend, resolveOwned } from './owned-object.js';
import { IdSealer } from './sealed-id.js';

const meta = (name: string) => ({ name, namespace: 'ns' });
const obj = (kind: string, name: string, spec: Record<string, unknown>): RawObject => ({
  apiVersion: 'modelgateway.io/v1alpha1',
  kind,
  metadata: meta(name),
  spec,
});
const up = (name: string, baseURL = 'http://127.0.0.1:9/v1') => ({ name, baseURL });

function table(groupModels: string[], extra: RawObject[] = []): RoutingTable {
  return compile(
    [
      obj('ModelRoute', 'sora', { model: 'sora-2', endpoints: ['videos'], backends: [up('a'), up('b', 'http://127.0.0.1:10/v1')] }),
      obj('ModelRoute', 'mini', { model: 'gpt-mini', endpoints: ['responses'], backends: [up('a')] }),
      obj('ModelRoute', 'big', { model: 'gpt-big', endpoints: ['responses'], backends: [up('other', 'http://127.0.0.1:11/v1'), up('same')] }),
      obj('ModelRoute', 'chat', { model: 'chat-only', endpoints: ['chat.completions'], backends: [up('a')] }),
      obj('Group', 'g', { models: groupModels }),
      obj('GatewayToken', 'alice', { group: 'g', sha256: sha256Hex('alice') }),
      obj('GatewayToken', 'bob', { group: 'g', sha256: sha256Hex('bob') }),
      ...extra,
    ].map((object) => ({ object })),
  ).table;
}
const tok = (t: RoutingTable, key: string) => t.tokensByDigest.get(sha256Hex(key))!;

const sealer = new IdSealer([randomBytes(32)]);
const all = ['sora-2', 'gpt-mini', 'gpt-big', 'chat-only'];

describe('resolveOwned', () => {
  const t = table(all);
  const alice = tok(t, 'alice');
  const vid = sealId({ sealer, model: 'sora-2', backend: 'b', owner: alice.ref }, 'video', 'video_123');

  it('resolves the owner’s id to its route and backend', () => {
    const o = resolveOwned(t, alice, sealer, 'video', vid);
    expect(o?.ref.upstreamId).toBe('video_123');
    expect(o?.route.model).toBe('sora-2');
    expect(o?.backend.name).toBe('b');
    expect(o?.backend.baseURL).toBe('http://127.0.0.1:10/v1');
  });

  it('refuses another token, the wrong kind, a foreign key and a lost group membership', () => {
    expect(resolveOwned(t, tok(t, 'bob'), sealer, 'video', vid)).toBeUndefined();
    expect(resolveOwned(t, alice, sealer, 'response', vid)).toBeUndefined();
    expect(resolveOwned(t, alice, new IdSealer([randomBytes(32)]), 'video', vid)).toBeUndefined();
    const narrowed = table(['gpt-mini']);
    expect(resolveOwned(narrowed, tok(narrowed, 'alice'), sealer, 'video', vid)).toBeUndefined();
  });

  it('refuses when the backend is gone or the route no longer serves the family', () => {
    const gone = sealId({ sealer, model: 'sora-2', backend: 'removed', owner: alice.ref }, 'video', 'video_1');
    expect(resolveOwned(t, alice, sealer, 'video', gone)).toBeUndefined();
    const wrongFamily = sealId({ sealer, model: 'chat-only', backend: 'a', owner: alice.ref }, 'response', 'resp_1');
    expect(resolveOwned(t, alice, sealer, 'response', wrongFamily)).toBeUndefined();
  });
});

describe('continuationBackend', () => {
  const t = table(all);
  const alice = tok(t, 'alice');
  const prev = resolveOwned(t, alice, sealer, 'response', sealId({ sealer, model: 'gpt-mini', backend: 'a', owner: alice.ref }, 'response', 'resp_9'))!;

  it('pins the same model to the same backend, another model to a backend with the same upstream and credential', () => {
    expect(continuationBackend(prev, t.routes.get('gpt-mini')!)?.name).toBe('a');
    expect(continuationBackend(prev, t.routes.get('gpt-big')!)?.name).toBe('same');
    const t2 = table(all);
    const noMatch = { ...t2.routes.get('gpt-big')!, backends: t2.routes.get('gpt-big')!.backends.filter((b) => b.name === 'other') };
    expect(continuationBackend(prev, noMatch)).toBeUndefined();
  });
});
